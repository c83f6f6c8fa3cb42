-- POST /api/cases/search, cycling through the request bodies in BENCH_BODIES (one JSON
-- object a line); each thread starts at its own offset.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local bodies = {}
for line in io.lines(os.getenv("BENCH_BODIES")) do
  if #line > 0 then table.insert(bodies, line) end
end

local position = 0

function request()
  position = position + 1
  local body = bodies[((position + tid * 7) % #bodies) + 1]
  sent = sent + 1
  return wrk.format("POST", "/api/cases/search", headers, body)
end
