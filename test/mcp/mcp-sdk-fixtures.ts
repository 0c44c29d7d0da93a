import { AgentUnauthorizedError, type PolicedToolContext } from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { randomBytes } from 'node:crypto';
import { createObject, createUser, type SeededUser } from '../harness/fixtures';
import { delay, startMcpTestApp, type McpTestApp, type McpTestAppOptions } from './mcp-test-app';

/** Seeded data the real-client suites read: one class with an owner-only row and a public row. */
export interface HttpSeed {
  className: string;
  alice: SeededUser;
  bob: SeededUser;
  aliceRowId: string;
}

export async function seedHttpNotes(): Promise<HttpSeed> {
  const suffix = randomBytes(4).toString('hex');
  const className = `HttpNote${suffix}`;
  const alice = await createUser(`http_alice_${suffix}`);
  const bob = await createUser(`http_bob_${suffix}`);
  const aliceRowId = await createObject(
    className,
    { title: 'alice secret', rank: 1 },
    { [alice.objectId]: { read: true, write: true } },
  );
  await createObject(className, { title: 'public note', rank: 2 });
  return { className, alice, bob, aliceRowId };
}

export interface ToolProbe {
  started: number;
  aborted: unknown[];
}

/**
 * The app the real clients talk to: `Authorization: Bearer <Parse session token>` becomes a
 * session-scoped agent; no token is refused. Adds a slow tool and one that waits for its signal.
 */
export async function startClientTestApp(
  probe: ToolProbe,
  options: McpTestAppOptions = {},
): Promise<McpTestApp> {
  const t = await startMcpTestApp({
    ...options,
    mcp: { heartbeatIntervalMs: 40, ...options.mcp },
    agentFactory:
      options.agentFactory ??
      ((req) => {
        const match = /^Bearer (\S+)$/.exec(String(req.headers.authorization ?? ''));
        if (!match)
          throw new AgentUnauthorizedError('missing bearer token', { reason: 'no_token' });
        return { sessionToken: match[1] };
      }),
  });
  t.tools.register({
    name: 'http_slow',
    description: 'Waits, then reports two steps of progress.',
    clientSafe: true,
    handler: async (_args, ctx: PolicedToolContext) => {
      await delay(150);
      ctx.reportProgress({ progress: 1, total: 2, message: 'half way' });
      await delay(20);
      ctx.reportProgress({ progress: 2, total: 2 });
      return { done: true };
    },
  });
  t.tools.register({
    name: 'http_wait',
    description: 'Runs until its signal aborts (or 10 s pass).',
    clientSafe: true,
    handler: (_args, ctx: PolicedToolContext) =>
      new Promise((resolve) => {
        probe.started++;
        const timer = setTimeout(() => resolve({ finished: true }), 10_000);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          probe.aborted.push(ctx.signal.reason);
          resolve({ finished: false });
        });
      }),
  });
  return t;
}

/** Parses the JSON text of a tool result. */
export function resultData(result: object): Record<string, unknown> {
  const content = (result as { content: Array<{ type: string; text: string }> }).content;
  return JSON.parse(unwrapUntrusted(content[0].text)) as Record<string, unknown>;
}
