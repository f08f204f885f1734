/** `--expires` / `expires` as people write it: durations, ISO dates, never; the service's range checked first. */
import { describe, expect, it } from 'vitest';
import { HtmlDropError } from '../src/errors.js';
import { describeExpiry, MAX_EXPIRY_MS, parseExpires } from '../src/expires.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function refusal(text: string): HtmlDropError {
  try {
    parseExpires(text, NOW);
  } catch (error) {
    if (error instanceof HtmlDropError) return error;
    throw error;
  }
  throw new Error(`${text} was accepted`);
}

describe('parseExpires', () => {
  it('reads durations from now in minutes, hours, days and weeks', () => {
    expect(parseExpires('30m', NOW)).toBe(NOW + 30 * MINUTE);
    expect(parseExpires('12h', NOW)).toBe(NOW + 12 * HOUR);
    expect(parseExpires('7d', NOW)).toBe(NOW + 7 * DAY);
    expect(parseExpires('2w', NOW)).toBe(NOW + 14 * DAY);
    expect(parseExpires(' 7D ', NOW)).toBe(NOW + 7 * DAY);
    expect(parseExpires('365d', NOW)).toBe(NOW + MAX_EXPIRY_MS);
  });

  it('reads ISO dates (midnight UTC), times with a zone, and times without one as UTC', () => {
    expect(parseExpires('2026-06-08', NOW)).toBe(Date.parse('2026-06-08T00:00:00Z'));
    expect(parseExpires('2026-06-08T18:30:00Z', NOW)).toBe(Date.parse('2026-06-08T18:30:00Z'));
    expect(parseExpires('2026-06-08T18:30:00+02:00', NOW)).toBe(Date.parse('2026-06-08T16:30:00Z'));
    expect(parseExpires('2026-06-08T18:30', NOW)).toBe(Date.parse('2026-06-08T18:30:00Z'));
    expect(parseExpires('2026-06-08 18:30', NOW)).toBe(Date.parse('2026-06-08T18:30:00Z'));
  });

  it('reads never as null', () => {
    expect(parseExpires('never', NOW)).toBeNull();
    expect(parseExpires('NEVER', NOW)).toBeNull();
  });

  it('refuses other words, bare numbers and unknown units as usage errors naming the forms', () => {
    for (const text of ['soon', '7', '7 days', '3y', '-5m', '', '2026-13-45', '06/08/2026', '1.5h']) {
      const error = refusal(text);
      expect(error.code, text).toBe('usage');
      expect(error.message).toContain('--expires');
      expect(error.message).toContain('30m, 12h, 7d');
    }
  });

  it('refuses an instant less than a minute ahead (or past) and one more than 365 days ahead', () => {
    expect(refusal('0m').message).toMatch(/less than a minute from now/);
    expect(refusal('2026-05-01').message).toMatch(/less than a minute from now/);
    expect(refusal('366d').message).toMatch(/more than 365 days from now/);
    expect(refusal('2030-01-01').message).toMatch(/more than 365 days from now/);
    expect(parseExpires('1m', NOW)).toBe(NOW + MINUTE);
  });

  it('names the parameter the caller gives', () => {
    expect(() => parseExpires('soon', NOW, 'expires')).toThrow(/^expires "soon"/);
  });
});

describe('describeExpiry', () => {
  it('says when, and how far ahead, in the largest fitting unit', () => {
    expect(describeExpiry(null, NOW)).toBe('never');
    expect(describeExpiry(NOW + 7 * DAY, NOW)).toBe('2026-06-08 12:00Z, in 7 days');
    expect(describeExpiry(NOW + 12 * HOUR, NOW)).toBe('2026-06-02 00:00Z, in 12 hours');
    expect(describeExpiry(NOW + 30 * MINUTE, NOW)).toBe('2026-06-01 12:30Z, in 30 minutes');
    expect(describeExpiry(NOW + 2 * HOUR - 5000, NOW)).toBe('2026-06-01 13:59Z, in 2 hours');
    expect(describeExpiry(NOW - MINUTE, NOW)).toBe('2026-06-01 11:59Z (expired)');
  });
});
