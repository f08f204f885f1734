/** Fixed-window counters shared by the write limits and the passcode attempt limit. */
import type { RateWindow } from '../storage/store.js';

/** An atomic counter source: the database now, Redis when configured. */
export interface RateCounter {
  /** All-or-nothing increments; the index of the first full window, if any (see Store.hitRateWindows). */
  hitRateWindows(windows: readonly RateWindow[]): Promise<{ exceeded: number | undefined }>;
  /** Gives one hit back. */
  releaseRateWindow(key: string): Promise<void>;
}

/** The fixed window of `size` ms containing `now`, aligned to the Unix epoch (so to UTC minutes and days). */
export function windowOf(now: number, size: number): { start: number; end: number } {
  const start = Math.floor(now / size) * size;
  return { start, end: start + size };
}

/** Whole seconds until `end`, at least 1 (the Retry-After rule of docs/api.md 7). */
export function secondsUntil(end: number, now: number): number {
  return Math.max(1, Math.ceil((end - now) / 1000));
}

/**
 * Counts one hit against a single fixed window named `name`. Returns undefined when allowed, or the seconds until
 * the window ends when it is full. The returned key releases the hit (see RateCounter.releaseRateWindow).
 */
export async function hitWindow(
  counter: RateCounter,
  name: string,
  limit: number,
  windowMs: number,
  now: number,
): Promise<{ key: string; retryAfterSeconds: number | undefined }> {
  const window = windowOf(now, windowMs);
  const key = `${name}:${window.start}`;
  const { exceeded } = await counter.hitRateWindows([{ key, limit, endsAt: window.end }]);
  return { key, retryAfterSeconds: exceeded === undefined ? undefined : secondsUntil(window.end, now) };
}
