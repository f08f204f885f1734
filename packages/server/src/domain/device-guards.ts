/**
 * The guards of the device-code flow, one function per rule (docs/api.md 3.1, 4.2 and 5.4):
 *
 * - device-flow starts per client address per minute (`throttleDeviceStarts`);
 * - a poll token too long to be one the service issued is not looked up (`isOverlongPollToken`);
 * - polls per poll token per minute (`throttlePolls`);
 * - wrong user codes per client address per window on /verify (`spendGuess`, `refundGuess`, and `guessUserCode`,
 *   which looks a code up as a guess).
 *
 * Each counts in fixed windows of a RateCounter (the database, or Redis) by the injected clock, with the numbers of
 * `Limits`, and answers allowed, or the seconds until the full window ends. Per-address rules count an IPv6 client
 * by its /64 (client-address.ts).
 */
import type { Limits } from '../config.js';
import { clientGroup } from './client-address.js';
import type { Clock } from './clock.js';
import { type DeviceFlowDeps, type Lookup, lookupUserCode } from './device-flow.js';
import { sha256Hex } from './ids.js';
import { hitWindow, type RateCounter } from './rate-counter.js';

const MINUTE_MS = 60_000;

/** docs/api.md 4.2: a poll token longer than this reads not_found without a lookup (issued ones have 43). */
export const MAX_POLL_TOKEN_CHARS = 200;

export interface GuardDeps {
  readonly counter: RateCounter;
  readonly clock: Clock;
  readonly limits: Limits;
}

/** A guard's refusal: the window is full until `retryAfterSeconds` from now (at least 1). */
export interface Refused {
  readonly allowed: false;
  readonly retryAfterSeconds: number;
}

export type Verdict = { readonly allowed: true } | Refused;

/** A wrong-code guess counted against a client address; `refundGuess` gives it back. */
export interface SpentGuess {
  readonly key: string;
}

export type GuessVerdict = { readonly allowed: true; readonly guess: SpentGuess } | Refused;

/** What looking a typed code up as a guess shows: the lookup, or the refusal of an address out of guesses. */
export type GuessedLookup = Lookup | { readonly kind: 'rate_limited'; readonly retryAfterSeconds: number };

/** Counts one hit in the minute window `name`, which takes `limit`. */
async function hitMinute(deps: GuardDeps, name: string, limit: number): Promise<Verdict> {
  const { retryAfterSeconds } = await hitWindow(deps.counter, name, limit, MINUTE_MS, deps.clock.now());
  return retryAfterSeconds === undefined ? { allowed: true } : { allowed: false, retryAfterSeconds };
}

/** docs/api.md 4.2: at most `maxAuthStartsPerMinute` device-flow starts per client address per minute. */
export function throttleDeviceStarts(deps: GuardDeps, clientAddress: string): Promise<Verdict> {
  return hitMinute(deps, `start:${clientGroup(clientAddress)}`, deps.limits.maxAuthStartsPerMinute);
}

/** docs/api.md 4.2: a poll token longer than 200 characters cannot have been issued; it is never looked up. */
export function isOverlongPollToken(pollToken: string): boolean {
  return pollToken.length > MAX_POLL_TOKEN_CHARS;
}

/**
 * docs/api.md 3.1: at most `maxPollsPerMinute` polls of one poll token per minute; beyond that the poll is answered
 * pending, without a lookup, until the client slows down. Counted under a prefix of the token's SHA-256, so the
 * counter never holds the token itself.
 */
export function throttlePolls(deps: GuardDeps, pollToken: string): Promise<Verdict> {
  return hitMinute(deps, `poll:${sha256Hex(pollToken).slice(0, 32)}`, deps.limits.maxPollsPerMinute);
}

/**
 * docs/api.md 5.4: spends one of the client address's `maxUserCodeGuesses` per `userCodeGuessWindowMs` before a
 * typed or posted code is looked up. A code that turns out to exist is not a wrong guess: `refundGuess` gives the
 * guess back.
 */
export async function spendGuess(deps: GuardDeps, clientAddress: string): Promise<GuessVerdict> {
  const { key, retryAfterSeconds } = await hitWindow(
    deps.counter,
    `guess:${clientGroup(clientAddress)}`,
    deps.limits.maxUserCodeGuesses,
    deps.limits.userCodeGuessWindowMs,
    deps.clock.now(),
  );
  return retryAfterSeconds === undefined ? { allowed: true, guess: { key } } : { allowed: false, retryAfterSeconds };
}

/** Gives a spent guess back (its code exists, whatever the state of its request). */
export function refundGuess(deps: GuardDeps, guess: SpentGuess): Promise<void> {
  return deps.counter.releaseRateWindow(guess.key);
}

/** Looks a typed code up as a guess: spent before the lookup, refunded unless no request has the code. */
export async function guessUserCode(
  deps: GuardDeps,
  device: DeviceFlowDeps,
  clientAddress: string,
  input: string,
): Promise<GuessedLookup> {
  const spent = await spendGuess(deps, clientAddress);
  if (!spent.allowed) return { kind: 'rate_limited', retryAfterSeconds: spent.retryAfterSeconds };
  const found = await lookupUserCode(device, input);
  if (found.kind !== 'invalid') await refundGuess(deps, spent.guess);
  return found;
}
