import { describe, expect, it } from 'vitest';
import { createFollowingClock } from './clock.js';

describe('createFollowingClock', () => {
  it('follows the remote clock and keeps its last offset, reporting the failure, when a refresh fails', async () => {
    let remoteOffset = 3_600_000;
    let failing = false;
    const reported: unknown[] = [];
    const read = async () => {
      if (failing) throw new Error('database down');
      return Date.now() + remoteOffset;
    };
    const { clock, stop } = await createFollowingClock(read, { refreshMs: 10, report: (e) => reported.push(e) });
    try {
      expect(Math.abs(clock.now() - (Date.now() + 3_600_000))).toBeLessThan(50);
      failing = true;
      remoteOffset = 0;
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(reported.length).toBeGreaterThan(0);
      expect((reported[0] as Error).message).toBe('database down');
      expect(Math.abs(clock.now() - (Date.now() + 3_600_000))).toBeLessThan(50);
      failing = false;
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(Math.abs(clock.now() - Date.now())).toBeLessThan(50);
    } finally {
      stop();
    }
  });
});
