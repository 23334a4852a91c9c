/** The generated script module must match lua/*.lua: a stale module would run old scripts. */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as generated from '../../src/generated/lua-scripts';
import { renderModule } from '../../scripts/build-lua.mjs';

describe('generated Lua module', () => {
  it('is current with lua/*.lua (run `npm run build:lua` if this fails)', () => {
    expect(readFileSync('src/generated/lua-scripts.ts', 'utf8')).toBe(renderModule());
  });

  it('holds every script with the SHA-1 of its text', () => {
    const scripts = Object.values(generated);
    expect(scripts.map((s) => s.name).sort()).toEqual(readdirSync('lua').map((f) => f.replace(/\.lua$/, '')).sort());
    for (const script of scripts) {
      expect(script.sha1).toBe(createHash('sha1').update(script.text).digest('hex'));
      expect(script.text).toBe(readFileSync(`lua/${script.name}.lua`, 'utf8'));
      expect(script.text).toMatch(/KEYS\[1\]/);
    }
  });
});
