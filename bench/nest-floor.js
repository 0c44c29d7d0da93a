'use strict';
// The floor of a Nest-hosted endpoint, for `npm run bench` measurement 1b: a Nest app on
// @nestjs/platform-express (BENCH_PLATFORM=fastify: @nestjs/platform-fastify) with one POST route
// and nothing of this library: Nest parses the JSON body and the handler answers the no-I/O call
// (`bench_echo`) exactly as the minimal proxy does. No guard, no gate, no session, no agent. What
// it costs per call is what hosting the endpoint in Nest costs before any check; the MCP app's
// figure above it is the library's own share. Prints one `{"ready":...}` line with its port.
require('reflect-metadata');
const { NestFactory } = require('@nestjs/core');
const { Body, Controller, HttpCode, Module, Post, Header } = require('@nestjs/common');

class EchoController {
  answer(message) {
    return (
      `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"text",` +
      `"text":${JSON.stringify(JSON.stringify(message.params?.arguments ?? {}))}}],"isError":false}}`
    );
  }
}
// Decorators applied by hand: this file runs as plain JavaScript.
Body()(EchoController.prototype, 'answer', 0);
const descriptor = Object.getOwnPropertyDescriptor(EchoController.prototype, 'answer');
Post('mcp')(EchoController.prototype, 'answer', descriptor);
HttpCode(200)(EchoController.prototype, 'answer', descriptor);
Header('content-type', 'application/json')(EchoController.prototype, 'answer', descriptor);
Controller()(EchoController);

class FloorModule {}
Module({ controllers: [EchoController] })(FloorModule);

async function main() {
  const fastify = process.env.BENCH_PLATFORM === 'fastify';
  const adapter = fastify ? new (require('@nestjs/platform-fastify').FastifyAdapter)() : undefined;
  const app = adapter
    ? await NestFactory.create(FloorModule, adapter, { logger: ['error'] })
    : await NestFactory.create(FloorModule, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address();
  process.stdout.write(JSON.stringify({ ready: true, port }) + '\n');
}

main().catch((e) => {
  process.stderr.write(`nest floor failed: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
process.on('SIGINT', () => process.exit(0));
