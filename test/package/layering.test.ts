/**
 * The layering, kept: ground ← port/auth ← core ← http/deployment ← functions/cli/local ←
 * infra ← app (scripts/layering/layers.ts says which folder is which, and why). Every import
 * counts, `import type` and dynamic `import()` included: the layering is about what a module
 * may know, and a type names a concept as surely as a value does.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkLayering, describeViolation, layerIndexOf, moduleOf } from '../../scripts/layering/check';
import { importGraph, specifiersOf, type ImportEdge } from '../../scripts/layering/graph';
import { LAYERS, SCANNED, type Layer } from '../../scripts/layering/layers';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the repository', () => {
  const edges = importGraph(ROOT, SCANNED);

  it('imports only down the layers, with no cycle between folders', () => {
    expect(checkLayering(edges, LAYERS).map(describeViolation)).toEqual([]);
  });

  it('is read whole (the check above is not vacuous)', () => {
    // Hundreds of imports across every layer; a scan that found none would pass anything.
    expect(edges.length).toBeGreaterThan(500);
    const layersSeen = new Set(edges.flatMap((edge) => [layerIndexOf(edge.from, LAYERS), layerIndexOf(edge.to, LAYERS)]));
    expect([...layersSeen].sort()).toEqual(LAYERS.map((_, index) => index));
  });

  it('keeps the ground floor a leaf: it imports nothing of the repository', () => {
    expect(edges.filter((edge) => edge.from.startsWith('src/ground/') && !edge.to.startsWith('src/ground/'))).toEqual([]);
  });
});

describe('the layering check', () => {
  const layers: Layer[] = [
    { name: 'low', members: ['src/low/'] },
    { name: 'mid', members: ['src/'] },
    { name: 'high', members: ['src/high/', 'src/entry.ts', 'cli/', 'local/'] },
  ];
  const edge = (from: string, to: string): ImportEdge => ({ from, to });

  it('places a file by the longest member that matches it', () => {
    expect(layerIndexOf('src/low/errors.ts', layers)).toBe(0);
    expect(layerIndexOf('src/poller.ts', layers)).toBe(1);
    expect(layerIndexOf('src/entry.ts', layers)).toBe(2);
    expect(layerIndexOf('src/entry.tsx', layers)).toBe(1);
    expect(layerIndexOf('infra/stack.ts', layers)).toBe(-1);
  });

  it('passes a graph that only imports down or sideways', () => {
    const graph = [edge('src/high/app.ts', 'src/poller.ts'), edge('src/poller.ts', 'src/low/errors.ts'), edge('cli/run.ts', 'local/stack.ts')];
    expect(checkLayering(graph, layers)).toEqual([]);
  });

  it('names an upward import by file and layer', () => {
    const violations = checkLayering([edge('src/low/errors.ts', 'src/poller.ts')], layers);
    expect(violations.map(describeViolation)).toEqual(['src/low/errors.ts → src/poller.ts: low imports mid, a higher layer']);
  });

  it('names a cycle between folders, within one layer, with the imports that close it', () => {
    const graph = [
      edge('cli/commands/dev.ts', 'local/stack.ts'),
      edge('local/stack.ts', 'local/status-page.ts'),
      edge('local/status-page.ts', 'cli/commands/backlog.ts'),
    ];
    expect(checkLayering(graph, layers).map(describeViolation)).toEqual([
      'cycle cli/commands → local/stack.ts → local/status-page.ts → cli/commands ' +
        '(cli/commands/dev.ts → local/stack.ts, local/stack.ts → local/status-page.ts, local/status-page.ts → cli/commands/backlog.ts)',
    ]);
  });

  it('ignores imports inside one module, cyclic or not, its subfolders included', () => {
    expect(checkLayering([edge('src/low/a.ts', 'src/low/b.ts'), edge('src/low/b.ts', 'src/low/a.ts')], layers)).toEqual([]);
    expect(checkLayering([edge('src/low/registry.ts', 'src/low/parts/a.ts'), edge('src/low/parts/a.ts', 'src/low/contract.ts')], layers)).toEqual([]);
  });

  it('treats files directly in a top-level folder as their own modules', () => {
    expect(moduleOf('src/decide.ts')).toBe('src/decide.ts');
    expect(moduleOf('src/redis/port.ts')).toBe('src/redis');
    expect(moduleOf('src/dashboard/sections/dlt.ts')).toBe('src/dashboard');
    expect(moduleOf('saga.config.ts')).toBe('saga.config.ts');
    // Through a folder and back, but not to the file it started from: no cycle.
    expect(checkLayering([edge('src/decide.ts', 'src/mid/a.ts'), edge('src/mid/b.ts', 'src/verdict.ts')], layers)).toEqual([]);
    // Two files of src/ importing each other: a cycle inside one folder, not between folders.
    expect(checkLayering([edge('src/decide.ts', 'src/processor.ts'), edge('src/processor.ts', 'src/decide.ts')], layers)).toEqual([]);
    // A file of src/ and a folder under it: between folders.
    const graph = [edge('src/decide.ts', 'src/mid/a.ts'), edge('src/mid/b.ts', 'src/decide.ts')];
    expect(checkLayering(graph, layers).map(describeViolation)).toEqual([
      'cycle src/mid → src/decide.ts → src/mid (src/mid/b.ts → src/decide.ts, src/decide.ts → src/mid/a.ts)',
    ]);
  });

  it('reports a file in no layer', () => {
    expect(checkLayering([edge('src/poller.ts', 'infra/stack.ts')], layers).map(describeViolation)).toEqual([
      'infra/stack.ts: in no layer (add its folder to scripts/layering/layers.ts)',
    ]);
  });

  it('counts type-only, re-exported and dynamic imports, and skips packages', () => {
    const text = [
      "import type { A } from './a';",
      "export { B } from '../b';",
      "export * from './c';",
      "const d = () => import('./d');",
      "import * as z from 'zod';",
    ].join('\n');
    expect(specifiersOf(text)).toEqual(['./a', '../b', './c', './d', 'zod']);
  });
});
