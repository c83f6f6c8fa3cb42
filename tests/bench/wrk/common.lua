-- Shared by every benchmark script. Each wrk thread walks its own slice of a pool of
-- prepared session ids (prefix + zero-padded number), so first-useful and not_useful
-- requests never repeat a session. Configured through BENCH_* environment variables.
-- done() prints one line "BENCH_JSON {...}" that tests/bench/load.py parses.

local env = os.getenv
prefix = env("BENCH_PREFIX")
width = tonumber(env("BENCH_WIDTH"))
pool_start = tonumber(env("BENCH_START"))
pool_count = tonumber(env("BENCH_COUNT"))
nthreads = tonumber(env("BENCH_THREADS"))
nonce = env("BENCH_NONCE") or "0"
headers = { ["Content-Type"] = "application/json" }
if env("BENCH_KEY") then
  headers["Authorization"] = "Api-Key " .. env("BENCH_KEY")
end

local threads = {}
local thread_count = 0

function setup(thread)
  thread:set("tid", thread_count)
  thread_count = thread_count + 1
  table.insert(threads, thread)
end

function init(args)
  local per = math.floor(pool_count / nthreads)
  first = pool_start + tid * per
  last = first + per - 1
  cursor = first
  sent = 0
  wrapped = 0
  non2xx = 0
  server_errors = 0
end

-- The next session id of this thread's slice; wraps (and counts it) when exhausted.
function next_session()
  local n = cursor
  last_number = n
  cursor = cursor + 1
  if cursor > last then
    cursor = first
    wrapped = wrapped + 1
  end
  sent = sent + 1
  return string.format("%s%0" .. width .. "d", prefix, n)
end

function response(status, hdrs, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
  end
  if status >= 500 then
    server_errors = server_errors + 1
  end
end

function done(summary, latency, requests)
  local n2, s5, wr = 0, 0, 0
  for _, t in ipairs(threads) do
    n2 = n2 + t:get("non2xx")
    s5 = s5 + t:get("server_errors")
    wr = wr + t:get("wrapped")
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests": %d, "duration_us": %d, "bytes": %d, '
      .. '"p50_us": %d, "p90_us": %d, "p99_us": %d, "max_us": %d, "mean_us": %.1f, '
      .. '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, '
      .. '"non2xx": %d, "server_errors": %d, "wrapped": %d}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    latency.mean, e.connect, e.read, e.write, e.status, e.timeout, n2, s5, wr))
end

-- A batch of tool invocations with ids unique to this run, thread and request.
function invocation_batch(size)
  local items = {}
  local levels = { "L0", "L1", "NONE", "L1" }
  for i = 1, size do
    local id = string.format("w%s-%d-%d-%d", nonce, tid, sent, i)
    local item
    if i % 4 == 0 then
      item = string.format(
        '{"invocationId":"%s","toolName":"QueryMetricsTools","kind":"other",'
          .. '"status":"SUCCESS","durationMs":120,"query":"rate(http_requests_total[5m])"}', id)
    elseif i % 11 == 0 then
      item = string.format(
        '{"invocationId":"%s","toolName":"QueryInternalDocsTools","status":"FAILED",'
          .. '"errorMessage":"timeout after 3000 ms","durationMs":3000}', id)
    else
      item = string.format(
        '{"invocationId":"%s","toolName":"QueryInternalDocsTools","status":"SUCCESS",'
          .. '"matchLevel":"%s","hitCount":3,"durationMs":85,'
          .. '"query":"order-service 504 runbook"}', id, levels[i % 4])
    end
    items[i] = item
  end
  return "[" .. table.concat(items, ",") .. "]"
end
