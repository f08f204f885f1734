/** Time source, injected so expiry and rate windows are tested without waiting. Unix milliseconds. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
