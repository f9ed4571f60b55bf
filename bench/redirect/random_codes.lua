-- wrk script for bench/redirect/run.ts: GET /<prefix><n> for n in 1..BENCH_CODES, uniformly at random
-- (BENCH_ORDER=random) or in order, wrapping (BENCH_ORDER=seq, to warm every code once). Prints one JSON line.
--
-- BENCH_USER_AGENT: sent with every request (a browser's, so the server counts human clicks).
-- BENCH_ACCEPT_LANGUAGES: `|`-separated Accept-Language values; each request sends one of them at random (the
-- routing-rules path); unset, no Accept-Language is sent.
-- BENCH_CLICKS_FROM / BENCH_CLICKS_UNTIL (epoch seconds; `long` mode's exact click accounting): from UNTIL on,
-- every request is GET /_bench_stop instead, which any server answers 404 without a lookup or a click. wrk is
-- run a little longer than UNTIL, so no code request is still in flight when wrk stops: the 301s wrk counted
-- (requests - status errors) are then every redirect the server answered. Code requests are also counted per
-- BENCH_SAMPLE_SECONDS-long bucket since FROM (requests sent, i.e. throughput per sample as wrk saw it).
local prefix = os.getenv("BENCH_PREFIX") or "bk"
local count = tonumber(os.getenv("BENCH_CODES") or "1000")
local ordered = os.getenv("BENCH_ORDER") == "seq"
local agent = os.getenv("BENCH_USER_AGENT") or ""
local languages = os.getenv("BENCH_ACCEPT_LANGUAGES") or ""
local clicks_from = tonumber(os.getenv("BENCH_CLICKS_FROM") or "")
local clicks_until = tonumber(os.getenv("BENCH_CLICKS_UNTIL") or "")
local sample_seconds = tonumber(os.getenv("BENCH_SAMPLE_SECONDS") or "60")
local next_code = 0
local threads = {}
local before_code, after_code, stop_request
-- With BENCH_ACCEPT_LANGUAGES: one request prefix per language, chosen at random per request.
local befores = {}

-- Read from done() through thread:get (globals of each thread's own Lua state).
stops = 0
buckets = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
  local headers = {}
  if agent ~= "" then headers["User-Agent"] = agent end
  -- wrk.format once, split around the code: each request is then two concatenations, not a format call.
  local sample = wrk.format("GET", "/@CODE@", headers)
  local at = sample:find("@CODE@", 1, true)
  before_code = sample:sub(1, at - 1)
  after_code = sample:sub(at + 6)
  stop_request = before_code .. "_bench_stop" .. after_code
  for language in languages:gmatch("[^|]+") do
    headers["Accept-Language"] = language
    local s = wrk.format("GET", "/@CODE@", headers)
    befores[#befores + 1] = s:sub(1, s:find("@CODE@", 1, true) - 1)
  end
end

local function next_n()
  if ordered then
    next_code = next_code % count + 1
    return next_code
  end
  return math.random(1, count)
end

function request()
  if clicks_until then
    local now = os.time()
    if now >= clicks_until then
      stops = stops + 1
      return stop_request
    end
    local b = math.max(0, math.floor((now - clicks_from) / sample_seconds))
    buckets[b] = (buckets[b] or 0) + 1
  end
  if #befores > 0 then
    return befores[math.random(1, #befores)] .. prefix .. next_n() .. after_code
  end
  return before_code .. prefix .. next_n() .. after_code
end

function done(summary, latency, requests)
  local e = summary.errors
  local stopped = 0
  local merged = {}
  local last = -1
  for _, thread in ipairs(threads) do
    stopped = stopped + (thread:get("stops") or 0)
    for b, n in pairs(thread:get("buckets") or {}) do
      merged[b] = (merged[b] or 0) + n
      if b > last then last = b end
    end
  end
  local sent = {}
  for b = 0, last do sent[#sent + 1] = tostring(merged[b] or 0) end
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"mean_us":%.1f,"non_3xx":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,' ..
    '"stops_sent":%d,"sent_per_sample":[%s]}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean, e.status, e.connect, e.read, e.write, e.timeout,
    stopped, table.concat(sent, ",")))
end
