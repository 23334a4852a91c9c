/**
 * The dev file is trusted only while its pid names a live process. `kill(0|-n, 0)` names a
 * process group and always succeeds, so such a pid (from a corrupted or hand-edited file)
 * must never count as a running stack.
 */
import { describe, expect, it } from 'vitest';
import { processAlive } from '../../local/dev-file';

describe('processAlive', () => {
  it('is true for this process', () => {
    expect(processAlive(process.pid)).toBe(true);
  });

  it('is false for pids that name process groups or are not pids at all', () => {
    for (const pid of [0, -1, -process.pid, 1.5, Number.NaN]) expect(processAlive(pid)).toBe(false);
  });
});
