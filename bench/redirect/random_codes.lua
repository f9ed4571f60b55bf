-- wrk script for bench/redirect/run.ts: GET /<prefix><n> for n in 1..BENCH_CODES, uniformly at random
-- (BENCH_ORDER=random) or in order, wrapping (BENCH_ORDER=seq, to warm every code once). Prints one JSON line.
local prefix = os.getenv("BENCH_PREFIX") or "bk"
local count = tonumber(os.getenv("BENCH_CODES") or "1000")
local ordered = os.getenv("BENCH_ORDER") == "seq"
local next_code = 0

function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
end

function request()
  local n
  if ordered then
    next_code = next_code % count + 1
    n = next_code
  else
    n = math.random(1, count)
  end
  return wrk.format("GET", "/" .. prefix .. n)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"mean_us":%.1f,"non_3xx":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean, e.status, e.connect, e.read, e.write, e.timeout))
end
