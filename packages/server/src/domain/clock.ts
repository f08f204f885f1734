/** Time source, injected so expiry and rate windows are tested without waiting. Unix milliseconds. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * A clock that follows another clock (the database server's) through a measured offset, refreshed periodically,
 * so every instance sharing a database agrees on rate windows and expiry without a query per reading.
 */
export async function createFollowingClock(
  read: () => Promise<number>,
  options: {
    readonly refreshMs?: number;
    /** Told of a failed refresh; the clock keeps its last offset meanwhile. */
    readonly report?: (error: unknown) => void;
  } = {},
): Promise<{ clock: Clock; stop(): void }> {
  const { refreshMs = 60_000, report = () => undefined } = options;
  let offset = 0;
  const measure = async () => {
    const before = Date.now();
    const remote = await read();
    const after = Date.now();
    offset = Math.round(remote - (before + after) / 2);
  };
  await measure();
  const timer = setInterval(() => {
    // Keep the last offset when the database is briefly unreachable; say so, since windows may drift meanwhile.
    measure().catch(report);
  }, refreshMs);
  timer.unref();
  return { clock: { now: () => Date.now() + offset }, stop: () => clearInterval(timer) };
}
