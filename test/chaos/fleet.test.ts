/**
 * The fleet with stand-in poll processes (scripts that print a START line and never end
 * their run): a run that never reports is judged (I6) when its process goes, after every
 * line it wrote was read; a slot killed twice restarts once; none outlives stop().
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { History } from '../../chaos/checker';
import type { ChildConfig } from '../../chaos/child-config';
import { Fleet } from '../../chaos/fleet';

let dir: string;
const started = new Set<number>();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'saga-chaos-fleet-test-'));
});

afterEach(() => {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
  started.clear();
  rmSync(dir, { recursive: true, force: true });
});

function fleetOf(script: string, text: string, history: History): Fleet {
  writeFileSync(join(dir, script), text);
  return new Fleet(join(dir, script), 'unused-key', {
    onRun: (line) => history.runEnded(line),
    onFlowStart: () => {},
    onFlowEnd: () => {},
    onFlowCommit: () => {},
    onStart: (line) => {
      started.add(line.pid);
      history.runStarted(line);
    },
    onEarlyAck: (line) => history.earlyAck(line),
    onCrash: () => {},
    onGone: (pid, at) => history.processGone(pid, at),
  });
}

async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z');
  } catch {
    return false;
  }
}

/** A poll process whose run started 1,500 ms before it was due to end... 1,500 ms ago: it hangs. */
const HUNG_RUN = `
const now = Date.now();
process.stdout.write('START ' + JSON.stringify({ pid: process.pid, startedAt: now - 2700, deadline: now - 1500 }) + '\\n');
setInterval(() => {}, 1000);
`;

/** A poll process whose run has a minute left. */
const LIVE_RUN = `
const now = Date.now();
process.stdout.write('START ' + JSON.stringify({ pid: process.pid, startedAt: now, deadline: now + 60000 }) + '\\n');
setInterval(() => {}, 1000);
`;

it('a run that never reports its end is an I6 violation when the fleet stops its process past deadline + 1 s', async () => {
  const history = new History('s', 's:dlt', ['g1'], dir);
  const fleet = fleetOf('hung-child.cjs', HUNG_RUN, history);
  fleet.add('g1-p0', {} as ChildConfig);
  await until(() => history.startedPids === 1);
  await fleet.stop();
  expect(history.violationCounts.I6).toBe(1);
  expect(history.violations[0]!.detail).toMatch(/still running \d+ ms after its deadline/);
  expect(history.worstOvershootMs).toBeGreaterThan(1_500);
});

it('a process killed twice before it exits is restarted once, and stop() leaves no process running', async () => {
  // A fault loop may pick a slot again while its killed process is still dying (its START
  // line arriving after the kill made it look live): the old fleet then restarted the slot
  // twice and lost track of one process, which outlived the scenario.
  const history = new History('s', 's:dlt', ['g1'], dir);
  const fleet = fleetOf('live-child.cjs', LIVE_RUN, history);
  fleet.add('g1-p0', {} as ChildConfig);
  await until(() => history.startedPids === 1);
  fleet.killAndRestart('g1-p0');
  fleet.killAndRestart('g1-p0');
  await until(() => history.startedPids >= 2);
  await new Promise((r) => setTimeout(r, 500)); // room for a second restart
  expect(fleet.spawns).toBe(2);
  await fleet.stop();
  expect([...started].filter(alive)).toEqual([]);
});
