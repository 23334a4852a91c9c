#!/usr/bin/env node
// The package's `saga-streams` command. Installed, it runs the built CLI (dist/cli.js: plain
// JavaScript, no TypeScript loader at run time; the user's saga.config.ts loads through jiti).
// In a source checkout (cli/main.ts present, not shipped in the package) it runs the sources
// through tsx, so the repository's own `npm start` and tests need no build; tsx is given the
// repository's tsconfig.json whatever the working folder, for its `paths` (saga-streams' own
// name → its sources, which the example package imports).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
  await import(source.href);
} else {
  await import('../dist/cli.js');
}
