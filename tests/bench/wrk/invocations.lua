-- POST a batch of BENCH_BATCH tool invocations to a RUNNING session of the pool; with
-- BENCH_PATH=/bench/bulk/ the same rows go to the bare bulk_create view instead.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
local batch = tonumber(os.getenv("BENCH_BATCH"))
local path = os.getenv("BENCH_PATH") or "/api/sessions/"
local suffix = path == "/api/sessions/" and "/tool-invocations" or ""

function request()
  local session = next_session()
  return wrk.format("POST", path .. session .. suffix, headers, invocation_batch(batch))
end
