import { join } from 'node:path';
import { importCycles, importEdges, layerOf, layerViolations, LAYERS } from './import-graph';

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

  it('places every folder of the library in a layer', () => {
    const folders = new Set(edges.flatMap((e) => [e.from, e.to]).map((f) => layerOf(f)));
    for (const f of folders) expect(f.rank).toBeGreaterThanOrEqual(0);
    expect(LAYERS[0]).toEqual(['core']);
  });
});
