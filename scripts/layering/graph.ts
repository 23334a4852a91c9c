// The import graph of the repository's own modules, for the layering check.
// Every static import counts, `import type` included: the layering is about what a module may
// know, and a type names a concept as surely as a value does. Dynamic `import()` counts too —
// a lazily loaded module is still a dependency. Imports of packages (no leading dot) are not edges.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import: both ends are repository-relative paths with forward slashes. */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
}

const SOURCE = /\.(ts|mts|mjs|js)$/;
const RESOLVE_SUFFIXES = ['', '.ts', '.mts', '.mjs', '.js', '/index.ts'];

const toPosix = (path: string): string => path.split(sep).join('/');

/** The source files under `dir`, or `dir` itself when it names one file. */
function sourceFilesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  if (statSync(dir).isFile()) return [dir];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFilesUnder(path);
    return SOURCE.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.d.mts') ? [path] : [];
  });
}

/** The specifiers a file imports, type-only and dynamic imports included. */
export function specifiersOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName);
}

function resolveRelative(fromFile: string, specifier: string): string | undefined {
  const base = resolve(dirname(fromFile), specifier);
  for (const suffix of RESOLVE_SUFFIXES) {
    const candidate = base + suffix;
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Every source file under `dirs` (relative to `root`), as repository paths: what the check must place. */
export function sourceFiles(root: string, dirs: readonly string[]): string[] {
  return dirs.flatMap((dir) => sourceFilesUnder(join(root, dir))).map((file) => toPosix(relative(root, file)));
}

/**
 * Edges between the repository's files under `dirs` (relative to `root`). An import that
 * resolves outside those folders is kept (its target is still a repository path) so the checker
 * can place it; an unresolvable relative import throws, since a silent gap would hide an edge.
 */
export function importGraph(root: string, dirs: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of dirs.flatMap((dir) => sourceFilesUnder(join(root, dir)))) {
    for (const specifier of specifiersOf(readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = resolveRelative(file, specifier);
      if (target === undefined) throw new Error(`${toPosix(relative(root, file))}: cannot resolve import '${specifier}'`);
      edges.push({ from: toPosix(relative(root, file)), to: toPosix(relative(root, target)) });
    }
  }
  return edges;
}
