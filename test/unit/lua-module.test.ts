/** The generated script module must match lua/*.lua: a stale module would run old scripts. */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as generated from '../../src/generated/lua-scripts';
import { renderModule, shippedText } from '../../scripts/build-lua.mjs';

describe('generated Lua module', () => {
  it('is current with lua/*.lua (run `npm run build:lua` if this fails)', () => {
    expect(readFileSync('src/generated/lua-scripts.ts', 'utf8')).toBe(renderModule());
  });

  it('blanks whole-line and block comments but keeps every code line as written', () => {
    const source = ['--[[', '  header', ']]', 'local a = 1 -- trailing stays', '  -- indented comment', "return 'x--y'"].join('\n');
    expect(shippedText(source)).toBe(['', '', '', 'local a = 1 -- trailing stays', '', "return 'x--y'"].join('\n'));
  });

  it('holds every script with the SHA-1 of its text', () => {
    const scripts = Object.values(generated);
    expect(scripts.map((s) => s.name).sort()).toEqual(readdirSync('lua').map((f) => f.replace(/\.lua$/, '')).sort());
    for (const script of scripts) {
      expect(script.sha1).toBe(createHash('sha1').update(script.text).digest('hex'));
      const source = readFileSync(`lua/${script.name}.lua`, 'utf8');
      expect(script.text).toBe(shippedText(source));
      // Comment lines are blanked, never removed: Redis's error line numbers match lua/.
      expect(script.text.split('\n')).toHaveLength(source.split('\n').length);
      expect(script.text).not.toMatch(/^\s*--/m);
      expect(script.text).toMatch(/KEYS\[1\]/);
    }
  });
});
