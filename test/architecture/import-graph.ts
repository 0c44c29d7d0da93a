import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The library's layers, lowest first. A file may import from its own folder and from folders of a
 * lower rank; never from a higher rank or from another folder of the same rank.
 */
export const LAYERS: ReadonlyArray<readonly string[]> = [
  ['core'],
  ['ports', 'query', 'validation'],
  ['metadata'],
  ['security', 'data', 'format', 'retrieval'],
  ['tools'],
  ['agent'],
  ['mcp'],
  ['transport', 'client', 'redis', 'auth', 'console', 'live'],
  ['composition'],
  ['cli'],
  ['nest'],
];

/** Files at the root of src (version.ts and the entry points) sit outside the layers. */
const ROOT_FILES: Record<string, number> = {
  'version.ts': 0,
  'index.ts': Number.POSITIVE_INFINITY,
  // The subpath entry points (`nestjs-parse-agent/redis`, ...): see the package's "exports".
  'redis.ts': Number.POSITIVE_INFINITY,
  'openai.ts': Number.POSITIVE_INFINITY,
  'anthropic.ts': Number.POSITIVE_INFINITY,
  'llm.ts': Number.POSITIVE_INFINITY,
  'mcp.ts': Number.POSITIVE_INFINITY,
  'data.ts': Number.POSITIVE_INFINITY,
  'auth.ts': Number.POSITIVE_INFINITY,
  'stores.ts': Number.POSITIVE_INFINITY,
  'ops.ts': Number.POSITIVE_INFINITY,
  // The `parse-agent` executable: joins the CLI (below Nest) with the Nest standalone server.
  'cli.main.ts': Number.POSITIVE_INFINITY,
};

export interface ImportEdge {
  from: string;
  to: string;
}

export function layerOf(file: string): { folder: string; rank: number } {
  const [first] = file.split('/');
  if (ROOT_FILES[first] !== undefined) return { folder: first, rank: ROOT_FILES[first] };
  const rank = LAYERS.findIndex((layer) => layer.includes(first));
  return { folder: first, rank };
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.spec.ts')) out.push(path);
  }
  return out;
}

function resolveImport(fromFile: string, spec: string): string | undefined {
  const base = resolve(dirname(fromFile), spec);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Every relative import between the library's files: static and type-only ones, side-effect
 * `import './x'`, lazy `import()`, `require()` (also `import x = require()`) and `require.resolve()`.
 */
export function importEdges(srcRoot: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const pattern = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]/g;
  const sideEffect = /(?:^|\n)\s*import\s*['"](\.[^'"]+)['"]/g;
  const lazy = /\b(?:import|require|require\.resolve)\(\s*['"`](\.[^'"`]+)['"`]\s*\)/g;
  for (const file of walk(srcRoot)) {
    const text = readFileSync(file, 'utf8');
    const matches = [pattern, sideEffect, lazy].flatMap((re) => [...text.matchAll(re)]);
    for (const match of matches) {
      const target = resolveImport(file, match[1]);
      if (target) edges.push({ from: relative(srcRoot, file), to: relative(srcRoot, target) });
    }
  }
  return edges;
}

/** Edges that point up the layers or sideways into another folder of the same rank. */
export function layerViolations(edges: ImportEdge[]): string[] {
  const out: string[] = [];
  for (const { from, to } of edges) {
    const a = layerOf(from);
    const b = layerOf(to);
    if (a.rank < 0) out.push(`${from}: its folder '${a.folder}' is in no layer`);
    else if (b.rank > a.rank) out.push(`${from} -> ${to} (imports a higher layer)`);
    else if (b.rank === a.rank && a.folder !== b.folder)
      out.push(`${from} -> ${to} (imports a sibling folder of the same layer)`);
  }
  return [...new Set(out)];
}

/** Import cycles between files (Tarjan's strongly connected components of size > 1). */
export function importCycles(edges: ImportEdge[]): string[][] {
  const graph = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (!graph.has(from)) graph.set(from, []);
    if (!graph.has(to)) graph.set(to, []);
    graph.get(from)!.push(to);
  }
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!));
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return cycles;
}

/**
 * Transports are plugins side by side: a file of `transport/<name>/` imports its own folder and
 * `transport/shared/` (the context every transport runs on), never another transport; `shared/`
 * imports no transport.
 */
export function transportViolations(edges: ImportEdge[]): string[] {
  const transportOf = (file: string) => {
    const [first, second] = file.split('/');
    return first === 'transport' ? second : undefined;
  };
  const out: string[] = [];
  for (const { from, to } of edges) {
    const a = transportOf(from);
    const b = transportOf(to);
    if (a === undefined || b === undefined || a === b || b === 'shared') continue;
    out.push(
      `${from} -> ${to} (${a === 'shared' ? 'shared code imports a transport' : 'a transport imports another'})`,
    );
  }
  return [...new Set(out)];
}
