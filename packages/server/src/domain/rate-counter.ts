/** Fixed-window counters shared by the write limits and the passcode attempt limit. */
import type { RateWindow } from './store.js';

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

/** A fixed window to count a hit in: its name, its capacity and its length. */
export interface WindowSpec {
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
}

/**
 * Counts one hit in every window of `specs` at once, or in none of them (all-or-nothing, as
 * RateCounter.hitRateWindows). Returns the keys that release the hit, and, when a window is full, the seconds until
 * it ends.
 */
export async function hitWindows(
  counter: RateCounter,
  specs: readonly WindowSpec[],
  now: number,
): Promise<{ keys: string[]; retryAfterSeconds: number | undefined }> {
  const windows = specs.map((spec) => {
    const window = windowOf(now, spec.windowMs);
    return { key: `${spec.name}:${window.start}`, limit: spec.limit, endsAt: window.end };
  });
  const { exceeded } = await counter.hitRateWindows(windows);
  const full = exceeded === undefined ? undefined : windows[exceeded];
  return {
    keys: windows.map((w) => w.key),
    retryAfterSeconds: full === undefined ? undefined : secondsUntil(full.endsAt, now),
  };
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
  const { keys, retryAfterSeconds } = await hitWindows(counter, [{ name, limit, windowMs }], now);
  return { key: keys[0] ?? '', retryAfterSeconds };
}
