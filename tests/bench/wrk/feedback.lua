-- POST /api/feedback on the next session of this thread's slice.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
local value = os.getenv("BENCH_FEEDBACK")

function request()
  local body = string.format('{"sessionId":"%s","feedback":"%s"}', next_session(), value)
  return wrk.format("POST", "/api/feedback", headers, body)
end
