/**
 * One MCP node in a process of its own (so a suite can SIGKILL it): the Nest app of startRedisNode
 * on REDIS_URL (or the Redis Cluster of REDIS_CLUSTER, a JSON array of startup nodes) and
 * KEY_PREFIX, listening on LISTEN_HOST:LISTEN_PORT, with MCP_OPTIONS (JSON) merged in, and two
 * tools: `endless_steps` reports progress every STEP_MS until aborted (bounded); `confirm_me` asks
 * the person to confirm and says what they answered. Prints `LISTENING <url>`.
 */
import type { PolicedToolContext } from 'nestjs-parse-agent';
import { startRedisNode } from './redis-nodes';

const STEP_MS = 100;
const MAX_STEPS = 600;

async function main(): Promise<void> {
  const node = await startRedisNode({
    redisUrl: process.env.REDIS_URL!,
    redisCluster: process.env.REDIS_CLUSTER
      ? (JSON.parse(process.env.REDIS_CLUSTER) as string[])
      : undefined,
    keyPrefix: process.env.KEY_PREFIX!,
    mcp: JSON.parse(process.env.MCP_OPTIONS ?? '{}') as Record<string, unknown>,
    host: process.env.LISTEN_HOST,
    port: Number(process.env.LISTEN_PORT ?? 0),
  });
  node.tools.register({
    name: 'endless_steps',
    description: 'Reports progress every 100 ms until cancelled (no Parse request).',
    clientSafe: true,
    handler: async (_args, ctx: PolicedToolContext) => {
      for (let step = 1; step <= MAX_STEPS && !ctx.signal?.aborted; step++) {
        await new Promise((resolve) => setTimeout(resolve, STEP_MS));
        ctx.reportProgress({ progress: step, message: `step ${step}` });
      }
      return { stopped: true };
    },
  });
  node.tools.register({
    name: 'echo',
    description: 'Answers at once (no Parse request).',
    clientSafe: true,
    handler: () => ({ ok: true }),
  });
  node.tools.register({
    name: 'confirm_me',
    description: 'Asks the person to confirm, then says what they answered.',
    clientSafe: true,
    handler: async (_args, ctx: PolicedToolContext) =>
      ctx.confirm({ message: 'Allow confirm_me?', tool: 'confirm_me', className: 'Thing' }),
  });
  process.stdout.write(`LISTENING ${node.url}\n`);
  // The parent's end ends this node too (no orphan when the suite is interrupted).
  process.on('disconnect', () => process.exit(0));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

main().catch((error: unknown) => {
  process.stderr.write(`node failed to start: ${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
