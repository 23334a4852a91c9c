/**
 * The saga-streams dependency `init` writes. The package is not on the npm registry yet, so
 * `^version` would not install: by default the project depends on where this init came from
 * (package-origin.ts):
 * - installed from a tarball → `file:` that tarball;
 * - a source checkout → the checkout built and packed into the project's vendor/, as a user
 *   gets the package. (A `file:` link to the checkout would install it as it is — npm runs no
 *   prepack for a linked folder, so no dist/ — and the linked CLI would run the checkout's
 *   sources beside the built dist/ the project imports: two copies of every class.)
 * - installed from a registry → `^version`;
 * - installed with no record of where from (a global install) → that package packed into vendor/.
 * `--dependency <spec>` overrides it: a version, range or dist-tag, a tarball or a built
 * package folder (checked to exist), or a git or https URL.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { UsageError } from './exit-codes';
import type { CliIo } from './io';
import { packageOrigin, type PackageOrigin } from './package-origin';

export interface DependencyPlan {
  readonly spec: string;
  /** Installs from the npm registry (a version, range or tag): nothing to say about it. */
  readonly fromRegistry: boolean;
  /** Where it comes from, in words (init's output, the scaffold's README). */
  readonly origin: string;
  /** A tarball to pack into the project first: its project-relative path, the folder packed, and whether to build it. */
  readonly vendor?: { readonly file: string; readonly packageDir: string; readonly build: boolean };
}

export function planDependency(given: string | undefined, cwd: string, version: string, origin: PackageOrigin = packageOrigin()): DependencyPlan {
  if (given !== undefined) return { ...dependencySpec(given, cwd), origin: 'given to init with --dependency' };
  const vendored = (packageDir: string, build: boolean, origin: string): DependencyPlan => {
    const file = `vendor/saga-streams-${version}.tgz`;
    return { spec: `file:${file}`, fromRegistry: false, origin, vendor: { file, packageDir, build } };
  };
  switch (origin.kind) {
    case 'registry':
      return { spec: `^${version}`, fromRegistry: true, origin: 'the npm registry' };
    case 'tarball':
      return { spec: `file:${origin.tarball}`, fromRegistry: false, origin: 'the tarball this saga-streams was installed from' };
    case 'checkout':
      return vendored(origin.root, true, `the checkout ${origin.root}, built and packed into vendor/ by init`);
    case 'unknown':
      return vendored(origin.root, false, `the saga-streams installed in ${origin.root}, packed into vendor/ by init: that install kept no record of where it came from`);
  }
}

const FORMS = 'a version, range or dist-tag (^0.1.0, latest), a tarball or built package folder (file:../saga-streams-0.1.0.tgz), or a git or https URL';
const COMPARATOR = /^(?:[~^]|[<>]=?|=)?v?(?:\d+|[xX*])(?:\.(?:\d+|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const DIST_TAG = /^[a-z][a-z0-9._-]*$/i;
const TARBALL = /\.(?:tgz|tar\.gz|tar)$/i;
const URL_SPEC = /^(?:git\+(?:https?|ssh|file)|git|https?):\/\//;
const HOSTED = /^(?:github|gitlab|bitbucket):[\w.-]+\/[\w.-]+(?:#\S+)?$/;

/** A semver range as npm reads one: `||` alternatives of comparators, or `a - b`. */
function isRange(spec: string): boolean {
  return spec.split('||').every((alternative) => {
    const tokens = alternative.trim().split(/\s+/);
    if (tokens.length === 3 && tokens[1] === '-') return COMPARATOR.test(tokens[0]!) && COMPARATOR.test(tokens[2]!);
    return tokens.every((token) => COMPARATOR.test(token));
  });
}

/** `--dependency` checked: a UsageError naming the option and what it takes, never a spec npm would refuse later. */
export function dependencySpec(given: string, cwd: string): { spec: string; fromRegistry: boolean } {
  const spec = given.trim();
  const refuse = (why: string) => new UsageError(`--dependency ${JSON.stringify(given)}: ${why}`);
  if (spec === '') throw refuse(`is empty; give ${FORMS}`);
  if (URL_SPEC.test(spec)) {
    try {
      new URL(spec);
    } catch {
      throw refuse('is not a valid URL');
    }
    return { spec, fromRegistry: false };
  }
  if (HOSTED.test(spec)) return { spec, fromRegistry: false };
  const isPath = spec.startsWith('file:') || /^(?:\.{1,2}\/|\/|~\/)/.test(spec) || TARBALL.test(spec);
  if (isPath) return { spec: `file:${packagePath(spec.replace(/^file:/, ''), cwd, refuse)}`, fromRegistry: false };
  if (isRange(spec) || DIST_TAG.test(spec)) return { spec, fromRegistry: true };
  throw refuse(`is not ${FORMS}`);
}

/** The absolute path of a tarball, or of a built saga-streams folder (not a source checkout). */
function packagePath(text: string, cwd: string, refuse: (why: string) => UsageError): string {
  const path = text.startsWith('~/') ? join(homedir(), text.slice(2)) : resolve(cwd, text);
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch {
    throw refuse(`${path} does not exist`);
  }
  if (stat.isFile()) {
    if (!TARBALL.test(path)) throw refuse(`${path} is not a tarball (.tgz, .tar.gz or .tar, as npm pack makes)`);
    return path;
  }
  let name: unknown;
  try {
    name = (JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { name?: unknown }).name;
  } catch {
    throw refuse(`${path} has no package.json`);
  }
  if (name !== 'saga-streams') throw refuse(`${path} is not the saga-streams package (its package.json names ${JSON.stringify(name)})`);
  if (existsSync(join(path, 'cli', 'main.ts')) || !existsSync(join(path, 'dist'))) {
    throw refuse(`${path} is a source checkout: npm would link it as it is, unbuilt. Run init from that checkout (it packs it), or pass the tarball \`npm pack\` makes there`);
  }
  return path;
}

/** Packs the plan's package folder into `projectDir` (building it first from a checkout). */
export function packVendored(vendor: NonNullable<DependencyPlan['vendor']>, projectDir: string, io: CliIo): void {
  const target = join(projectDir, vendor.file);
  const folder = join(target, '..');
  const created = !existsSync(folder);
  mkdirSync(folder, { recursive: true });
  try {
    if (vendor.build) {
      io.err(`building saga-streams in ${vendor.packageDir} (npm run build, about 20 s)…`);
      npm(['run', 'build'], vendor.packageDir);
    }
    const packed = JSON.parse(npm(['pack', '--ignore-scripts', '--json', '--pack-destination', folder], vendor.packageDir)) as Array<{ filename: string }>;
    const written = join(folder, packed[0]!.filename);
    if (written !== target) renameSync(written, target);
  } catch (error) {
    if (created) rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

/** Runs npm in `cwd`; its stdout, or an error carrying the tail of its output. */
function npm(args: readonly string[], cwd: string): string {
  const run = spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' }, maxBuffer: 64 * 1024 * 1024 });
  if (run.status === 0) return run.stdout;
  const output = `${run.stdout ?? ''}${run.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
  const why = run.error ? run.error.message : `exit ${run.status ?? run.signal}`;
  throw new Error(`npm ${args.join(' ')} in ${cwd} failed (${why}); pass --dependency <spec> to init instead.\n${output}`);
}
