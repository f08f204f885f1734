/**
 * When a drop expires, as people write it: a duration from now (`30m`, `12h`, `7d`, `2w`), an ISO 8601 date or date
 * and time (`2026-12-31`, `2026-12-31T18:00:00Z`), or `never`. The service takes `expires_at` in Unix ms between
 * now + 60 s and now + 365 days (docs/api.md); parseExpires checks that range too, for a clearer message.
 */
import { HtmlDropError } from './errors.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The earliest expiry the service takes, from now. */
export const MIN_EXPIRY_MS = MINUTE;
/** The latest expiry the service takes, from now. */
export const MAX_EXPIRY_MS = 365 * DAY;

const UNIT_MS: Readonly<Record<string, number>> = { m: MINUTE, h: HOUR, d: DAY, w: 7 * DAY };

const DURATION = /^(\d{1,6})\s*([mhdw])$/i;
/** A date, optionally with a time (T or space) and a zone; Date.parse reads it. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

const FORMS = '30m, 12h, 7d, 2w, an ISO date such as 2026-12-31 or 2026-12-31T18:00:00Z, or never';

function invalid(text: string, why: string, flag: string): HtmlDropError {
  return new HtmlDropError('usage', `${flag} "${text}": ${why} (expected ${FORMS}).`);
}

/**
 * The `expires_at` (Unix ms) a text names, or null for `never`; `usage` for anything else, or for an instant outside
 * now + 1 minute to now + 365 days. A date without a time is midnight UTC; a time without a zone is UTC.
 * @param flag how the caller names the input in messages (`--expires`, `expires`)
 */
export function parseExpires(text: string, now = Date.now(), flag = '--expires'): number | null {
  const value = text.trim();
  if (value.toLowerCase() === 'never') return null;
  let at: number;
  const duration = DURATION.exec(value);
  if (duration !== null) {
    const unit = UNIT_MS[(duration[2] ?? '').toLowerCase()] ?? 0;
    at = now + Number(duration[1]) * unit;
  } else if (ISO_DATE.test(value)) {
    const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value) || !/[T ]/i.test(value);
    at = Date.parse(zoned ? value.replace(' ', 'T') : `${value.replace(' ', 'T')}Z`);
    if (Number.isNaN(at)) throw invalid(text, 'not a date', flag);
  } else {
    throw invalid(text, 'not a duration or a date', flag);
  }
  if (at - now < MIN_EXPIRY_MS) throw invalid(text, 'that is less than a minute from now', flag);
  if (at - now > MAX_EXPIRY_MS) throw invalid(text, 'that is more than 365 days from now', flag);
  return at;
}

/** When an expiry is, for people: the UTC time and how far ahead (`2026-12-31 18:00Z, in 3 days`). */
export function describeExpiry(expiresAt: number | null, now = Date.now()): string {
  if (expiresAt === null) return 'never';
  const left = expiresAt - now;
  const when = `${new Date(expiresAt).toISOString().slice(0, 16).replace('T', ' ')}Z`;
  if (left <= 0) return `${when} (expired)`;
  const [size, unit] =
    Math.round(left / DAY) >= 2 ? [DAY, 'day'] : Math.round(left / HOUR) >= 2 ? [HOUR, 'hour'] : [MINUTE, 'minute'];
  const count = Math.round(left / size);
  return `${when}, in ${count} ${unit}${count === 1 ? '' : 's'}`;
}
