/**
 * The layering check over an import graph: no import from a layer to a higher one, no cycle
 * between files, and every scanned file in some layer. Pure (no file system), so its own test can
 * feed it a small graph and watch it fail.
 */
import type { ImportEdge } from './graph';
import type { Layer } from './layers';

export type Violation =
  | { readonly kind: 'upward'; readonly edge: ImportEdge; readonly fromLayer: string; readonly toLayer: string }
  | {
      readonly kind: 'cycle';
      /** One cycle, in order, and the import that makes each step. */
      readonly modules: readonly string[];
      readonly edges: readonly ImportEdge[];
      /** Every module tangled with it (the strongly connected component): all must be untied. */
      readonly component: readonly string[];
    }
  | { readonly kind: 'unplaced'; readonly file: string };

/** The index in `layers` of the layer owning `file` (longest matching member), or -1. */
export function layerIndexOf(file: string, layers: readonly Layer[]): number {
  let best = -1;
  let bestLength = -1;
  layers.forEach((layer, index) => {
    for (const member of layer.members) {
      const matches = member.endsWith('/') ? file.startsWith(member) : file === member;
      if (matches && member.length > bestLength) [best, bestLength] = [index, member.length];
    }
  });
  return best;
}

function upwardAndUnplaced(edges: readonly ImportEdge[], files: readonly string[], layers: readonly Layer[]): Violation[] {
  const violations: Violation[] = [];
  const unplaced = new Set<string>();
  // Every scanned file, imported or not, and every file an import reaches.
  for (const file of [...files, ...edges.flatMap((edge) => [edge.from, edge.to])]) {
    if (layerIndexOf(file, layers) < 0 && !unplaced.has(file)) {
      unplaced.add(file);
      violations.push({ kind: 'unplaced', file });
    }
  }
  for (const edge of edges) {
    const from = layerIndexOf(edge.from, layers);
    const to = layerIndexOf(edge.to, layers);
    if (from >= 0 && to > from) violations.push({ kind: 'upward', edge, fromLayer: layers[from]!.name, toLayer: layers[to]!.name });
  }
  return violations;
}

/** Strongly connected components of more than one file (Tarjan). */
function stronglyConnected(graph: ReadonlyMap<string, ReadonlyMap<string, ImportEdge>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) components.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components;
}

/** One cycle through `start` inside its component, as the modules visited in order. */
function cycleThrough(start: string, component: ReadonlySet<string>, graph: ReadonlyMap<string, ReadonlyMap<string, ImportEdge>>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of [...(graph.get(node)?.keys() ?? [])].sort()) {
      if (!component.has(next)) continue;
      if (next === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return path;
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

/**
 * Every cycle between files, wherever they sit: two files of one folder importing each other
 * are as tangled as two folders (neither can be read, tested or moved without the other), and
 * none is exempt.
 */
function cycles(edges: readonly ImportEdge[]): Violation[] {
  // One witnessing import per pair of files is enough to name the cycle.
  const graph = new Map<string, Map<string, ImportEdge>>();
  for (const edge of edges) {
    if (edge.from === edge.to) continue;
    if (!graph.has(edge.from)) graph.set(edge.from, new Map());
    if (!graph.get(edge.from)!.has(edge.to)) graph.get(edge.from)!.set(edge.to, edge);
  }
  return stronglyConnected(graph).map((component) => {
    const modules = cycleThrough(component[0]!, new Set(component), graph);
    const edges = modules.map((module, i) => graph.get(module)!.get(modules[(i + 1) % modules.length]!)!);
    return { kind: 'cycle', modules, edges, component };
  });
}

/** The violations of `layers` by the import graph `edges` over the scanned `files`. */
export function checkLayering(edges: readonly ImportEdge[], layers: readonly Layer[], files: readonly string[] = []): Violation[] {
  return [...upwardAndUnplaced(edges, files, layers), ...cycles(edges)];
}

/** One line per violation, naming the files and layers involved. */
export function describeViolation(violation: Violation): string {
  switch (violation.kind) {
    case 'upward':
      return `${violation.edge.from} → ${violation.edge.to}: ${violation.fromLayer} imports ${violation.toLayer}, a higher layer`;
    case 'cycle': {
      const others = violation.component.filter((module) => !violation.modules.includes(module));
      const tangled = others.length > 0 ? `; also tangled: ${others.join(', ')}` : '';
      return `cycle ${[...violation.modules, violation.modules[0]].join(' → ')} (${violation.edges.map((e) => `${e.from} → ${e.to}`).join(', ')})${tangled}`;
    }
    case 'unplaced':
      return `${violation.file}: in no layer (add its folder to scripts/layering/layers.ts)`;
  }
}
