// After `tsc --emitDeclarationOnly`: give relative specifiers in the emitted .d.ts files the
// `.js` extensions Node's ESM resolution (moduleResolution node16/nodenext) requires; the
// sources import without extensions (moduleResolution Bundler).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? 'dist/types');
const SPECIFIER = /(from\s+|import\s*\(\s*)(['"])(\.{1,2}\/[^'"]+)\2/g;

function withExtension(file, spec) {
  if (/\.(js|mjs|cjs|json)$/.test(spec)) return spec;
  const base = resolve(dirname(file), spec);
  if (existsSync(`${base}.d.ts`)) return `${spec}.js`;
  if (existsSync(join(base, 'index.d.ts'))) return `${spec}/index.js`;
  return spec;
}

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (path.endsWith('.d.ts')) {
      const text = readFileSync(path, 'utf8');
      const fixed = text.replace(SPECIFIER, (_, lead, quote, spec) => `${lead}${quote}${withExtension(path, spec)}${quote}`);
      if (fixed !== text) writeFileSync(path, fixed);
    }
  }
}
walk(root);
