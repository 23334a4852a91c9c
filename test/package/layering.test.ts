/**
 * The layering, kept (scripts/layering/layers.ts says which folder is in which layer, and
 * why): every import points down or sideways, no two files import each other around a cycle,
 * and every scanned file sits in a layer named on purpose — there is no catch-all. Every
 * import counts, `import type` and dynamic `import()` included: the layering is about what a
 * module may know, and a type names a concept as surely as a value does.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkLayering, describeViolation, layerIndexOf } from '../../scripts/layering/check';
import { importGraph, sourceFiles, specifiersOf, type ImportEdge } from '../../scripts/layering/graph';
import { LAYERS, SCANNED, type Layer } from '../../scripts/layering/layers';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the repository', () => {
  const edges = importGraph(ROOT, SCANNED);
  const files = sourceFiles(ROOT, SCANNED);

  it('imports only down the layers, with no cycle, every file placed', () => {
    expect(checkLayering(edges, LAYERS, files).map(describeViolation)).toEqual([]);
  });

  it('is read whole (the check above is not vacuous)', () => {
    // Hundreds of files and imports across every layer; a scan that found none would pass anything.
    expect(files.length).toBeGreaterThan(200);
    expect(edges.length).toBeGreaterThan(500);
    const layersSeen = new Set(edges.flatMap((edge) => [layerIndexOf(edge.from, LAYERS), layerIndexOf(edge.to, LAYERS)]));
    expect([...layersSeen].sort((a, b) => a - b)).toEqual(LAYERS.map((_, index) => index));
  });

  it('keeps the ground floor a leaf: it imports nothing of the repository', () => {
    expect(edges.filter((edge) => edge.from.startsWith('src/ground/') && !edge.to.startsWith('src/ground/'))).toEqual([]);
  });

  it('names every folder of src/ and every file at its root on purpose (no catch-all)', () => {
    const members = LAYERS.flatMap((layer) => layer.members);
    expect(members).not.toContain('src/');
    const topLevel = new Set(files.filter((file) => file.startsWith('src/')).map((file) => file.split('/').slice(0, 2).join('/') + (file.split('/').length > 2 ? '/' : '')));
    for (const entry of topLevel) expect(members, entry).toContain(entry);
  });
});

describe('the layering check', () => {
  const layers: Layer[] = [
    { name: 'low', members: ['src/low/'] },
    { name: 'mid', members: ['src/mid/', 'src/poller.ts'] },
    { name: 'high', members: ['src/high/', 'src/entry.ts', 'cli/', 'local/'] },
  ];
  const edge = (from: string, to: string): ImportEdge => ({ from, to });

  it('places a file by the longest member that matches it, and nothing by default', () => {
    expect(layerIndexOf('src/low/errors.ts', layers)).toBe(0);
    expect(layerIndexOf('src/poller.ts', layers)).toBe(1);
    expect(layerIndexOf('src/entry.ts', layers)).toBe(2);
    expect(layerIndexOf('src/entry.tsx', layers)).toBe(-1);
    expect(layerIndexOf('src/other/x.ts', layers)).toBe(-1);
  });

  it('passes a graph that only imports down or sideways', () => {
    const graph = [edge('src/high/app.ts', 'src/poller.ts'), edge('src/poller.ts', 'src/low/errors.ts'), edge('cli/run.ts', 'local/stack.ts')];
    expect(checkLayering(graph, layers, ['src/mid/lonely.ts'])).toEqual([]);
  });

  it('fails on an upward import, naming file and layer', () => {
    const violations = checkLayering([edge('src/low/errors.ts', 'src/poller.ts')], layers);
    expect(violations.map(describeViolation)).toEqual(['src/low/errors.ts → src/poller.ts: low imports mid, a higher layer']);
  });

  it('fails on a new folder no layer lists, even one nothing imports', () => {
    expect(checkLayering([], layers, ['src/mid/a.ts', 'src/newcomer/x.ts']).map(describeViolation)).toEqual([
      'src/newcomer/x.ts: in no layer (add its folder to scripts/layering/layers.ts)',
    ]);
  });

  it('fails on a file no layer covers that an import reaches', () => {
    expect(checkLayering([edge('src/poller.ts', 'infra/stack.ts')], layers).map(describeViolation)).toEqual([
      'infra/stack.ts: in no layer (add its folder to scripts/layering/layers.ts)',
    ]);
  });

  it('fails on a cycle between two files of one folder (none is exempt)', () => {
    const graph = [edge('src/mid/run.ts', 'src/mid/run-loop.ts'), edge('src/mid/run-loop.ts', 'src/mid/run.ts')];
    expect(checkLayering(graph, layers).map(describeViolation)).toEqual([
      'cycle src/mid/run-loop.ts → src/mid/run.ts → src/mid/run-loop.ts (src/mid/run-loop.ts → src/mid/run.ts, src/mid/run.ts → src/mid/run-loop.ts)',
    ]);
  });

  it('fails on a cycle across folders of one layer, with the imports that close it', () => {
    const graph = [
      edge('cli/commands/dev.ts', 'local/stack.ts'),
      edge('local/stack.ts', 'local/status-page.ts'),
      edge('local/status-page.ts', 'cli/commands/backlog.ts'),
      edge('cli/commands/backlog.ts', 'cli/commands/dev.ts'),
    ];
    expect(checkLayering(graph, layers).map(describeViolation)).toEqual([
      'cycle cli/commands/backlog.ts → cli/commands/dev.ts → local/stack.ts → local/status-page.ts → cli/commands/backlog.ts ' +
        '(cli/commands/backlog.ts → cli/commands/dev.ts, cli/commands/dev.ts → local/stack.ts, local/stack.ts → local/status-page.ts, local/status-page.ts → cli/commands/backlog.ts)',
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
