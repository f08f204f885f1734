/**
 * The device-flow guards (docs/api.md 3.1, 4.2, 5.4) over the real rate counter of each database: the store's
 * rate windows, as the service uses them without Redis.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../test/databases.js';
import { DEFAULT_LIMITS, type Limits } from '../config.js';
import { ensureAccount } from './accounts.js';
import { type DeviceFlowDeps, decideDeviceFlow, normalizeUserCode, startDeviceFlow } from './device-flow.js';
import {
  type GuardDeps,
  guessUserCode,
  isOverlongPollToken,
  refundGuess,
  spendGuess,
  throttleDeviceStarts,
  throttlePolls,
} from './device-guards.js';
import type { Store } from './store.js';

/** 10 s into a minute, and into a 15-minute window: 50 s and 890 s before they end. */
const T0 = Date.UTC(2026, 10, 21, 12, 0, 10);
const LIMITS: Limits = { ...DEFAULT_LIMITS, maxAuthStartsPerMinute: 3, maxPollsPerMinute: 4, maxUserCodeGuesses: 3 };

const times = <T>(n: number, make: () => T): T[] => Array.from({ length: n }, make);
/** Whether each of `n` hits, one after the other, was allowed. */
async function allowedOf(n: number, hit: () => Promise<{ allowed: boolean }>): Promise<boolean[]> {
  const results: boolean[] = [];
  for (let i = 0; i < n; i++) results.push((await hit()).allowed);
  return results;
}

it('defaults to the documented numbers: 60 polls a minute, 20 wrong codes per 15 minutes', () => {
  expect(DEFAULT_LIMITS).toMatchObject({
    maxAuthStartsPerMinute: 20,
    maxPollsPerMinute: 60,
    maxUserCodeGuesses: 20,
    userCodeGuessWindowMs: 15 * 60_000,
  });
});

it('treats a poll token over 200 characters as one never issued', () => {
  expect(isOverlongPollToken('x'.repeat(200))).toBe(false);
  expect(isOverlongPollToken('x'.repeat(201))).toBe(true);
});

for (const dialect of DIALECTS) {
  describe(`device-flow guards on ${dialect}`, () => {
    let database: TestDatabase;
    let store: Store;
    let now: number;
    let guards: GuardDeps;
    let device: DeviceFlowDeps;

    beforeAll(async () => {
      database = await createTestDatabase(dialect);
      store = database.open();
      await store.migrate();
      const clock = { now: () => now };
      guards = { counter: store, clock, limits: LIMITS };
      device = { store, clock };
    });
    afterAll(async () => {
      await store.close();
      await database.drop();
    });
    // Every test starts in a fresh hour, so no test sees another's windows.
    let hour = 0;
    beforeEach(() => {
      now = T0 + hour++ * 3_600_000;
    });

    it('throttles device-flow starts per client address per minute, with the seconds to the next minute', async () => {
      expect(await allowedOf(3, () => throttleDeviceStarts(guards, '192.0.2.1'))).toEqual([true, true, true]);
      expect(await throttleDeviceStarts(guards, '192.0.2.1')).toEqual({ allowed: false, retryAfterSeconds: 50 });
      expect((await throttleDeviceStarts(guards, '192.0.2.2')).allowed).toBe(true);
      now += 50_000;
      expect((await throttleDeviceStarts(guards, '192.0.2.1')).allowed).toBe(true);
    });

    it('counts an IPv6 client by its /64, and an IPv4-mapped address as its IPv4 address', async () => {
      const hosts = ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff::9'];
      expect(await Promise.all(hosts.map((host) => throttleDeviceStarts(guards, host)))).toEqual(
        times(3, () => ({ allowed: true })),
      );
      expect((await throttleDeviceStarts(guards, '2001:db8:1:2::7')).allowed).toBe(false);
      expect((await throttleDeviceStarts(guards, '2001:db8:1:3::1')).allowed).toBe(true);
      await allowedOf(3, () => throttleDeviceStarts(guards, '198.51.100.7'));
      expect((await throttleDeviceStarts(guards, '::ffff:198.51.100.7')).allowed).toBe(false);
    });

    it('never lets concurrent starts from one address past the limit', async () => {
      const results = await Promise.all(times(10, () => throttleDeviceStarts(guards, '192.0.2.9')));
      expect(results.filter((r) => r.allowed)).toHaveLength(3);
    });

    it('throttles polls per poll token per minute, each token on its own', async () => {
      expect(await allowedOf(4, () => throttlePolls(guards, 'token-a'))).toEqual([true, true, true, true]);
      expect(await throttlePolls(guards, 'token-a')).toEqual({ allowed: false, retryAfterSeconds: 50 });
      expect((await throttlePolls(guards, 'token-b')).allowed).toBe(true);
      now += 60_000;
      expect((await throttlePolls(guards, 'token-a')).allowed).toBe(true);
    });

    it('spends guesses per client address per 15 minutes, and a refunded guess can be spent again', async () => {
      const spent = await spendGuess(guards, '192.0.2.20');
      if (!spent.allowed) throw new Error('the first guess is allowed');
      expect(await allowedOf(2, () => spendGuess(guards, '192.0.2.20'))).toEqual([true, true]);
      expect(await spendGuess(guards, '192.0.2.20')).toEqual({ allowed: false, retryAfterSeconds: 890 });
      expect((await spendGuess(guards, '192.0.2.21')).allowed).toBe(true);
      await refundGuess(guards, spent.guess);
      expect((await spendGuess(guards, '192.0.2.20')).allowed).toBe(true);
      expect((await spendGuess(guards, '192.0.2.20')).allowed).toBe(false);
      now += 890_000;
      expect((await spendGuess(guards, '192.0.2.20')).allowed).toBe(true);
    });

    it('looks codes up as guesses: unknown codes count, existing ones are given back', async () => {
      const account = await ensureAccount(
        { store, clock: device.clock },
        { provider: 'local', subject: dialect, login: dialect },
      );
      const [pending, decided] = [await startDeviceFlow(device, 'a'), await startDeviceFlow(device, 'b')];
      await decideDeviceFlow(device, normalizeUserCode(decided.code) ?? '', { approve: account.id });
      const guess = (input: string) => guessUserCode(guards, device, '192.0.2.30', input);
      const kinds: string[] = [];
      for (let i = 0; i < 5; i++) kinds.push((await guess(pending.code)).kind, (await guess(decided.code)).kind);
      expect(new Set(kinds)).toEqual(new Set(['pending', 'done']));
      expect((await guess('ZZZZ-ZZZZ')).kind).toBe('invalid');
      expect((await guess('not a code')).kind).toBe('invalid');
      expect((await guess(pending.code)).kind).toBe('pending');
      expect((await guess('ZZZZ-ZZZZ')).kind).toBe('invalid');
      expect(await guess(pending.code)).toEqual({ kind: 'rate_limited', retryAfterSeconds: 890 });
      now += 600_000;
      expect((await guessUserCode(guards, device, '192.0.2.31', pending.code)).kind).toBe('expired');
    });
  });
}
