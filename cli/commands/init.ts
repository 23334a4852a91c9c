/**
 * `init [dir] --platform aws|cloudflare [--dependency <spec>]`: scaffolds a project that uses
 * saga-streams as a dependency (see cli/templates.ts) — by default the saga-streams this init
 * came from, since the package is not on the registry yet (cli/init-dependency.ts). Refuses to
 * overwrite an existing file.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { CliIo } from '../io';
import { UsageError } from '../exit-codes';
import type { ParsedArgs } from '../args';
import { packVendored, planDependency } from '../init-dependency';
import { dependencyNote, PLATFORMS, projectFiles, type Platform } from '../templates';
import { packageVersion } from '../version';

export function initCommand(args: ParsedArgs, io: CliIo): void {
  if (args.positionals.length > 1) throw new UsageError('init takes at most one directory');
  const platform = (args.string('platform') ?? 'aws') as Platform;
  if (!PLATFORMS.includes(platform)) throw new UsageError(`--platform must be one of ${PLATFORMS.join(', ')} (got ${JSON.stringify(platform)})`);
  const dir = resolve(io.cwd, args.positionals[0] ?? '.');
  const name = (args.string('name') ?? basename(dir)).toLowerCase().replace(/[^a-z0-9-]+/g, '-');
  const version = packageVersion();
  const dependency = planDependency(args.string('dependency'), io.cwd, version);
  const input = { name, platform, version, dependency };
  const files = projectFiles(input);
  const written = [...Object.keys(files), ...(dependency.vendor ? [dependency.vendor.file] : [])];
  const existing = written.filter((file) => existsSync(join(dir, file)));
  if (existing.length > 0) throw new UsageError(`${dir} already has ${existing.join(', ')}: not overwriting`);
  // First: a failed pack leaves no half-made project behind.
  if (dependency.vendor) packVendored(dependency.vendor, dir, io);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  io.out(`created ${name} (${platform}) in ${dir}: ${written.join(', ')}`);
  const note = dependencyNote(input);
  if (note) io.out(note);
  const cd = args.positionals[0] === undefined ? '' : `cd ${args.positionals[0]} && `;
  io.out(`next: ${cd}npm install && npm test, then npm start for the local stack`);
}
