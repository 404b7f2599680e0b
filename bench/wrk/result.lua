-- Shared by the scripts of this folder (loaded with dofile): prints what wrk measured as
-- one line of JSON, which bench/wrk.ts reads. Latencies in microseconds, as wrk keeps
-- them; `non2xx` is wrk's "Non-2xx or 3xx responses" (every status of 400 or more), the
-- socket errors its "Socket errors". A script that counts statuses keeps them in a global
-- table `statuses` of its thread; they are summed over the threads here.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function done(summary, latency, requests)
  local statuses = {}
  for _, thread in ipairs(threads) do
    local counted = thread:get("statuses")
    if type(counted) == "table" then
      for status, count in pairs(counted) do
        local key = '"' .. tostring(status) .. '"'
        statuses[key] = (statuses[key] or 0) + count
      end
    end
  end
  local parts = {}
  for key, count in pairs(statuses) do
    table.insert(parts, key .. ":" .. count)
  end
  local errors = summary.errors
  io.write(string.format(
    '{"wrkResult":1,"requests":%d,"durationUs":%d,"bytes":%d,"non2xx":%d,'
      .. '"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"timeouts":%d,'
      .. '"p50Us":%d,"p90Us":%d,"p99Us":%d,"maxUs":%d,"statuses":{%s}}\n',
    summary.requests, summary.duration, summary.bytes, errors.status,
    errors.connect, errors.read, errors.write, errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    table.concat(parts, ",")))
end
