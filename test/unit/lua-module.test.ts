/** The generated script module must match lua/*.lua: a stale module would run old scripts. */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as generated from '../../src/generated/lua-scripts';
import { expandIncludes, renderModule, scriptFiles, scriptText, shippedText } from '../../scripts/build-lua.mjs';

const readLua = (path: string) => readFileSync(`lua/${path}`, 'utf8');

describe('generated Lua module', () => {
  it('is current with lua/*.lua (run `npm run build:lua` if this fails)', () => {
    expect(readFileSync('src/generated/lua-scripts.ts', 'utf8')).toBe(renderModule());
  });

  it('blanks whole-line and block comments and drops indentation, keeping every code line in its place', () => {
    const source = ['--[[', '  header', ']]', 'local a = 1 -- trailing stays', '  -- indented comment', "  return 'x--y'"].join('\n');
    expect(shippedText(source)).toBe(['', '', '', 'local a = 1 -- trailing stays', '', "return 'x--y'"].join('\n'));
  });

  it('finds no code the indentation strip could change: no long string, no string continued across lines', () => {
    const files = [...readdirSync('lua').filter((f) => f.endsWith('.lua')), ...readdirSync('lua/lib').map((f) => `lib/${f}`)];
    for (const file of files) {
      const code = shippedText(readLua(file)).split('\n');
      code.forEach((line, i) => {
        expect({ where: `${file}:${i + 1}`, longString: /\[=*\[/.test(line), continued: /\\$/.test(line) }).toEqual({ where: `${file}:${i + 1}`, longString: false, continued: false });
      });
    }
  });

  it('holds every script with the SHA-1 of its text, and no fragment as a script', () => {
    const scripts = Object.values(generated);
    const files = readdirSync('lua').filter((f) => f.endsWith('.lua'));
    expect(scripts.map((s) => s.name).sort()).toEqual(files.map((f) => f.replace(/\.lua$/, '')).sort());
    expect([...scriptFiles()].sort()).toEqual([...files].sort());
    // settle.lua right after claim.lua (both carry lib/flow-lease.lua: one gzip window apart).
    expect(scriptFiles().indexOf('settle.lua')).toBe(scriptFiles().indexOf('claim.lua') + 1);
    for (const script of scripts) {
      expect(script.sha1).toBe(createHash('sha1').update(script.text).digest('hex'));
      const source = expandIncludes(readLua(`${script.name}.lua`), readLua, script.name);
      expect(script.text).toBe(shippedText(source));
      // Comment lines are blanked, never removed: Redis's error line numbers match lua/ (and,
      // past an include, the expanded source).
      expect(script.text.split('\n')).toHaveLength(source.split('\n').length);
      expect(script.text).not.toMatch(/^\s*--/m);
      expect(script.text).toMatch(/KEYS\[1\]/);
    }
  });

  it('ships scripts that include fragments with the fragment text in place of the include line', () => {
    // record-size.lua includes lib/stream-id.lua itself: its text in place of that line, too.
    const fragment = shippedText(expandIncludes(readLua('lib/record-size.lua').replace(/\n$/, ''), readLua, 'lib/record-size.lua'));
    expect(generated.appendScript.text).toContain(fragment);
    expect(generated.publishScript.text).toContain(fragment);
    expect(generated.scheduleMoveScript.text).toContain(shippedText(readLua('lib/schedule-move.lua').replace(/\n$/, '')).split('\n').slice(-10).join('\n'));
    expect(scriptText('schedule-move.lua')).toBe(generated.scheduleMoveScript.text);
  });

  it('keeps fragments free of KEYS and ARGV: the including script passes its keys and arguments', () => {
    for (const file of readdirSync('lua/lib')) {
      expect(shippedText(readLua(`lib/${file}`)), file).not.toMatch(/\b(KEYS|ARGV)\b/);
    }
  });
});

describe('includes (scripts/build-lua.mjs)', () => {
  const files: Record<string, string> = {
    'lib/a.lua': '--[[ a ]]\nlocal function a() return 1 end\n',
    'lib/b.lua': '-- #include lib/a.lua\nlocal function b() return a() + 1 end\n',
    'lib/loop.lua': '-- #include lib/loop.lua\n',
  };
  const read = (path: string) => {
    if (!(path in files)) throw new Error('ENOENT');
    return files[path]!;
  };

  it('replaces an include line with the fragment, its own includes first, each fragment once', () => {
    const source = ['-- #include lib/b.lua', '  -- #include lib/a.lua', 'return b()'].join('\n');
    expect(expandIncludes(source, read, 'x.lua')).toBe(
      ['--[[ a ]]', 'local function a() return 1 end', 'local function b() return a() + 1 end', '', 'return b()'].join('\n'),
    );
  });

  it('leaves an include written inside a block comment alone (a header may show how to include)', () => {
    const source = ['--[[', '  -- #include lib/a.lua', ']]', 'return 1'].join('\n');
    expect(expandIncludes(source, read, 'x.lua')).toBe(source);
  });

  it.each([
    ['a missing fragment', '-- #include lib/none.lua', 'x.lua:1: fragment lib/none.lua not found'],
    ['a path outside lib/', '-- #include ../x.lua', 'x.lua:1: only fragments under lib/ can be included'],
    ['a cycle', 'local x = 1\n-- #include lib/loop.lua', 'lib/loop.lua:1: include cycle x.lua -> lib/loop.lua -> lib/loop.lua'],
    ['a malformed include', '-- #include lib/a.lua extra', 'x.lua:1: write an include as'],
  ])('refuses %s, naming the file and line', (_, source, message) => {
    expect(() => expandIncludes(source, read, 'x.lua')).toThrow(message);
  });
});
