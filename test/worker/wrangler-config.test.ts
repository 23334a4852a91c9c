/**
 * Issue 7, Cloudflare half, offline: infra/cloudflare/wrangler.toml parsed and checked
 * against saga.config.ts and the Worker's exports, the checker shown to catch each kind of
 * drift, and `wrangler deploy --dry-run` bundling the Worker without network or account.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import worker from '../../functions/cloudflare/worker';
import { wranglerToml } from '../../functions/cloudflare/wrangler-toml';
import { checkWranglerConfig, MAX_COMPATIBILITY_DATE, workerSecretNames, type WranglerConfig } from '../../infra/cloudflare/check';
import sagaConfig from '../../saga.config';
import { defineConfig } from '../../src/deployment/define-config';
import { POLL_CRON, TRIM_CRON, WAKE_UP_BINDING, workerDeployment } from './fixture';

const WRANGLER_TOML = resolve('infra/cloudflare/wrangler.toml');
const wrangler = parse(readFileSync(WRANGLER_TOML, 'utf8')) as unknown as WranglerConfig;

describe('infra/cloudflare/wrangler.toml', () => {
  it('agrees with saga.config.ts and the Worker entry', () => {
    expect(checkWranglerConfig(wrangler, sagaConfig, worker)).toEqual([]);
    expect(existsSync(resolve(dirname(WRANGLER_TOML), wrangler.main!))).toBe(true);
    expect(wrangler.compatibility_date! <= MAX_COMPATIBILITY_DATE).toBe(true);
  });

  it('declares exactly the secrets the Worker reads, and no secret value', () => {
    expect([...(wrangler.secrets?.required ?? [])].sort()).toEqual(workerSecretNames(sagaConfig));
    expect(workerSecretNames(sagaConfig)).not.toContain('REDIS_URL'); // TCP only: not a Worker secret
    expect(wrangler).not.toHaveProperty('vars'); // values never live in the file
  });

  it('catches each kind of drift', () => {
    const config = workerDeployment('t-check');
    const good: WranglerConfig = {
      main: 'worker.ts',
      compatibility_date: '2026-01-01',
      triggers: { crons: [POLL_CRON, TRIM_CRON] },
      queues: { producers: [{ binding: WAKE_UP_BINDING, queue: 'wake' }], consumers: [{ queue: 'wake' }] },
      secrets: { required: workerSecretNames(config) },
    };
    const handlers = { fetch: () => {}, scheduled: () => {}, queue: () => {} };
    expect(checkWranglerConfig(good, config, handlers)).toEqual([]);
    const problems = (changes: Partial<WranglerConfig>, exports: object = handlers) => checkWranglerConfig({ ...good, ...changes }, config, exports);

    expect(problems({ triggers: { crons: [POLL_CRON, TRIM_CRON, '1 2 * * *'] } })).toEqual(['cron "1 2 * * *" runs no job']);
    expect(problems({ triggers: { crons: [POLL_CRON] } })).toEqual([`trim.schedule "${TRIM_CRON}" needs the cron trigger "${TRIM_CRON}"`]);
    expect(problems({ queues: { producers: [{ binding: 'OTHER', queue: 'wake' }], consumers: [{ queue: 'wake' }] } })).toEqual([
      `wakeUp.binding ${WAKE_UP_BINDING} has no queue producer binding`,
    ]);
    expect(problems({ queues: { producers: [{ binding: WAKE_UP_BINDING, queue: 'wake' }], consumers: [{ queue: 'wakes' }] } })).toEqual([
      'queue "wakes" is consumed but no producer binding sends to it',
      `producer binding ${WAKE_UP_BINDING} sends to queue "wake", which no consumer reads`,
    ]);
    expect(problems({ queues: {} })).toContain('wake-up consumers exist but no queue consumer is configured');
    expect(problems({ compatibility_date: '2026-04-27' })).toEqual([`compatibility_date 2026-04-27 is later than the pinned workerd supports (${MAX_COMPATIBILITY_DATE})`]);
    expect(problems({ secrets: { required: ['SHOP_TOKEN', 'EXTRA'] } })).toEqual([
      'secrets.required lacks OPS_ADMIN_TOKEN, SHOP_KEY, UPSTASH_REDIS_REST_TOKEN, UPSTASH_REDIS_REST_URL',
      'secrets.required names EXTRA, which the Worker never reads',
    ]);
    expect(problems({}, { fetch: () => {} })).toEqual(['cron triggers need a scheduled handler', 'queue consumers need a queue handler']);
  });

  it('wants each schedule in Cloudflare\'s day-of-week numbering, not copied from the config', () => {
    const base = workerDeployment('t-dow');
    const config = defineConfig({ ...base.data, consumers: { ...base.data.consumers, poller: { ...base.data.consumers.poller!, schedule: '0 9 * * 1-5' } } } as never);
    const wranglerWith = (crons: string[]): WranglerConfig => ({
      main: 'worker.ts',
      compatibility_date: '2026-01-01',
      triggers: { crons },
      queues: { producers: [{ binding: WAKE_UP_BINDING, queue: 'wake' }], consumers: [{ queue: 'wake' }] },
      secrets: { required: workerSecretNames(config) },
    });
    const handlers = { fetch: () => {}, scheduled: () => {}, queue: () => {} };
    // Copied as written, Cloudflare would poll Sunday to Thursday.
    expect(checkWranglerConfig(wranglerWith(['0 9 * * 1-5', TRIM_CRON]), config, handlers)).toEqual([
      'cron "0 9 * * 1-5" runs no job',
      'consumers.poller.schedule "0 9 * * 1-5" needs the cron trigger "0 9 * * MON-FRI"',
    ]);
    expect(checkWranglerConfig(wranglerWith(['0 9 * * MON-FRI', TRIM_CRON]), config, handlers)).toEqual([]);
  });

  it('generates a wrangler.toml that passes the check: triggers in Cloudflare\'s form, relay included', () => {
    const base = workerDeployment('t-gen');
    const config = defineConfig({
      ...base.data,
      consumers: { ...base.data.consumers, poller: { ...base.data.consumers.poller!, schedule: '0 9 * * 1-5' } },
      postgres: { relay: { schedule: '*/5 * * * *' } },
    } as never);
    const generated = parse(wranglerToml(config, { main: 'worker.ts', queueName: 'wake' })) as unknown as WranglerConfig;
    expect(generated.triggers?.crons).toEqual(expect.arrayContaining(['0 9 * * MON-FRI', '*/5 * * * *']));
    expect(generated.triggers?.crons).not.toContain('0 9 * * 1-5');
    expect(checkWranglerConfig(generated, config, { fetch: () => {}, scheduled: () => {}, queue: () => {} })).toEqual([]);
  });

  it('wrangler deploy --dry-run bundles the Worker offline', { timeout: 60_000 }, async () => {
    const work = mkdtempSync(join(tmpdir(), 'wrangler-dry-run-'));
    try {
      const outdir = join(work, 'out');
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        [resolve('node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir, '--config', WRANGLER_TOML],
        {
          // Wrangler's logs and settings go to the temp folder, never the home folder.
          env: { ...process.env, HOME: work, XDG_CONFIG_HOME: join(work, 'config'), WRANGLER_SEND_METRICS: 'false', CI: '1', NO_COLOR: '1' },
          timeout: 55_000,
        },
      );
      const output = `${stdout}\n${stderr}`;
      expect(output).toContain('--dry-run: exiting now.');
      expect(output).toMatch(/env\.WAKE_UP_QUEUE \(order-saga-wake-ups\)\s+Queue/);
      const bundle = join(outdir, 'worker.js');
      expect(statSync(bundle).size).toBeGreaterThan(10_000);
      const code = readFileSync(bundle, 'utf8');
      expect(code).not.toMatch(/from\s*["']node:|require\(["']ioredis/); // the REST build never pulls in Node or ioredis
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
