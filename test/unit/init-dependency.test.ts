/**
 * The dependency `saga-streams init` writes (cli/init-dependency.ts, cli/package-origin.ts):
 * where this saga-streams came from, read from folder layouts as npm leaves them (a checkout,
 * a project or npx cache that installed a tarball or a registry version, a global install
 * with no lockfile), and `--dependency` checked with an error naming the option. Packing and
 * installing for real: test/package/scaffold-journey.test.ts.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../cli/exit-codes';
import { dependencySpec, planDependency } from '../../cli/init-dependency';
import { packageOrigin } from '../../cli/package-origin';

function folder(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'saga-streams-origin-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

const PACKAGE = JSON.stringify({ name: 'saga-streams', version: '0.1.0' });
const lock = (resolved: string) => JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/saga-streams': { version: '0.1.0', resolved } } });

describe('packageOrigin', () => {
  it('a checkout: the CLI sources are there', () => {
    const root = folder({ 'package.json': PACKAGE, 'cli/main.ts': '' });
    expect(packageOrigin(root)).toEqual({ kind: 'checkout', root });
  });

  it('installed from a tarball: the tarball the hidden lockfile names, relative to the installing project', () => {
    const base = folder({ 'tarballs/saga-streams-0.1.0.tgz': 'x', 'tools/node_modules/saga-streams/package.json': PACKAGE, 'tools/node_modules/.package-lock.json': lock('file:../tarballs/saga-streams-0.1.0.tgz') });
    const root = join(base, 'tools', 'node_modules', 'saga-streams');
    expect(packageOrigin(root)).toEqual({ kind: 'tarball', root, tarball: join(base, 'tarballs', 'saga-streams-0.1.0.tgz') });
  });

  it('installed from a registry (package-lock.json when there is no hidden lockfile)', () => {
    const base = folder({ 'app/node_modules/saga-streams/package.json': PACKAGE, 'app/package-lock.json': lock('https://registry.npmjs.org/saga-streams/-/saga-streams-0.1.0.tgz') });
    const root = join(base, 'app', 'node_modules', 'saga-streams');
    expect(packageOrigin(root)).toEqual({ kind: 'registry', root });
  });

  it('unknown: a global install keeps no lockfile; a tarball that is gone is no origin', () => {
    const global = folder({ 'lib/node_modules/saga-streams/package.json': PACKAGE });
    expect(packageOrigin(join(global, 'lib', 'node_modules', 'saga-streams')).kind).toBe('unknown');
    const moved = folder({ 'app/node_modules/saga-streams/package.json': PACKAGE, 'app/node_modules/.package-lock.json': lock('file:../gone.tgz') });
    expect(packageOrigin(join(moved, 'app', 'node_modules', 'saga-streams')).kind).toBe('unknown');
  });
});

describe('planDependency', () => {
  const root = '/somewhere/saga-streams';

  it('depends on the origin until the package is published: a tarball by path, a checkout or an unrecorded install packed into vendor/', () => {
    expect(planDependency(undefined, '/', '0.1.0', { kind: 'tarball', root, tarball: '/t/saga-streams-0.1.0.tgz' })).toEqual({
      spec: 'file:/t/saga-streams-0.1.0.tgz',
      fromRegistry: false,
      origin: 'the tarball this saga-streams was installed from',
    });
    expect(planDependency(undefined, '/', '0.1.0', { kind: 'checkout', root })).toMatchObject({
      spec: 'file:vendor/saga-streams-0.1.0.tgz',
      fromRegistry: false,
      vendor: { file: 'vendor/saga-streams-0.1.0.tgz', packageDir: root, build: true },
    });
    expect(planDependency(undefined, '/', '0.1.0', { kind: 'unknown', root })).toMatchObject({ spec: 'file:vendor/saga-streams-0.1.0.tgz', vendor: { packageDir: root, build: false } });
  });

  it('a registry install depends on the version range; --dependency wins over any origin', () => {
    expect(planDependency(undefined, '/', '0.1.0', { kind: 'registry', root })).toEqual({ spec: '^0.1.0', fromRegistry: true, origin: 'the npm registry' });
    expect(planDependency('~0.1.0', '/', '0.1.0', { kind: 'checkout', root })).toEqual({ spec: '~0.1.0', fromRegistry: true, origin: 'given to init with --dependency' });
  });
});

describe('--dependency', () => {
  const refusal = (spec: string, cwd = '/') => {
    try {
      dependencySpec(spec, cwd);
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    }
    throw new Error(`${spec} was taken`);
  };

  it.each(['^0.1.0', '0.1.0', '~0.1', '>=0.1.0 <0.2.0', '0.1.x || 0.2.x', '1.0.0 - 1.2.0', '*', 'latest', 'next'])('%s: from the registry, as given', (spec) => {
    expect(dependencySpec(spec, '/')).toEqual({ spec, fromRegistry: true });
  });

  it.each(['https://example.com/saga-streams-0.1.0.tgz', 'git+https://github.com/acme/saga-streams.git#v0.1.0', 'git+ssh://git@github.com/acme/saga-streams.git', 'github:acme/saga-streams#main'])('%s: a URL, as given', (spec) => {
    expect(dependencySpec(spec, '/')).toEqual({ spec, fromRegistry: false });
  });

  it('a tarball or a built package folder: checked, and written as an absolute file: path', () => {
    const base = folder({ 'saga-streams-0.1.0.tgz': 'x', 'built/package.json': PACKAGE, 'built/dist/index.js': '' });
    expect(dependencySpec('./saga-streams-0.1.0.tgz', base)).toEqual({ spec: `file:${join(base, 'saga-streams-0.1.0.tgz')}`, fromRegistry: false });
    expect(dependencySpec(`file:${join(base, 'saga-streams-0.1.0.tgz')}`, '/')).toEqual({ spec: `file:${join(base, 'saga-streams-0.1.0.tgz')}`, fromRegistry: false });
    expect(dependencySpec('file:built', base)).toEqual({ spec: `file:${join(base, 'built')}`, fromRegistry: false });
  });

  it('refuses, naming --dependency: empty, no such file, not a tarball, not saga-streams, a source checkout, nothing npm reads', () => {
    const base = folder({ 'notes.txt': 'x', 'other/package.json': JSON.stringify({ name: 'other' }), 'checkout/package.json': PACKAGE, 'checkout/cli/main.ts': '' });
    expect(refusal('  ')).toMatch(/^--dependency "  ": is empty; give a version, range or dist-tag/);
    expect(refusal('./missing.tgz', base)).toBe(`--dependency "./missing.tgz": ${join(base, 'missing.tgz')} does not exist`);
    expect(refusal('file:notes.txt', base)).toContain('is not a tarball (.tgz, .tar.gz or .tar');
    expect(refusal('file:other', base)).toContain('is not the saga-streams package (its package.json names "other")');
    expect(refusal('./checkout', base)).toContain('is a source checkout: npm would link it as it is, unbuilt');
    expect(refusal('saga streams please')).toMatch(/^--dependency "saga streams please": is not a version, range or dist-tag \(\^0\.1\.0, latest\), a tarball or built package folder/);
    expect(refusal('https://exa mple.com/x.tgz')).toContain('is not a valid URL');
  });
});
