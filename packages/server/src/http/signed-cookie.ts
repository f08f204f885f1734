/**
 * Small signed, expiring values for cookies (web sessions on /verify, OAuth state): `<payload b64url>.<HMAC>`.
 * Stateless, so every instance sharing the signing key accepts them.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../domain/clock.js';

export interface Signer {
  sign<T extends object>(purpose: string, payload: T, ttlMs: number): string;
  verify<T extends object>(purpose: string, value: string | undefined): T | undefined;
  /** A MAC of `value` for `purpose` (e.g. a CSRF token bound to a session cookie). */
  mac(purpose: string, value: string): string;
}

export function createSigner(key: Buffer, clock: Clock): Signer {
  const mac = (purpose: string, value: string) =>
    createHmac('sha256', key).update(`${purpose}\n${value}`).digest('base64url');
  return {
    mac,
    sign(purpose, payload, ttlMs) {
      const body = Buffer.from(JSON.stringify({ ...payload, exp: clock.now() + ttlMs })).toString('base64url');
      return `${body}.${mac(purpose, body)}`;
    },
    verify<T extends object>(purpose: string, value: string | undefined): T | undefined {
      if (value === undefined || value.length > 4096) return undefined;
      const dot = value.indexOf('.');
      if (dot <= 0) return undefined;
      const body = value.slice(0, dot);
      const given = Buffer.from(value.slice(dot + 1), 'base64url');
      const expected = Buffer.from(mac(purpose, body), 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
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

/** One cookie value from a Cookie header (no dependency for a few cookies). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface CookieOptions {
  readonly path: string;
  readonly maxAgeSeconds: number;
  readonly sameSite: 'Strict' | 'Lax';
  readonly secure: boolean;
}

export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  return [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${options.maxAgeSeconds}`,
    'HttpOnly',
    `SameSite=${options.sameSite}`,
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}
