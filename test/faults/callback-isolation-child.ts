/**
 * One scenario of test/faults/callback-isolation.spec.ts, in a process of its own: application
 * code that throws from a subscriber or callback of the library, or a standalone server started
 * with a bad option. Prints `SURVIVED <outcome JSON>` when the process is still alive afterwards,
 * or `FAILED <message>`; a process ended by the library prints neither.
 */
import 'reflect-metadata';
import {
  ParseAgent,
  PromptRegistry,
  type LlmProvider,
  type PolicedToolContext,
} from 'nestjs-parse-agent';
import { ParseAgentConversation } from 'nestjs-parse-agent/llm';
import { createAgentServices, startStandaloneMcpServer } from 'nestjs-parse-agent/mcp';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { filter } from 'rxjs';

// Nothing listens there: these scenarios never reach Parse Server.
const parse = { serverURL: 'http://127.0.0.1:9/parse', appId: 'app', masterKey: 'unused' };
const boom = (where: string) => () => {
  throw new Error(`application subscriber failed in ${where}`);
};

async function scenario(name: string): Promise<unknown> {
  suppressSecurityBanners();
  const { services, close } = createAgentServices({ parse });
  try {
    const agent = new ParseAgent({}, services);
    switch (name) {
      case 'tool-changes': {
        services.tools.changes$.subscribe(boom('changes$'));
        services.tools.changes$.pipe(filter(() => true)).subscribe(boom('piped changes$'));
        services.tools.register({
          name: 'late_tool',
          description: 'Registered after the subscribers.',
          handler: () => ({ ok: true }),
        });
        services.tools.unregister('late_tool');
        return { registered: true, stillListed: services.tools.isRegistered('late_tool') };
      }
      case 'prompt-changes': {
        const prompts = new PromptRegistry();
        prompts.changes$.subscribe(boom('prompts changes$'));
        prompts.register({
          name: 'late_prompt',
          description: 'Registered after the subscriber.',
          render: () => 'hello',
        });
        return { registered: true };
      }
      case 'agent-events': {
        services.events.toolCalls$.subscribe(boom('toolCalls$'));
        services.events.securityEvents$.subscribe({ next: boom('securityEvents$') });
        services.events.mutations$.subscribe(boom('mutations$'));
        const listed = await agent.execute('list_tools', {});
        const denied = await agent.execute('create_object', { class_name: 'X', values: {} });
        services.events.emitMutation({
          action: 'update',
          tool: 'update_object',
          agent_id: 'a',
          auth_type: 'master_key',
          using_master_key: true,
          permissions: 'write',
          class_name: 'X',
          changed_keys: ['status'],
          at: new Date().toISOString(),
        });
        return { listed: listed.success, denied: !denied.success && denied.error_code };
      }
      case 'on-progress': {
        services.tools.register({
          name: 'progress_probe',
          description: 'Reports progress twice, then answers.',
          handler: (_args, context: PolicedToolContext) => {
            context.reportProgress({ progress: 1, total: 2 });
            context.reportProgress({ progress: 2, total: 2 });
            return { done: true };
          },
        });
        agent.progress$.subscribe(boom('progress$'));
        const result = await agent.execute(
          'progress_probe',
          {},
          { onProgress: boom('onProgress') },
        );
        return result;
      }
      case 'conversation-stream': {
        const provider: LlmProvider = {
          name: 'unreachable',
          model: 'none',
          complete: () => Promise.reject(new Error('the model is unreachable')),
        };
        const withModel = createAgentServices({ parse });
        const events: string[] = [];
        // No error handler: the failed question must not end the process.
        new ParseAgentConversation(new ParseAgent({}, withModel.services), { provider })
          .stream('hello')
          .subscribe((event) => {
            events.push(event.type);
          });
        await new Promise((resolve) => setTimeout(resolve, 200));
        await withModel.close();
        return { events };
      }
      default:
        throw new Error(`unknown scenario ${name}`);
    }
  } finally {
    close();
  }
}

/** Starts a standalone server with each bad option in turn; says how each start ended. */
async function standalone(cases: Array<Record<string, unknown>>): Promise<unknown> {
  const outcomes: unknown[] = [];
  for (const options of cases) {
    try {
      const server = await startStandaloneMcpServer({
        parse,
        port: 0,
        logger: false,
        suppressSecurityBanners: true,
        ...options,
      } as never);
      await server.close();
      outcomes.push({ started: true });
    } catch (error) {
      outcomes.push({
        rejected: (error as Error).constructor.name,
        message: (error as Error).message,
      });
    }
  }
  return outcomes;
}

const [name, json] = process.argv.slice(2);
const run =
  name === 'standalone'
    ? standalone(JSON.parse(json) as Array<Record<string, unknown>>)
    : scenario(name);
run.then(
  async (outcome) => {
    // Long enough for rxjs's asynchronous rethrow to have ended the process, were it to.
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.stdout.write(`SURVIVED ${JSON.stringify(outcome)}\n`);
  },
  (error: unknown) => {
    process.stdout.write(`FAILED ${(error as Error)?.message ?? String(error)}\n`);
    process.exitCode = 2;
  },
);
