import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  importCycles,
  importEdges,
  layerOf,
  layerViolations,
  LAYERS,
  transportViolations,
} from './import-graph';

const SRC = join(__dirname, '../../libs/parse-agent/src');

describe('library import graph', () => {
  const edges = importEdges(SRC);

  it('reads the imports of the library (a broken reader would pass everything)', () => {
    expect(edges.length).toBeGreaterThan(100);
    expect(edges).toContainEqual({ from: 'agent/parse-agent.ts', to: 'core/errors.ts' });
  });

  it('has no import from a lower layer to a higher one, nor between sibling folders', () => {
    expect(layerViolations(edges)).toEqual([]);
  });

  it('has no import cycles', () => {
    expect(importCycles(edges)).toEqual([]);
  });

  it('keeps transports side by side: each imports only itself and transport/shared/', () => {
    expect(edges.some((e) => e.from.startsWith('transport/stdio/'))).toBe(true);
    expect(transportViolations(edges)).toEqual([]);
    expect(
      transportViolations([
        { from: 'transport/stdio/a.ts', to: 'transport/http/b.ts' },
        { from: 'transport/shared/c.ts', to: 'transport/stdio/a.ts' },
        { from: 'transport/stdio/a.ts', to: 'transport/shared/c.ts' },
        { from: 'cli/x.ts', to: 'transport/http/b.ts' },
      ]),
    ).toEqual([
      'transport/stdio/a.ts -> transport/http/b.ts (a transport imports another)',
      'transport/shared/c.ts -> transport/stdio/a.ts (shared code imports a transport)',
    ]);
  });

  it('flags an upward import and a cycle when one exists', () => {
    const bad = [
      { from: 'core/errors.ts', to: 'agent/parse-agent.ts' },
      { from: 'agent/parse-agent.ts', to: 'core/errors.ts' },
    ];
    expect(layerViolations(bad)).toEqual([
      'core/errors.ts -> agent/parse-agent.ts (imports a higher layer)',
    ]);
    expect(importCycles(bad)).toEqual([['agent/parse-agent.ts', 'core/errors.ts']]);
    expect(layerViolations([{ from: 'security/a.ts', to: 'data/b.ts' }])).toHaveLength(1);
  });

  it('sees lazy imports, and lets only entry points join the CLI with the Nest server', () => {
    expect(edges).toContainEqual({
      from: 'cli.main.ts',
      to: 'nest/mcp/standalone-server.ts',
    });
    expect(layerViolations([{ from: 'cli/x.ts', to: 'nest/mcp/standalone-server.ts' }])).toEqual([
      'cli/x.ts -> nest/mcp/standalone-server.ts (imports a higher layer)',
    ]);
    expect(edges.filter((e) => e.from.startsWith('nest/') && e.from.includes('cli'))).toEqual([]);
  });

  it('reads require(), import() and side-effect imports, so none of them crosses layers unseen', () => {
    const root = mkdtempSync(join(tmpdir(), 'import-graph-'));
    const write = (file: string, text: string): void => {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    };
    try {
      write('agent/parse-agent.ts', 'export const agent = 1;\n');
      write('nest/module.ts', 'export const nest = 1;\n');
      write('mcp/server.ts', 'export const mcp = 1;\n');
      write('transport/polyfill.ts', 'export {};\n');
      write(
        'core/errors.ts',
        [
          "const lazy = require('../agent/parse-agent') as { agent: number };",
          "import nest = require('../nest/module');",
          "export const later = () => import('../mcp/server');",
          "import '../transport/polyfill';",
          'export const used = [lazy, nest];',
        ].join('\n'),
      );
      const found = importEdges(root);
      expect(layerViolations(found).sort()).toEqual([
        'core/errors.ts -> agent/parse-agent.ts (imports a higher layer)',
        'core/errors.ts -> mcp/server.ts (imports a higher layer)',
        'core/errors.ts -> nest/module.ts (imports a higher layer)',
        'core/errors.ts -> transport/polyfill.ts (imports a higher layer)',
      ]);
      // A package name is not a library file: require('ioredis') makes no edge.
      write('redis/conn.ts', "const io = require('ioredis');\nexport { io };\n");
      expect(importEdges(root).filter((e) => e.from === 'redis/conn.ts')).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('builds services in one composition root that the Nest module and the CLI both use', () => {
    const root = 'composition/compose-agent-services.ts';
    expect(edges).toContainEqual({ from: 'nest/parse-agent.providers.ts', to: root });
    expect(edges).toContainEqual({ from: 'cli/cli-session.ts', to: root });
    expect(edges).toContainEqual({ from: 'composition/create-agent-services.ts', to: root });
    // Nobody else assembles a DataRouter or picks the data paths.
    const routers = edges.filter(
      (e) => e.to === 'data/data-router.ts' && !e.from.startsWith('data/'),
    );
    const assemblers = routers.filter((e) =>
      /new DataRouter\(/.test(readFileSync(join(SRC, e.from), 'utf8')),
    );
    expect(assemblers.map((e) => e.from)).toEqual([root]);
  });

  it('places every folder of the library in a layer', () => {
    const folders = new Set(edges.flatMap((e) => [e.from, e.to]).map((f) => layerOf(f)));
    for (const f of folders) expect(f.rank).toBeGreaterThanOrEqual(0);
    expect(LAYERS[0]).toEqual(['core']);
  });
});
