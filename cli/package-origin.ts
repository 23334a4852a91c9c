/**
 * Where this copy of saga-streams came from, so that `init` can make a new project depend on
 * the same thing while the package is not on the npm registry: a source checkout (the
 * repository, run through bin/saga-streams.mjs), or an installed package — from a tarball or
 * from a registry, as the npm lockfile of the project that installed it records (npx and
 * `npm install` both keep one beside their node_modules; a global install keeps none).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export type PackageOrigin =
  | { readonly kind: 'checkout'; readonly root: string }
  | { readonly kind: 'tarball'; readonly root: string; readonly tarball: string }
  | { readonly kind: 'registry'; readonly root: string }
  | { readonly kind: 'unknown'; readonly root: string };

/** The package's folder: one level above this file, in cli/ and in dist/ alike (as cli/version.ts). */
export function packageRoot(): string {
  return resolve(fileURLToPath(new URL('..', import.meta.url)));
}

export function packageOrigin(root = packageRoot()): PackageOrigin {
  // The bin's own test for a checkout: the CLI's sources, which the package does not ship.
  if (existsSync(join(root, 'cli', 'main.ts'))) return { kind: 'checkout', root };
  const resolved = lockfileResolved(root);
  if (resolved === undefined) return { kind: 'unknown', root };
  if (/^https?:\/\//.test(resolved.value)) return { kind: 'registry', root };
  if (resolved.value.startsWith('file:')) {
    const tarball = resolve(resolved.project, resolved.value.slice('file:'.length));
    if (isFile(tarball)) return { kind: 'tarball', root, tarball };
  }
  return { kind: 'unknown', root };
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The `resolved` field of the installing project's lockfile entry for `root`, and that
 * project's folder (what a relative `file:` is relative to). The project is the folder above
 * the outermost node_modules; its hidden lockfile (node_modules/.package-lock.json) is
 * read first, as npm itself does.
 */
function lockfileResolved(root: string): { value: string; project: string } | undefined {
  const at = root.indexOf(`${sep}node_modules${sep}`);
  if (at < 0) return undefined;
  const project = root.slice(0, at);
  const key = relative(project, root).split(sep).join('/');
  for (const file of [join(project, 'node_modules', '.package-lock.json'), join(project, 'package-lock.json')]) {
    try {
      const lock = JSON.parse(readFileSync(file, 'utf8')) as { packages?: Record<string, { resolved?: unknown }> };
      const value = lock.packages?.[key]?.resolved;
      if (typeof value === 'string') return { value, project };
    } catch {
      // no such lockfile, or not one npm wrote: try the next
    }
  }
  return undefined;
}
