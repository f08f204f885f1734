/**
 * Small signed, expiring values (web sessions, OAuth state, requests carried through a browser):
 * `<payload b64url>.<HMAC>`. Stateless, so every instance sharing the signing key accepts them. The keys come from
 * signing-keys.ts (docs/decisions/0019-signing-keys-outside-the-database.md).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../domain/clock.js';

export interface Signer {
  sign<T extends object>(purpose: string, payload: T, ttlMs: number): string;
  verify<T extends object>(purpose: string, value: string | undefined): T | undefined;
  /** A MAC of `value` for `purpose` (e.g. a CSRF token bound to a session cookie), under the signing key. */
  mac(purpose: string, value: string): string;
  /** Whether `given` (base64url) is a MAC of `value` for `purpose` under any key, in constant time per key. */
  matches(purpose: string, value: string, given: string): boolean;
}

/** `keys[0]` signs; every key verifies (the others are previous keys kept through a rotation's grace period). */
export function createSigner(keys: readonly Buffer[], clock: Clock): Signer {
  const macWith = (key: Buffer, purpose: string, value: string) =>
    createHmac('sha256', key).update(`${purpose}\n${value}`).digest('base64url');
  const [signingKey] = keys;
  if (signingKey === undefined) throw new Error('createSigner needs at least one key');
  const mac = (purpose: string, value: string) => macWith(signingKey, purpose, value);
  /** Whether `given` is the MAC of `value` for `purpose` under any of the keys. */
  const matches = (purpose: string, value: string, given: Buffer) =>
    keys.some((key) => {
      const expected = Buffer.from(macWith(key, purpose, value), 'base64url');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  return {
    mac,
    matches: (purpose, value, given) => matches(purpose, value, Buffer.from(given, 'base64url')),
    sign(purpose, payload, ttlMs) {
      const body = Buffer.from(JSON.stringify({ ...payload, exp: clock.now() + ttlMs })).toString('base64url');
      return `${body}.${mac(purpose, body)}`;
    },
    verify<T extends object>(purpose: string, value: string | undefined): T | undefined {
      if (value === undefined || value.length > 4096) return undefined;
      const dot = value.indexOf('.');
      if (dot <= 0) return undefined;
      const body = value.slice(0, dot);
      if (!matches(purpose, body, Buffer.from(value.slice(dot + 1), 'base64url'))) return undefined;
      try {
        const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T & { exp?: unknown };
        if (typeof payload.exp !== 'number' || payload.exp <= clock.now()) return undefined;
        return payload;
      } catch {
        return undefined;
      }
    },
  };
}
