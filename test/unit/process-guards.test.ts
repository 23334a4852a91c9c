import { describe, expect, it } from 'vitest';
import { watchParent } from '../../local/process-guards';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('watchParent', () => {
  it('fires for a parent that is already gone when the watch starts (the wrapper died while the stack started)', async () => {
    // The parent read at start-up, no longer this process's parent by the time the watch begins.
    const startedBy = process.ppid + 1;
    const gone: number[] = [];
    const unwatch = watchParent((parent) => gone.push(parent), startedBy, 5);
    try {
      for (let waited = 0; gone.length === 0 && waited < 2_000; waited += 10) await sleep(10);
      await sleep(30);
      expect(gone).toEqual([startedBy]); // once, naming the parent it had
    } finally {
      unwatch();
    }
  });

  it('stays quiet while the parent is the one it started with, and stops when told', async () => {
    const gone: number[] = [];
    const unwatch = watchParent((parent) => gone.push(parent), process.ppid, 5);
    await sleep(60);
    unwatch();
    expect(gone).toEqual([]);
  });
});
