'use strict';
// The official SDK's stateless Streamable HTTP server (the comparison for `npm run bench`
// measurement 2), in its own process like every other server the bench measures. It lists exactly
// the tools the MCP app lists: it fetches them once from BENCH_MCP_URL at start.
const express = require('express');
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const {
  StreamableHTTPServerTransport,
} = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

async function main() {
  const listed = await fetch(process.env.BENCH_MCP_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  const { result } = await listed.json();
  const tools = result.tools;

  const app = express();
  app.use(express.json());
  // The SDK's documented stateless pattern: a fresh server and transport per request.
  app.post('/mcp', async (req, res) => {
    const server = new Server(
      { name: 'sdk-baseline', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  const listener = app.listen(0, '127.0.0.1', () => {
    process.stdout.write(
      JSON.stringify({ ready: true, port: listener.address().port, tools: tools.length }) + '\n',
    );
  });
}

main().catch((e) => {
  process.stderr.write(`sdk baseline server failed: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
process.on('SIGINT', () => process.exit(0));
