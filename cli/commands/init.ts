/**
 * `init [dir] --platform aws|cloudflare`: scaffolds a project that uses saga-streams as a
 * dependency (see cli/templates.ts). Refuses to overwrite an existing file.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { CliIo } from '../io';
import { UsageError } from '../exit-codes';
import type { ParsedArgs } from '../args';
import { PLATFORMS, projectFiles, type Platform } from '../templates';
import { packageVersion } from '../version';

export function initCommand(args: ParsedArgs, io: CliIo): void {
  if (args.positionals.length > 1) throw new UsageError('init takes at most one directory');
  const platform = (args.string('platform') ?? 'aws') as Platform;
  if (!PLATFORMS.includes(platform)) throw new UsageError(`--platform must be one of ${PLATFORMS.join(', ')} (got ${JSON.stringify(platform)})`);
  const dir = resolve(io.cwd, args.positionals[0] ?? '.');
  const name = (args.string('name') ?? basename(dir)).toLowerCase().replace(/[^a-z0-9-]+/g, '-');
  const files = projectFiles({ name, platform, version: packageVersion() });
  const existing = Object.keys(files).filter((file) => existsSync(join(dir, file)));
  if (existing.length > 0) throw new UsageError(`${dir} already has ${existing.join(', ')}: not overwriting`);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  io.out(`created ${name} (${platform}) in ${dir}: ${Object.keys(files).join(', ')}`);
  io.out('next: npm install && npm test');
}
