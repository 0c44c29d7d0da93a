'use strict';
// Load generation for the benchmarks.
const http = require('node:http');

function request(agent, url, { method, headers, body }) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body) req.end(body);
    else req.end();
  });
}

/**
 * Closed-loop load with autocannon (its HTTP client costs far less CPU than node:http, so on a small
 * machine the server, not the load generator, is what gets measured). One request is sent first and
 * checked, so a run that only measures errors is reported as such.
 */
async function runLoad({
  url,
  method = 'POST',
  headers = {},
  body,
  connections,
  durationMs,
  check,
}) {
  const autocannon = require('autocannon');
  const payload = typeof body === 'string' ? Buffer.from(body) : body;
  const probe = await request(undefined, url, {
    method,
    headers: payload ? { ...headers, 'content-length': String(payload.length) } : headers,
    body: payload,
  });
  const probeOk = probe.status === 200 && (!check || check(probe.body));
  const result = await autocannon({
    url,
    method,
    headers,
    body: payload,
    connections,
    duration: durationMs / 1000,
  });
  const requests = result.requests.total;
  return {
    requests,
    errors: result.errors + result.timeouts + result.non2xx + (probeOk ? 0 : 1),
    rps: requests / (durationMs / 1000),
    p50: result.latency.p50,
    p99: result.latency.p99,
  };
}

/** CPU time (user + system, all threads) of a process so far, in ms (Linux /proc). */
function cpuMs(pid) {
  const fields = require('node:fs')
    .readFileSync(`/proc/${pid}/stat`, 'utf8')
    .split(') ')[1]
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
}

/** The middle value (the upper middle for an even count). */
function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

module.exports = { runLoad, request, median, cpuMs };
