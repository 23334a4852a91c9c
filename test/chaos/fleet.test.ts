/**
 * The fleet and the deadline invariant together, with a stand-in poll process (a script
 * that prints a START line and never ends its run): a run that never reports is judged
 * when its process goes, after every line it wrote was read.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { History } from '../../chaos/checker';
import type { ChildConfig } from '../../chaos/child-config';
import { Fleet } from '../../chaos/fleet';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'saga-chaos-fleet-test-'));
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A poll process whose run started 1,500 ms before it was due to end... 1,500 ms ago: it hangs. */
const HUNG_RUN = `
const now = Date.now();
process.stdout.write('START ' + JSON.stringify({ pid: process.pid, startedAt: now - 2700, deadline: now - 1500 }) + '\\n');
setInterval(() => {}, 1000);
`;

it('a run that never reports its end is an I6 violation when the fleet stops its process past deadline + 1 s', async () => {
  const script = join(dir, 'hung-child.cjs');
  writeFileSync(script, HUNG_RUN);
  const history = new History('s', 's:dlt', ['g1'], dir);
  const fleet = new Fleet(script, 'unused-key', {
    onRun: (line) => history.runEnded(line),
    onStart: (line) => history.runStarted(line),
    onEarlyAck: (line) => history.earlyAck(line),
    onCrash: () => {},
    onGone: (pid, at) => history.processGone(pid, at),
  });
  fleet.add('g1-p0', {} as ChildConfig);
  const until = Date.now() + 20_000;
  while (history.startedPids === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  await fleet.stop();
  expect(history.violationCounts.I6).toBe(1);
  expect(history.violations[0]!.detail).toMatch(/still running \d+ ms after its deadline/);
  expect(history.worstOvershootMs).toBeGreaterThan(1_500);
});
