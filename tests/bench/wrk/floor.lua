-- The floor: POST /bench/floor, one UPDATE by unique key, on the next session.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

function request()
  local body = string.format('{"sessionId":"%s"}', next_session())
  return wrk.format("POST", "/bench/floor", headers, body)
end
