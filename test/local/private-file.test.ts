/** writePrivateFile: secrets land only in a fresh 0600 file renamed over the target. */
import { mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writePrivateFile } from '../../local/private-file';

describe('writePrivateFile', () => {
  it('never writes through a symlink or a leftover at its temporary name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'private-file-'));
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'untouched\n');
    const target = join(dir, '.dev.vars');
    symlinkSync(victim, `${target}.${process.pid}.tmp`);

    writePrivateFile(target, 'TOKEN=secret\n');

    expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
    expect(readFileSync(target, 'utf8')).toBe('TOKEN=secret\n');
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).sort()).toEqual(['.dev.vars', 'victim']);
  });
});
