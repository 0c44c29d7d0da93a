import { createInterface } from 'node:readline';
import { start as startRepl, type REPLEval, type REPLServer } from 'node:repl';
import { Console } from 'node:console';
import { PassThrough, Writable, type Readable } from 'node:stream';
import { inspect } from 'node:util';
import { lastValueFrom } from 'rxjs';
import type { ParseAgent } from '../agent/parse-agent';
import type { ParseAgentConversation } from '../client/parse-agent-conversation';
import type { McpDispatcher } from '../mcp/mcp-dispatcher';
import { formatTable, rowsOf } from './format-table';
import { forTerminal, terminalSafe } from './terminal-text';

export interface AgentConsoleOptions {
  agent: ParseAgent;
  /** The MCP dispatcher over the same services: `dispatch()` and the prompt helpers use it. */
  dispatcher: McpDispatcher;
  input: Readable;
  output: Writable & { isTTY?: boolean };
  /** Printed before the first prompt. */
  header: string[];
  /** When a model is configured: `ask()` and `reply()` talk to it. */
  conversation?: ParseAgentConversation;
  /** Why `ask()` is unavailable, when no conversation is given. */
  noConversationReason?: string;
}

/** One line each, for `help()` and the docs. Every helper acts as the console's identity. */
export const CONSOLE_HELPERS: Readonly<Record<string, string>> = Object.freeze({
  agent: 'the ParseAgent itself (agent.describe(), agent.wouldPermit(...), ...)',
  'tools()': 'the tools this identity may call, as a table; returns their names',
  'schemas()': 'the classes this identity can see, custom then built-in; returns their names',
  't(name, args)': 'run a tool; returns its result envelope',
  'q(className, options)': "query_class: q('Order', { limit: 3, where: { status: 'paid' } })",
  'count(className, where)': 'count_objects; returns the number (or the refusal envelope)',
  'schema(className)': 'get_schema for one class',
  'describe(className)': 'what this identity is, or what it sees of one class',
  'table(result)': 'print the rows of a result as a table',
  'dispatch(method, params)': "one MCP JSON-RPC call: dispatch('tools/list')",
  'prompts()': 'the prompt names; returns them',
  'renderPrompt(name, args)': 'a prompt rendered to its messages',
  'ask(question)': 'a fresh question to the model (needs LLM_PROVIDER)',
  'reply(text)': 'continue the last conversation',
  'help()': 'this list',
});

interface Envelope {
  success: boolean;
  data?: unknown;
  error?: unknown;
}

/**
 * `parse-agent console`: a Node REPL bound to one agent, with short helpers for tools, queries,
 * counts, schemas, prompts and (with a model) questions. Helpers return promises; the console
 * awaits a line's result before printing it, so `q('Order')` prints rows, not a pending promise.
 * Every helper goes through the agent (and `dispatch` through the MCP dispatcher), so the console
 * sees exactly what an MCP client of the same identity sees.
 */
export function startAgentConsole(options: AgentConsoleOptions): Promise<void> {
  const { agent, dispatcher, output } = options;
  // What the console prints comes from rows, schemas and the model: it passes terminalSafe first.
  // On a terminal, without the untrusted-data marks (for a model, not a person).
  const say = (text = '') =>
    output.write(terminalSafe(forTerminal(output, text), 'multiline') + '\n');
  let nextId = 1;

  const t = (name: string, args: Record<string, unknown> = {}) =>
    agent.execute(name, args) as Promise<Envelope>;
  const helpers = {
    agent,
    help: () => {
      const width = Math.max(...Object.keys(CONSOLE_HELPERS).map((k) => k.length));
      for (const [name, what] of Object.entries(CONSOLE_HELPERS)) {
        say(`  ${name.padEnd(width)}  ${what}`);
      }
      return undefined;
    },
    tools: () => {
      const defs = agent.toolDefinitions().map((d) => ({
        name: d.name,
        category: d.category,
        permission: d.permission,
      }));
      say(formatTable(defs));
      return defs.map((d) => d.name);
    },
    schemas: async () => {
      const envelope = await t('get_all_schemas');
      if (!envelope.success) return envelope;
      const data = envelope.data as { custom?: { name: string }[]; built_in?: { name: string }[] };
      const custom = (data.custom ?? []).map((c) => c.name);
      const builtIn = (data.built_in ?? []).map((c) => c.name);
      say(`Custom:   ${custom.join(', ') || '(none)'}`);
      say(`Built-in: ${builtIn.join(', ') || '(none)'}`);
      return [...custom, ...builtIn];
    },
    t,
    q: (className: string, args: Record<string, unknown> = {}) =>
      t('query_class', { ...args, class_name: className }),
    count: async (className: string, where?: Record<string, unknown>) => {
      const envelope = await t('count_objects', {
        class_name: className,
        ...(where ? { where } : {}),
      });
      return envelope.success ? (envelope.data as { count: number }).count : envelope;
    },
    schema: (className: string) => t('get_schema', { class_name: className }),
    describe: (className?: string) => (className ? agent.describeFor(className) : agent.describe()),
    table: (result: unknown) => {
      const rows = rowsOf((result as Envelope | undefined)?.data ?? result);
      say(rows ? formatTable(rows) : '(no rows in this value)');
      return undefined;
    },
    dispatch: async (method: string, params: Record<string, unknown> = {}) => {
      const terminal = await lastValueFrom(
        dispatcher.dispatch({ jsonrpc: '2.0', id: nextId++, method, params }, agent, {
          logger: { error: (message) => say(message), warn: (message) => say(message) },
        }),
      );
      return terminal.kind === 'response' ? terminal.message : { accepted: true };
    },
    prompts: async () => {
      const answer = (await helpers.dispatch('prompts/list')) as {
        result?: { prompts: { name: string }[] };
        error?: unknown;
      };
      if (!answer.result) return answer;
      const names = answer.result.prompts.map((p) => p.name);
      for (const name of names) say(`  ${name}`);
      return names;
    },
    renderPrompt: async (name: string, args: Record<string, unknown> = {}) => {
      const answer = (await helpers.dispatch('prompts/get', { name, arguments: args })) as {
        result?: unknown;
        error?: unknown;
      };
      return answer.result ?? answer;
    },
    ask: async (question: string) => {
      const conversation = requireConversation();
      return (await conversation.ask(question)).text;
    },
    reply: async (text: string) => {
      const conversation = requireConversation();
      return (await conversation.reply(text)).text;
    },
  };

  function requireConversation(): ParseAgentConversation {
    if (!options.conversation) {
      throw new Error(options.noConversationReason ?? 'No language model is configured.');
    }
    return options.conversation;
  }

  for (const line of options.header) say(line);
  say('Type help() for the helpers. Results of promises are awaited and printed.');
  const tty = Boolean(output.isTTY);
  // A person at a terminal types one line at a time. Piped input (a script, a paste into a pipe)
  // arrives in one read, and the REPL would start every line at once: there, each line is handed
  // on only when the previous one has finished and the prompt is back.
  const input = tty ? options.input : new PassThrough();
  const repl: REPLServer = startRepl({
    prompt: 'parse-agent> ',
    input,
    output,
    terminal: tty,
    useGlobal: false,
    ignoreUndefined: true,
    // Without colours: an error's message, a class name or a string in a row would otherwise pass
    // inspect() raw, and escapes of our own could not be told from the data's.
    writer: (value: unknown) =>
      terminalSafe(inspect(value, { depth: 6, colors: false, breakLength: 100 }), 'multiline'),
  });
  if (!tty) feedLineByLine(options.input, input as PassThrough, repl);
  Object.assign(repl.context, helpers, { console: safeConsole(output) });

  // Await a promise a line evaluates to, so its value (or its error) is what gets printed. Lines
  // typed meanwhile wait: the REPL does not read on while a line is running.
  let running: Promise<unknown> = Promise.resolve();
  const evaluate = repl.eval.bind(repl);
  const awaiting: REPLEval = (code, context, file, done) => {
    evaluate(code, context, file, (error, value) => {
      if (error || !isThenable(value)) return done(error, value);
      repl.pause();
      running = Promise.resolve(value).then(
        (result) => done(null, result),
        (failure: unknown) => done(asError(failure), undefined),
      );
      void running.finally(() => repl.resume());
    });
  };
  // The REPL reads `eval` on each line; its own (top-level await included) does the evaluating.
  (repl as { eval: REPLEval }).eval = awaiting;

  return new Promise((resolve) => {
    repl.on('exit', () => {
      // Input ended (Ctrl-D or a closed pipe): let the line still running finish first.
      void running.finally(() => resolve());
    });
  });
}

/** `console.log(row.name)` typed at the prompt prints through terminalSafe too. */
function safeConsole(output: Writable): Console {
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      output.write(terminalSafe(String(chunk), 'multiline'));
      done();
    },
  });
  return new Console({ stdout: sink, stderr: sink, colorMode: false });
}

/** Passes `source` on to `gate` a line at a time, each once the REPL shows its prompt again. */
function feedLineByLine(source: Readable, gate: PassThrough, repl: REPLServer): void {
  let ready!: () => void;
  let promptShown = new Promise<void>((resolve) => (ready = resolve));
  const display = repl.displayPrompt.bind(repl);
  repl.displayPrompt = (preserveCursor?: boolean) => {
    display(preserveCursor);
    ready();
  };
  ready(); // the first prompt is already out
  void (async () => {
    for await (const line of createInterface({ input: source, crlfDelay: Infinity })) {
      await promptShown;
      promptShown = new Promise<void>((resolve) => (ready = resolve));
      gate.write(line + '\n');
    }
    await promptShown;
    gate.end();
  })();
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
