-- POST /api/feedback not_useful with `Authorization: Feedback <token>` on the next session
-- of this thread's slice; BENCH_TOKENS names a file with one token per pool session.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
local tokens = {}
for line in io.lines(os.getenv("BENCH_TOKENS")) do
  tokens[#tokens + 1] = line
end

function request()
  local session = next_session()
  local h = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Feedback " .. tokens[last_number + 1],
  }
  local body = string.format('{"sessionId":"%s","feedback":"not_useful"}', session)
  return wrk.format("POST", "/api/feedback", h, body)
end
