/**
 * Import this first in a CDK test: it points TMPDIR and HOME at a private temporary folder
 * before aws-cdk-lib loads, so synthesis output (`cdk.out*`, bundles) and CDK's fingerprint
 * cache (`~/.cdk/cache`) stay out of the real temp and home folders; `remove()` deletes it
 * and restores both variables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = mkdtempSync(join(tmpdir(), 'saga-streams-cdk-'));
const saved = { TMPDIR: process.env.TMPDIR, HOME: process.env.HOME };
process.env.TMPDIR = root;
process.env.HOME = root;

function restore(name: 'TMPDIR' | 'HOME'): void {
  if (saved[name] === undefined) delete process.env[name];
  else process.env[name] = saved[name];
}

export const sandbox = {
  root,
  path: (...parts: string[]) => join(root, ...parts),
  remove(): void {
    restore('TMPDIR');
    restore('HOME');
    rmSync(root, { recursive: true, force: true });
  },
};
