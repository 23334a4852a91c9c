/**
 * The exported names of every subpath, compared with public-api.json: the surface changes
 * only on purpose (update the file in the same commit, and say why). The root stays narrow:
 * what a deployment's author calls; plumbing lives in `saga-streams/internal`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SUBPATHS } from './entries';

const EXPECTED = JSON.parse(readFileSync(new URL('./public-api.json', import.meta.url), 'utf8')) as Record<string, string[]>;

describe('public API', () => {
  it('exports exactly the names listed in public-api.json from each subpath', async () => {
    const actual: Record<string, string[]> = {};
    for (const [subpath, source] of Object.entries(SUBPATHS)) {
      actual[subpath] = Object.keys(await import(source)).sort();
    }
    expect(actual).toEqual(EXPECTED);
  }, 60_000);

  it('keeps the root entry to about fifty values', () => {
    expect(EXPECTED['saga-streams']!.length).toBeLessThanOrEqual(50);
  });
});
