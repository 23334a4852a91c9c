/**
 * The ops dashboard in a real browser (issue 17 §1): headless Chromium (CHROMIUM_PATH, the
 * system's, or the one an npm package ships: ./chromium.ts), driven by playwright-core, loads
 * the dashboard of a running local stack on real Redis, logs in through the form, and sees the
 * oldest-pending-age chart drawn from the samples the poll runs recorded; then browses a dead
 * letter, redrives it after a confirmation step, and sees it leave the DLT. Screenshots go to
 * test/browser/.artifacts/ (git-ignored).
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyKeys } from '../../src/deployment/run-history';
import { adminClient } from '../support/redis';
import { launchChromium } from './chromium';
import { ADMIN_TOKEN, placeOrder, startBrowserStack, type BrowserStack } from './stack';

const ARTIFACTS = fileURLToPath(new URL('./.artifacts/', import.meta.url));

async function launch(): Promise<Browser> {
  const started = Date.now();
  const { browser, chosen } = await launchChromium();
  console.log(`browser: ${chosen.source} Chromium ${browser.version()} at ${chosen.executablePath} (ready in ${Date.now() - started} ms)`);
  return browser;
}

/** Waits until `done()` holds (the stack polls right after each publish). */
async function until(done: () => Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  for (const started = Date.now(); Date.now() - started < ms; await new Promise((r) => setTimeout(r, 100))) if (await done()) return;
  throw new Error(`${what}: not within ${ms} ms`);
}

describe('the ops dashboard in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let running: BrowserStack;
  let admin: Redis;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launch();
    running = await startBrowserStack();
    admin = adminClient();
    page = await browser.newPage({ viewport: { width: 1200, height: 560 } });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await running?.stack.stop();
    admin?.disconnect();
  });

  it('logs in through the form and shows the oldest-pending-age chart from the recorded samples', async () => {
    const { stack, stream } = running;
    await placeOrder(stack, 'order-1', { order_id: 'order-1', qty: 1 });
    const samples = historyKeys(stream, 'fulfilment').samples;
    await until(async () => (await admin.llen(samples)) > 0 && (await admin.llen(historyKeys(stream, 'fulfilment').runs)) > 0, 'a recorded run');

    await page.goto(stack.dashboard.url);
    expect(new URL(page.url()).pathname).toBe('/ops/login');
    await page.fill('input[name="token"]', 'not-the-admin-token-at-all');
    await page.click('button[type="submit"]');
    expect(await page.textContent('main')).toContain('Admin token not recognised');
    await page.fill('input[name="token"]', ADMIN_TOKEN);
    await page.click('button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe('/ops');

    const chart = page.locator('#c-fulfilment svg.chart');
    await expect(chart.count()).resolves.toBe(1);
    const points = await chart.locator('circle.point').count();
    expect(points).toBe(await admin.llen(samples));
    expect(points).toBeGreaterThan(0);
    expect(await page.locator('#c-fulfilment svg.chart polyline').getAttribute('points')).toMatch(/^\d+(\.\d)?,\d+(\.\d)?/);
    expect(await page.textContent('main')).toContain('Recent runs that did something');
    // No session cookie is readable by page script (HttpOnly), and none holds the token.
    expect(await page.evaluate('document.cookie')).toBe('');
    const cookies = await page.context().cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([['saga_ops_session', true, 'Strict']]);
    expect(cookies[0]!.value).not.toContain(ADMIN_TOKEN);

    // An hour of earlier samples (as a cron-polled consumer would have left) for the screenshot.
    const now = Date.now();
    const earlier = Array.from({ length: 60 }, (_, i) => {
      const t = now - (i + 1) * 60_000;
      const age = Math.round(Math.max(0, Math.sin(i / 9) * 40_000 + 30_000));
      return `${t} ${age} ${Math.round(age / 4000)} 0 ${(i * 7) % 23}`;
    });
    await admin.rpush(samples, ...earlier);
    await page.reload();
    expect(await page.locator('#c-fulfilment svg.chart circle.point').count()).toBe(points + earlier.length);
    await page.screenshot({ path: `${ARTIFACTS}overview.png`, fullPage: true });

    await page.click('header a:has-text("Runs")');
    expect(await page.textContent('main')).toContain('Runs that did something');
    await page.screenshot({ path: `${ARTIFACTS}runs.png`, fullPage: true });
  }, 60_000);

  it('browses a dead letter, redrives it after confirming, and sees it leave the DLT', async () => {
    const { stack, stream } = running;
    const dlt = `${stream}:dlt`;
    await placeOrder(stack, 'order-poison', { order_id: 'order-poison', note: '<b>not bold</b>', poison: true });
    await until(async () => (await admin.xlen(dlt)) === 1, 'the poison order dead-lettered');

    await page.click('header a:has-text("Dead letters")');
    expect(new URL(page.url()).pathname).toBe('/ops/dlt');
    const list = (await page.textContent('main'))!;
    expect(list).toContain('poison_order');
    expect(list).toContain('order-poison');
    // Payload text is shown escaped, never as markup.
    expect(await page.locator('main b').count()).toBe(0);
    await page.screenshot({ path: `${ARTIFACTS}dead-letters.png`, fullPage: true });

    // Redrive asks first: the link shows what will happen, nothing moves yet.
    await page.click('main a:has-text("redrive…") >> nth=-1');
    expect(await page.textContent('main')).toContain('Redrive record');
    expect(await admin.xlen(dlt)).toBe(1);
    await page.screenshot({ path: `${ARTIFACTS}redrive-confirm.png`, fullPage: true });

    running.poisonRefused = false; // the consumer's bug is fixed; the redriven order goes through
    const entriesBefore = await admin.xlen(stream);
    await page.click('main form button[type="submit"]');
    expect(await page.textContent('main')).toContain('1 of 1 record(s) redriven');
    expect(await admin.xlen(dlt)).toBe(0);
    expect(await admin.xlen(stream)).toBe(entriesBefore + 1);

    // The stack polls the appended entry; the consumer acks it this time.
    await until(async () => (await admin.xpending(stream, 'fulfilment') as [number])[0] === 0 && (await admin.xlen(dlt)) === 0, 'the redriven order acked');
    await page.click('main a:has-text("back to the dead letters")');
    expect(await page.textContent('main')).not.toContain('order-poison');
    // Find by id says where the order is now: acked by the group, no longer in the DLT.
    await page.click('header a:has-text("Find by id")');
    await page.fill('main input[name="id"]', 'order-poison');
    await page.click('main form button[type="submit"]');
    const found = (await page.textContent('main'))!;
    expect(found).toContain('fulfilment: acked');
    expect(found).not.toContain('dead-lettered (');
    await page.screenshot({ path: `${ARTIFACTS}find.png`, fullPage: true });

    await page.click('header a:has-text("Overview")');
    const row = await page.locator('main table >> nth=0').locator('tbody tr').first().locator('td').allTextContents();
    expect(row.at(-1)).toBe('0');
  }, 60_000);
});
