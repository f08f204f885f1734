/**
 * Per-account write limits (docs/api.md 8; docs/decisions/0009-write-limits-in-fixed-utc-windows-per-account.md): fixed windows aligned to UTC, the calendar minute and day. A refused
 * request does not count. Backed by any atomic counter source (the database now; Redis when configured).
 */
import type { Limits } from '../config.js';
import { ApiError } from '../errors.js';
import type { Clock } from './clock.js';
import { type RateCounter, secondsUntil, windowOf } from './rate-counter.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export interface WriteLimiter {
  /**
   * Counts one write for the account, or throws 429 rate_limited / daily_quota_exceeded. Returns a function that
   * gives the write back, for a request that ends refused with a 429 of its own (quota_exceeded).
   */
  consume(accountId: string): Promise<() => Promise<void>>;
}

export function createWriteLimiter(counter: RateCounter, clock: Clock, limits: Limits): WriteLimiter {
  return {
    async consume(accountId) {
      const now = clock.now();
      const minute = windowOf(now, MINUTE_MS);
      const day = windowOf(now, DAY_MS);
      const windows = [
        { key: `w:m:${accountId}:${minute.start}`, limit: limits.maxWritesPerMinute, endsAt: minute.end },
        { key: `w:d:${accountId}:${day.start}`, limit: limits.maxWritesPerDay, endsAt: day.end },
      ];
      const { exceeded } = await counter.hitRateWindows(windows);
      if (exceeded === undefined) {
        return async () => {
          await Promise.all(windows.map((w) => counter.releaseRateWindow(w.key)));
        };
      }
      const perMinute = exceeded === 0;
      const end = perMinute ? minute.end : day.end;
      const retryAfterSeconds = secondsUntil(end, now);
      throw new ApiError(perMinute ? 'rate_limited' : 'daily_quota_exceeded', {
        message: perMinute
          ? `More than ${limits.maxWritesPerMinute} writes this minute; retry in ${retryAfterSeconds} s.`
          : `More than ${limits.maxWritesPerDay} writes today (UTC); retry in ${retryAfterSeconds} s.`,
        retryAfterSeconds,
        details: { limit: perMinute ? limits.maxWritesPerMinute : limits.maxWritesPerDay },
      });
    },
  };
}
