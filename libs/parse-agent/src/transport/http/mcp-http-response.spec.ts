import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { success } from '../../core/envelope';
import { buildNextCall, formatQueryResult } from '../../format/query-result';
import { toCallToolResult, unwrapUntrusted } from '../../mcp/tool-call-result';
import { sendJson } from './mcp-http-response';

/** Serves one body with sendJson on a real socket and reads back the raw answer. */
async function served(body: unknown): Promise<{ headers: http.IncomingHttpHeaders; raw: Buffer }> {
  const server = http.createServer((_req, res) => sendJson(res, 200, body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ headers: res.headers, raw: Buffer.concat(chunks) }));
        })
        .on('error', reject);
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('sendJson', () => {
  const rows = Array.from({ length: 60 }, (_, i) => ({
    objectId: `o${i}`,
    // Multi-byte text and characters JSON escapes, so byte and character counts differ.
    note: `café ✓ "${i}" \\ line\nnext 日本`,
  }));

  it('writes a call result in pieces with the exact Content-Length and the same JSON', async () => {
    const data = formatQueryResult({
      className: 'Note',
      results: rows,
      simplified: true,
      limit: 60,
      skip: 0,
      nextCall: buildNextCall({ className: 'Note', limit: 60, skip: 0 }),
    });
    const result = toCallToolResult(success(data), {
      toolName: 'query_class',
      outputSchema: { type: 'object' },
    });
    const message = { jsonrpc: '2.0', id: 'req-1', result };
    const { headers, raw } = await served(message);
    expect(headers['transfer-encoding']).toBeUndefined();
    expect(Number(headers['content-length'])).toBe(raw.length);
    const answer = JSON.parse(raw.toString('utf8'));
    expect(answer).toEqual(JSON.parse(JSON.stringify(message)));
    expect(JSON.parse(unwrapUntrusted(answer.result.content[0].text)).results).toEqual(rows);
    expect(answer.result.structuredContent.results).toEqual(rows);
  });

  it('writes an ordinary message as one body', async () => {
    const message = { jsonrpc: '2.0', id: 2, result: { text: 'é'.repeat(3000) } };
    const { headers, raw } = await served(message);
    expect(Number(headers['content-length'])).toBe(raw.length);
    expect(raw.toString('utf8')).toBe(JSON.stringify(message));
  });
});
