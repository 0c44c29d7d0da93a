'use strict';
// A closed-loop HTTP load generator: `connections` workers, each sending its next request as soon
// as the previous answer is fully read, for `durationMs`. Keep-alive sockets, like real clients.
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

async function runLoad({ url, method = 'POST', headers = {}, body, connections, durationMs, check }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const payload = typeof body === 'string' ? Buffer.from(body) : body;
  const allHeaders = payload ? { ...headers, 'content-length': String(payload.length) } : headers;
  const latencies = [];
  let errors = 0;
  const deadline = Date.now() + durationMs;
  const started = process.hrtime.bigint();
  async function worker() {
    while (Date.now() < deadline) {
      const t0 = process.hrtime.bigint();
      try {
        const res = await request(agent, url, { method, headers: allHeaders, body: payload });
        if (res.status !== 200 || (check && !check(res.body))) errors++;
      } catch {
        errors++;
      }
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  await Promise.all(Array.from({ length: connections }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  return {
    requests: latencies.length,
    errors,
    rps: latencies.length / seconds,
    p50: pct(50),
    p99: pct(99),
  };
}

module.exports = { runLoad, request };
