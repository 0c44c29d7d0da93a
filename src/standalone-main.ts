import 'reflect-metadata';
import { startStandaloneMcpServer } from 'nestjs-parse-agent/mcp';
import { CORE_MODELS, SupportTicket } from './example/models';

/**
 * `npm run mcp:standalone`: an MCP server on its own (no demo app) in front of an existing Parse
 * Server. Reads PARSE_SERVER_URL, PARSE_APP_ID, PARSE_MASTER_KEY, and optionally MCP_HOST (default
 * 127.0.0.1), MCP_PORT (default 3001) and MCP_API_KEY (required unless bound to loopback).
 */
async function main(): Promise<void> {
  const missing = ['PARSE_SERVER_URL', 'PARSE_APP_ID', 'PARSE_MASTER_KEY'].filter(
    (v) => !process.env[v],
  );
  if (missing.length) {
    process.stderr.write(
      `Configuration error: set ${missing.join(', ')} (the Parse Server to serve).\n`,
    );
    process.exit(1);
  }
  const server = await startStandaloneMcpServer({
    parse: {
      serverURL: process.env.PARSE_SERVER_URL as string,
      appId: process.env.PARSE_APP_ID as string,
      masterKey: process.env.PARSE_MASTER_KEY as string,
      javascriptKey: process.env.PARSE_JAVASCRIPT_KEY || undefined,
    },
    host: process.env.MCP_HOST || '127.0.0.1',
    port: process.env.MCP_PORT ? Number(process.env.MCP_PORT) : 3001,
    models: [...CORE_MODELS, SupportTicket],
    unregisteredClasses: 'hidden',
    mcp: { maxConcurrentStreams: 100 },
    handleSignals: true,
  });
  process.stdout.write(
    `MCP server listening on ${server.url}/mcp (health: ${server.url}/health)\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `Failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
