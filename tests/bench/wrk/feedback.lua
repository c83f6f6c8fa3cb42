-- POST /api/feedback (or BENCH_PATH) on the next session of this thread's slice.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
local value = os.getenv("BENCH_FEEDBACK")
local path = os.getenv("BENCH_PATH") or "/api/feedback"

function request()
  local body = string.format('{"sessionId":"%s","feedback":"%s"}', next_session(), value)
  return wrk.format("POST", path, headers, body)
end
