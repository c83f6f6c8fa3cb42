-- GET /api/sessions/{id} over the generated sessions.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

function request()
  return wrk.format("GET", "/api/sessions/" .. next_session(), headers)
end
