'use strict';
// The reference for `npm run bench` measurement 1: the least work any MCP server in front of Parse
// must do to answer `query_class` with 100 rows, written as plainly as Node allows (node:http, no
// framework, no policy, no validation). It reads the JSON-RPC body, sends the same find to Parse
// REST on a keep-alive socket, parses the rows, turns pointers and dates into their display form,
// and answers with the rows twice, as MCP asks of a tool with an output schema: once as the text
// content (JSON inside a JSON string) and once as structuredContent. Nothing here is the library.
const http = require('node:http');

const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
const target = new URL(`${process.env.BENCH_PARSE_URL}/classes/Order`);
const KEYS = process.env.BENCH_KEYS;

function display(value) {
  if (value === null || typeof value !== 'object') return value;
  if (value.__type === 'Pointer') return `${value.className}$${value.objectId}`;
  if (value.__type === 'Date') return value.iso;
  return value;
}

function answer(res, id, rows) {
  const shown = rows.map((row) => {
    const out = {};
    for (const key in row) out[key] = display(row[key]);
    return out;
  });
  const data = JSON.stringify({ class_name: 'Order', result_count: shown.length, results: shown });
  const text = JSON.stringify(`<untrusted-data>\n${data}\n</untrusted-data>`);
  res.setHeader('content-type', 'application/json');
  res.end(
    `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":${text}}],` +
      `"isError":false,"structuredContent":${data}}}`,
  );
}

http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      // The no-I/O reference (`bench_echo`): the least an MCP server answers for a tool that does
      // no I/O, the counterpart of the bench server's `bench_echo`.
      if (message.params.name === 'bench_echo') {
        res.setHeader('content-type', 'application/json');
        res.end(
          `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"text",` +
            `"text":${JSON.stringify(JSON.stringify(message.params.arguments ?? {}))}}],"isError":false}}`,
        );
        return;
      }
      const body = JSON.stringify({
        _method: 'GET',
        where: { isDeleted: { $ne: true } },
        keys: KEYS,
        limit: message.params.arguments.limit,
      });
      const upstream = http.request(
        target,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-parse-application-id': process.env.BENCH_APP_ID,
            'x-parse-master-key': process.env.BENCH_MASTER_KEY,
          },
        },
        (up) => {
          const parts = [];
          up.on('data', (c) => parts.push(c));
          up.on('end', () =>
            answer(res, message.id, JSON.parse(Buffer.concat(parts).toString('utf8')).results),
          );
        },
      );
      upstream.on('error', () => {
        res.statusCode = 502;
        res.end();
      });
      upstream.end(body);
    });
  })
  .listen(0, '127.0.0.1', function () {
    process.stdout.write(JSON.stringify({ ready: true, port: this.address().port }) + '\n');
  });
process.on('SIGINT', () => process.exit(0));
