/**
 * The configuration reference (docs/configuration.md) keeps up with the code: every key of
 * each config schema has a row in its section's reference table (`| key | type | default |
 * rules |`), and no row names a key the schema no longer has. Record entries are written
 * `<name>` in the document (`streams.<stream>.auth`) and `*` by the schema walk.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { streamAuthSchema } from '../../src/auth/modes';
import { consumerConfigSchema } from '../../src/consume/config';
import { deploymentSchema } from '../../src/deployment/schema';
import { publisherConfigSchema } from '../../src/publish/config';
import { retentionConfigSchema } from '../../src/retention/config';
import { configKeysOf } from '../support/zod-keys';

const REFERENCE = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));
const TABLE_HEADER = /^\|\s*key\s*\|\s*type\s*\|\s*default\s*\|\s*rules\s*\|\s*$/;

/** Each `## ` section's lines, by heading. */
function sections(markdown: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) found.set(line.slice(3).trim(), (current = []));
    else current?.push(line);
  }
  return found;
}

/** The keys of a section's reference tables (first cell, one backticked path), `<…>` segments as `*`. */
function documentedKeys(lines: readonly string[]): string[] {
  const keys: string[] = [];
  let inTable = false;
  for (const line of lines) {
    if (TABLE_HEADER.test(line)) {
      inTable = true;
      continue;
    }
    if (!line.startsWith('|')) inTable = false;
    if (!inTable || /^\|\s*-/.test(line)) continue;
    const cell = line.split('|')[1]!.trim();
    const path = /^`([^`]+)`$/.exec(cell)?.[1];
    if (path === undefined) throw new Error(`docs/configuration.md: a reference row must start with one \`key\`: ${line}`);
    keys.push(path.replace(/<[^>]+>/g, '*'));
  }
  return keys;
}

const SCHEMAS = [
  { section: 'Deployment config', schema: deploymentSchema, deepKey: 'streams.*.auth.keys.*.retired' },
  { section: 'Consumer config', schema: consumerConfigSchema, deepKey: 'keys.publishDedupePrefix' },
  { section: 'Stream auth', schema: streamAuthSchema, deepKey: 'keys.*.key' },
  { section: 'Publisher config', schema: publisherConfigSchema, deepKey: 'routes.*.publishDedupePrefix' },
  { section: 'Retention config', schema: retentionConfigSchema, deepKey: 'reaper.maxPerRun' },
] as const;

describe('docs/configuration.md', () => {
  const bySection = sections(readFileSync(REFERENCE, 'utf8'));

  it.each(SCHEMAS)('lists every key of the $section schema, and no other', ({ section, schema, deepKey }) => {
    const lines = bySection.get(section);
    expect(lines, `docs/configuration.md has no "## ${section}" section`).toBeDefined();
    const expected = configKeysOf(schema);
    // The walk reaches nested keys (records, unions, lazy schemas), or this test proves nothing.
    expect(expected).toContain(deepKey);
    const documented = new Set(documentedKeys(lines!));
    const missing = expected.filter((key) => !documented.has(key));
    const unknown = [...documented].filter((key) => !expected.includes(key));
    expect(missing, `keys missing from docs/configuration.md "## ${section}"`).toEqual([]);
    expect(unknown, `rows of docs/configuration.md "## ${section}" naming no key of the schema`).toEqual([]);
  });
});
