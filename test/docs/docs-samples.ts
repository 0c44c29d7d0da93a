/**
 * The code samples of the user guide (docs/*.md and README.md), as the docs check reads them:
 * every ```ts block is type-checked under strict TypeScript, and the ones marked `runnable` run.
 *
 * A block is checked as a module of its own, next to the library's sources:
 * - names the library, Nest (`@nestjs/common`, `@nestjs/core`, `@nestjs/platform-fastify`) or the
 *   Parse SDK (`Parse`) export are imported for it when it uses them without importing them;
 * - names the surrounding prose assumes (your connection settings, `agent`, `toolRegistry`, your
 *   `Order` model, your guard...) come from DOCS_PRELUDE below, with the library's own types;
 * - a block that cannot stand on its own is marked ```ts fragment, with the reason in an HTML
 *   comment on the line above (`<!-- fragment: ... -->`); such blocks must stay rare.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

export const ROOT = join(__dirname, '..', '..');

export interface DocSample {
  /** docs/tools.md */
  file: string;
  /** Line of the opening fence (1-based). */
  line: number;
  markers: string[];
  code: string;
  /** The reason given above a `fragment` block. */
  fragmentReason?: string;
}

export const KNOWN_MARKERS = new Set(['fragment', 'runnable']);

/** Every ```ts / ```typescript block of the guide, in file order. */
export function collectSamples(): DocSample[] {
  const files = [
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => join(ROOT, 'docs', name)),
    join(ROOT, 'README.md'),
  ];
  const samples: DocSample[] = [];
  for (const path of files) {
    const lines = readFileSync(path, 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const open = /^(\s*)```(ts|typescript)(?:\s+(.*))?$/.exec(lines[i]);
      if (!open) continue;
      const indent = open[1].length;
      let end = i + 1;
      while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++;
      const previous = lines
        .slice(0, i)
        .reverse()
        .find((l) => l.trim());
      const reason = /^\s*<!--\s*fragment:\s*(.*?)\s*-->\s*$/.exec(previous ?? '')?.[1];
      samples.push({
        file: relative(ROOT, path),
        line: i + 1,
        markers: (open[3] ?? '').split(/\s+/).filter(Boolean),
        code: lines
          .slice(i + 1, end)
          .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
          .join('\n'),
        fragmentReason: reason,
      });
      i = end;
    }
  }
  return samples;
}

/**
 * What the prose around the samples assumes, declared with the library's types: the application's
 * connection settings, the objects a sample works with, your own models, guards and services.
 * A sample declaring a name of its own shadows the one here.
 */
export const DOCS_PRELUDE = `
declare const serverURL: string;
declare const appId: string;
declare const masterKey: string;
declare const apiKey: string;
declare const sessionToken: string;
declare const token: string;
declare const parse: import('nestjs-parse-agent').ParseConnectionConfig;
declare const auth: NonNullable<import('nestjs-parse-agent').ParseAgentModuleOptions['auth']>;
declare const agentFactory: NonNullable<import('nestjs-parse-agent').ParseAgentModuleOptions['agentFactory']>;
declare const factory: import('nestjs-parse-agent').ParseAgentFactory;
declare const agents: import('nestjs-parse-agent').ParseAgentFactory;
declare const agent: import('nestjs-parse-agent').ParseAgent;
declare const chat: import('nestjs-parse-agent/llm').ParseAgentConversation;
declare const toolRegistry: import('nestjs-parse-agent').ToolRegistry;
declare const events: import('nestjs-parse-agent').AgentEvents;
declare const context: import('nestjs-parse-agent').ToolContext;
declare const pool: import('pg').Pool;
declare const user: { get(key: string): string };

/** Your models, module and services. */
declare class Order {}
declare class SupportTicket {}
declare class Customer {}
declare class AppModule {}
declare class StoresModule {}
type MySessionStore = import('nestjs-parse-agent').SessionStore;
declare const MySessionStore: new () => MySessionStore;
declare class MyAuthGuard implements import('@nestjs/common').CanActivate {
  canActivate(context: import('@nestjs/common').ExecutionContext): boolean;
}
declare class AuthGuard implements import('@nestjs/common').CanActivate {
  canActivate(context: import('@nestjs/common').ExecutionContext): boolean;
}
/** The request your guards leave their verdict on. */
type AuthedRequest = import('nestjs-parse-agent').McpRequest & {
  user?: { id: string; sessionToken: string; tenantId: string };
};
declare function summarize(rows: Array<Record<string, unknown>>): Record<string, number>;
declare function verifySession(token: string): Promise<{ id: string; username: string }>;
declare function isBusinessHours(): boolean;
declare const metrics: {
  timing(name: string, ms: number, tags?: Record<string, unknown>): void;
  count(name: string, value: number): void;
};
declare const errorTracker: { capture(error: Error, context: unknown): void };
declare const auditTrail: import('nestjs-parse-agent/ops').AfterToolCallHook;
declare const siem: { send(event: string, payload: unknown): void };
`;

/** Modules whose exports a sample may use without importing them. */
const AUTO_IMPORTS: Array<{ module: string; default?: string }> = [
  { module: 'nestjs-parse-agent' },
  { module: '@nestjs/common' },
  { module: '@nestjs/core' },
  { module: '@nestjs/platform-fastify' },
  { module: 'parse/node', default: 'Parse' },
];

const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts'],
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  allowSyntheticDefaultImports: true,
  skipLibCheck: true,
  noEmit: true,
  types: ['node'],
  baseUrl: ROOT,
  paths: {
    'nestjs-parse-agent': ['libs/parse-agent/src/index.ts'],
    'nestjs-parse-agent/*': ['libs/parse-agent/src/*'],
  },
};

/** Where the samples sit, in memory only: inside the repository, so packages resolve. */
const SAMPLE_DIR = join(ROOT, 'test', 'docs', '__samples__');
const PRELUDE_FILE = join(SAMPLE_DIR, 'prelude.d.ts');
const PROBE_FILE = join(SAMPLE_DIR, 'exports-probe.ts');

export interface SampleProblem {
  sample: DocSample;
  message: string;
}

/** `docs/tools.md:158` */
export function where(sample: DocSample, lineInCode?: number): string {
  return `${sample.file}:${lineInCode === undefined ? sample.line : sample.line + 1 + lineInCode}`;
}

function sampleFileName(sample: DocSample, index: number): string {
  return join(
    SAMPLE_DIR,
    `${sample.file.replace(/[^A-Za-z0-9]+/g, '_')}_${sample.line}_${index}.ts`,
  );
}

/** Names a sample declares or imports at its top level (they shadow the prelude's). */
function importedNames(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !statement.importClause) continue;
    const clause = statement.importClause;
    if (clause.name) names.add(clause.name.text);
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) names.add(element.name.text);
    }
    if (bindings && ts.isNamespaceImport(bindings)) names.add(bindings.name.text);
  }
  return names;
}

/**
 * Type-checks every sample given (strict), adding the imports each one leaves out. Returns the
 * problems, each placed at the doc line it is about.
 */
export function typeCheckSamples(samples: DocSample[]): SampleProblem[] {
  const files = new Map<string, { sample: DocSample; text: string; offset: number }>();
  samples.forEach((sample, index) => {
    files.set(sampleFileName(sample, index), {
      sample,
      text: `${sample.code}\nexport {};\n`,
      offset: 0,
    });
  });
  const probe = AUTO_IMPORTS.map(
    (source, i) => `import * as m${i} from '${source.module}';\nexport { m${i} };`,
  ).join('\n');

  const host = ts.createCompilerHost(COMPILER_OPTIONS, true);
  const virtual = (path: string): string | undefined => {
    if (path === PRELUDE_FILE) return DOCS_PRELUDE;
    if (path === PROBE_FILE) return probe;
    return files.get(path)?.text;
  };
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (path, language, onError, create) => {
    const text = virtual(path);
    return text === undefined
      ? getSourceFile(path, language, onError, create)
      : ts.createSourceFile(path, text, language, true);
  };
  host.fileExists = (path) => virtual(path) !== undefined || fileExists(path);
  host.readFile = (path) => virtual(path) ?? readFile(path);

  const roots = [PRELUDE_FILE, PROBE_FILE, ...files.keys()];
  const first = ts.createProgram(roots, COMPILER_OPTIONS, host);

  // What each auto-import source exports.
  const checker = first.getTypeChecker();
  const probeSource = first.getSourceFile(PROBE_FILE)!;
  const exportsOf = AUTO_IMPORTS.map((source, i) => {
    if (source.default) return new Set([source.default]);
    const declaration = probeSource.statements.find(
      (s): s is ts.ImportDeclaration =>
        ts.isImportDeclaration(s) &&
        (s.moduleSpecifier as ts.StringLiteral).text === AUTO_IMPORTS[i].module,
    );
    const symbol = declaration && checker.getSymbolAtLocation(declaration.moduleSpecifier);
    return new Set(symbol ? checker.getExportsOfModule(symbol).map((e) => e.name) : []);
  });

  // Second pass: the missing names a source exports are imported.
  let changed = false;
  for (const [path, entry] of files) {
    const source = first.getSourceFile(path)!;
    const missing = new Set<string>();
    for (const diagnostic of first.getSemanticDiagnostics(source)) {
      // Cannot find name / namespace; a UMD global used from a module (Parse).
      if (![2304, 2552, 2503, 2686].includes(diagnostic.code)) continue;
      const name = /'([^']+)'/.exec(
        ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
      )?.[1];
      if (name) missing.add(name);
    }
    const taken = importedNames(source);
    const lines: string[] = [];
    AUTO_IMPORTS.forEach((origin, i) => {
      const names = [...missing].filter((n) => exportsOf[i].has(n) && !taken.has(n));
      names.forEach((n) => taken.add(n));
      if (!names.length) return;
      lines.push(
        origin.default
          ? `import ${origin.default} from '${origin.module}';`
          : `import { ${names.join(', ')} } from '${origin.module}';`,
      );
    });
    if (lines.length) {
      changed = true;
      entry.text = `${lines.join(' ')}\n${entry.text}`;
      entry.offset = 1;
    }
  }
  const program = changed ? ts.createProgram(roots, COMPILER_OPTIONS, host, first) : first;

  const problems: SampleProblem[] = [];
  for (const [path, entry] of files) {
    const source = program.getSourceFile(path)!;
    const diagnostics = [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ];
    for (const diagnostic of diagnostics) {
      const line =
        diagnostic.start === undefined
          ? undefined
          : source.getLineAndCharacterOfPosition(diagnostic.start).line - entry.offset;
      problems.push({
        sample: entry.sample,
        message: `${where(entry.sample, line)}: TS${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`,
      });
    }
  }
  // The prelude itself must hold.
  for (const diagnostic of program.getSemanticDiagnostics(program.getSourceFile(PRELUDE_FILE))) {
    problems.push({
      sample: samples[0],
      message: `docs prelude: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`,
    });
  }
  return problems;
}

/**
 * A runnable sample as a CommonJS module exporting `run(scope)`: its imports stay on top, the rest
 * runs inside an async function (top-level await, `export` dropped), and the prelude names it
 * uses come from `scope`.
 */
export function runnableModule(sample: DocSample, scopeNames: string[]): string {
  const source = ts.createSourceFile('sample.ts', sample.code, ts.ScriptTarget.ES2022, true);
  const imports: string[] = [];
  const body: string[] = [];
  for (const statement of source.statements) {
    const text = statement.getFullText(source);
    if (ts.isImportDeclaration(statement)) imports.push(text);
    else body.push(text.replace(/^(\s*(?:\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*)export\s+/, '$1'));
  }
  const used = scopeNames.filter((name) => new RegExp(`\\b${name}\\b`).test(sample.code));
  const wrapped = `${imports.join('\n')}
export async function run(scope: Record<string, any>): Promise<void> {
  const { ${used.join(', ')} } = scope;
${body.join('\n')}
}
`;
  return ts.transpileModule(wrapped, {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      esModuleInterop: true,
    },
  }).outputText;
}
