/**
 * CLI test fixtures: a deployment config module written to a temp dir per test (its own
 * stream names, so suites never collide), and an in-process IO that records output.
 * The config's handler dead-letters a payload `reject-once` the first time it sees its
 * event id and acks it afterwards — what a redrive after a fix looks like.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../../cli/io';
import { uniquePrefix } from '../support/redis';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface FixtureConfig {
  readonly path: string;
  readonly stream: string;
  readonly dlt: string;
  readonly group: string;
}

/** The default handler: dead-letters `reject-once` on first sight, acks everything else. */
const DEFAULT_HANDLER = `entryConsumer(({ eventId, payload }) => {
        if (new TextDecoder().decode(payload) === 'reject-once' && !rejectedOnce.has(eventId)) {
          rejectedOnce.add(eventId);
          throw new Rejection('not_yet');
        }
        handled.push(eventId);
      })`;

export function writeFixtureConfig(handler = DEFAULT_HANDLER): FixtureConfig {
  const stream = `${uniquePrefix()}:{cli}:events`;
  const src = (module: string) => JSON.stringify(join(REPO_ROOT, 'src', module));
  const text = `
import { defineConfig } from ${src('deployment/define-config.ts')};
import { entryConsumer } from ${src('deployment/consumers.ts')};
import { Rejection } from ${src('verdict/verdict.ts')};

const stream = ${JSON.stringify(stream)};
const rejectedOnce = new Set<string>();
export const handled: string[] = [];

export default defineConfig({
  name: 'cli-test',
  redis: { tcp: {} },
  streams: { [stream]: { keyTag: 'cli', auth: { mode: 'hmac', keyId: 'k1', keyEnv: 'CLI_TEST_KEY', producer: 'tester' } } },
  routes: { 'thing.happened': stream },
  consumers: {
    things: {
      stream,
      group: 'things',
      schedule: '* * * * *',
      settings: { runBudgetMs: 5000, minIdleMs: 10000 },
      handler: ${handler},
    },
  },
  trim: { schedule: '*/5 * * * *' },
});
`;
  const dir = mkdtempSync(join(tmpdir(), 'saga-streams-cli-'));
  const path = join(dir, 'saga.config.ts');
  // Like a project of its own: an ESM package, so tsx loads the .ts config as a module.
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(path, text);
  return { path, stream, dlt: `${stream}:dlt`, group: 'things' };
}

export const TEST_KEY = `hex:${randomBytes(32).toString('hex')}`;

export interface RecordingIo extends CliIo {
  readonly stdout: string[];
  readonly stderr: string[];
  /** stdout lines parsed as JSON. */
  json(): unknown[];
}

export function recordingIo(env: Record<string, string | undefined>, cwd = REPO_ROOT): RecordingIo {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (line) => stdout.push(line),
    err: (line) => stderr.push(line),
    progress: (line) => stderr.push(line),
    env,
    cwd,
    signal: new AbortController().signal,
    json: () => stdout.map((line) => JSON.parse(line) as unknown),
  };
}
