#!/usr/bin/env node
// Compiles lua/*.lua into src/generated/lua-scripts.ts: the script text (embedded with
// JSON.stringify, never a template literal) and its SHA-1, so nothing reads files at run
// time and the same module runs in Node, Lambda and workerd.
// The embedded text is the script with its fragments included and its comment lines
// blanked: the headers and the safety arguments are for readers of lua/, and every function
// bundle (Lambda, Worker) carries this module. Blank lines keep Redis's error line numbers
// pointing at lua/ (past an include, offset by the included lines: see expandIncludes).
//
// Fragments. Files under lua/lib/ are not scripts: they hold Lua shared by several scripts
// (local functions, constants), so a rule written once — how a writer records an entry's
// size, how a scheduled event is moved — cannot drift between the scripts that apply it.
// A script (or a fragment) includes one with a line of its own:
//     -- #include lib/<name>.lua
// which is replaced by that file's text, its own includes expanded first. A fragment is
// included once per script: a later include of the same fragment is left blank, so a
// fragment may include what it needs and a script may include it too. A fragment never
// reads KEYS or ARGV itself — the including script passes its keys and arguments.
// `--check` exits 1 when the committed module differs from what the scripts would produce.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const luaDir = join(root, 'lua');
const target = join(root, 'src', 'generated', 'lua-scripts.ts');

/** `-- #include lib/<name>.lua`, alone on its line; the name cannot leave lua/lib/. */
const INCLUDE = /^--\s*#include\s+(\S+)\s*$/;
const FRAGMENT_PATH = /^lib\/[a-z0-9][a-z0-9-]*\.lua$/;

/**
 * Blanks whole-line comments (`-- …` and `--[[ … ]]` blocks) and drops code lines' indentation
 * (every function bundle carries the text; Lua reads it the same). Line numbers stay. The
 * scripts hold no long strings (`[[ … ]]` outside comments), where indentation would count.
 */
export function shippedText(source) {
  let inBlock = false;
  return source
    .split('\n')
    .map((line) => {
      const trimmed = line.trim();
      if (inBlock) {
        if (trimmed.includes(']]')) inBlock = false;
        return '';
      }
      if (trimmed.startsWith('--[[')) {
        inBlock = !trimmed.includes(']]');
        return '';
      }
      return trimmed.startsWith('--') ? '' : line.trimStart();
    })
    .join('\n');
}

/**
 * The source with every include line replaced by its fragment's text (see the header).
 * `readFragment(path)` returns the text of `lua/<path>`. Throws naming the file and line of
 * an include that is malformed, missing, or part of a cycle.
 */
export function expandIncludes(source, readFragment, name = 'script', included = new Set(), chain = [name]) {
  let inBlock = false;
  return source
    .split('\n')
    .map((line, index) => {
      const trimmed = line.trim();
      // Inside a --[[ … ]] block (a header may show how to include) nothing is an include.
      if (inBlock || trimmed.startsWith('--[[')) {
        inBlock = inBlock ? !trimmed.includes(']]') : !trimmed.includes(']]', 4);
        return line;
      }
      const match = INCLUDE.exec(trimmed);
      if (!match) {
        if (/^--\s*#include\b/.test(trimmed)) throw new Error(`${name}:${index + 1}: write an include as "-- #include lib/<name>.lua"`);
        return line;
      }
      const path = match[1];
      const where = `${name}:${index + 1}`;
      if (!FRAGMENT_PATH.test(path)) throw new Error(`${where}: only fragments under lib/ can be included (got ${path})`);
      if (chain.includes(path)) throw new Error(`${where}: include cycle ${[...chain, path].join(' -> ')}`);
      if (included.has(path)) return '';
      included.add(path);
      let text;
      try {
        text = readFragment(path);
      } catch {
        throw new Error(`${where}: fragment ${path} not found`);
      }
      return expandIncludes(text.replace(/\n$/, ''), readFragment, path, included, [...chain, path]);
    })
    .join('\n');
}

const readLua = (path) => readFileSync(join(luaDir, path), 'utf8');

/** A script's text as Redis runs it: fragments included, comment lines blanked. */
export function scriptText(file) {
  return shippedText(expandIncludes(readLua(file), readLua, file));
}

/**
 * The scripts: lua/*.lua (fragments live in lua/lib/ and are never scripts of their own), in
 * name order, except that settle.lua follows claim.lua: both carry lib/flow-lease.lua, and
 * gzip finds the second copy only within 32 KiB of the first (in name order the scripts
 * between them put it at the window's edge, and a few hundred bytes more cost ~0.8 KiB).
 */
const ADJACENT = { 'claim.lua': 'settle.lua' };
export function scriptFiles() {
  const names = readdirSync(luaDir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.lua'))
    .map((entry) => entry.name)
    .sort();
  const followers = new Set(Object.values(ADJACENT).filter((name) => names.includes(name)));
  return names.filter((name) => !followers.has(name)).flatMap((name) => (followers.has(ADJACENT[name]) ? [name, ADJACENT[name]] : [name]));
}

export function renderModule() {
  const parts = [
    '// Generated by scripts/build-lua.mjs from lua/*.lua. Do not edit; run `npm run build:lua`.',
    "import type { LuaScript } from '../redis/script';",
    '',
  ];
  for (const file of scriptFiles()) {
    const text = scriptText(file);
    const sha = createHash('sha1').update(text).digest('hex');
    const name = file.replace(/\.lua$/, '');
    const ident = name.replace(/-([a-z])/g, (_, c) => c.toUpperCase()) + 'Script';
    parts.push(
      `export const ${ident}: LuaScript = {`,
      `  name: ${JSON.stringify(name)},`,
      `  sha1: ${JSON.stringify(sha)},`,
      `  text: ${JSON.stringify(text)},`,
      '};',
      '',
    );
  }
  return parts.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rendered = renderModule();
  if (process.argv.includes('--check')) {
    const current = readFileSync(target, 'utf8');
    if (current !== rendered) {
      console.error('src/generated/lua-scripts.ts is stale: run `npm run build:lua`');
      process.exit(1);
    }
  } else {
    writeFileSync(target, rendered);
    console.log(`wrote ${target}`);
  }
}
