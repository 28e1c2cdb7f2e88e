-- wrk report script for sizing: after wrk's own report, print one JSON line with the
-- latency distribution in microseconds (a fine CDF: the value at each percentile, from
-- wrk's HdrHistogram) and the counts, so that sizing can merge the distributions of all
-- clients weighted by their request counts instead of averaging percentiles.
-- Copied to clients by playbooks/clients.yml, used as `wrk -s wrk_report.lua ...`.

local percentiles = { 0.1, 0.5 }
for p = 1, 99 do
  percentiles[#percentiles + 1] = p
end
for _, p in ipairs({ 99.5, 99.9, 99.99 }) do
  percentiles[#percentiles + 1] = p
end

function done(summary, latency, requests)
  local cdf = {}
  for _, p in ipairs(percentiles) do
    cdf[#cdf + 1] = string.format("[%g,%.0f]", p, latency:percentile(p))
  end
  local e = summary.errors
  io.write(string.format(
    '\n{"sizing_wrk_report":1,"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"count":%d,"min":%.0f,"max":%.0f,"mean":%.3f,"stdev":%.3f,"cdf":[%s]}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    summary.requests, latency.min, latency.max, latency.mean, latency.stdev,
    table.concat(cdf, ",")))
end
