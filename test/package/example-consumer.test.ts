/**
 * The example is a consumer: examples/order-saga is a package of its own (an npm workspace)
 * that imports saga-streams by name and declares every package it imports, reaching into
 * the repository by no relative path; the root's config imports it by its package name.
 * (That `npm pack` leaves it out is pack.test.ts's.)
 */
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../cli/fixture';

const EXAMPLE = join(REPO_ROOT, 'examples', 'order-saga');
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, any>;
const specifiers = (file: string) => [...readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/gm)].map((m) => m[1]!);

describe('the example package (examples/order-saga)', () => {
  const manifest = json(join(EXAMPLE, 'package.json'));

  it('is its own private package depending on saga-streams, a workspace of the root', () => {
    expect(manifest).toMatchObject({ name: 'order-saga-example', private: true, dependencies: { 'saga-streams': 'file:../..' } });
    expect(json(join(REPO_ROOT, 'package.json')).workspaces).toContain('examples/order-saga');
    // npm ci linked it: the root's config resolves it by name.
    expect(realpathSync(join(REPO_ROOT, 'node_modules', 'order-saga-example'))).toBe(realpathSync(EXAMPLE));
  });

  it('imports saga-streams by name, declares what it imports, and reaches outside its folder by no path', () => {
    const files = readdirSync(EXAMPLE).filter((name) => name.endsWith('.ts'));
    const imported = files.flatMap((name) => specifiers(join(EXAMPLE, name)));
    expect(imported).toContain('saga-streams');
    const escaping = imported.filter((s) => s.startsWith('..') || s.startsWith('/'));
    expect(escaping).toEqual([]);
    const packages = new Set(imported.filter((s) => !s.startsWith('.')).map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2) : s.split('/').slice(0, 1)).join('/')));
    expect([...packages].filter((name) => !(name in manifest.dependencies))).toEqual([]);
  });

  it('is what the root config imports, by its package name', () => {
    const rootConfig = specifiers(join(REPO_ROOT, 'saga.config.ts'));
    expect(rootConfig).toContain('order-saga-example');
    expect(rootConfig.filter((s) => s.includes('examples/'))).toEqual([]);
  });
});
