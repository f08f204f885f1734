/**
 * Personal data, validated rather than matched by shape alone (docs/decisions/0034-a-look-before-publishing.md):
 * payment card numbers of a known brand that pass the Luhn check, written grouped as printed on cards or named as a
 * card nearby; IBANs of a known country at its length whose mod-97 check holds (ISO 13616); and texts carrying a
 * long list of distinct email addresses or phone numbers (a customer list), reported once per text.
 */
import type { Match } from './mask.js';

/** Distinct addresses (or phone numbers) in one text from which it counts as a list of people. */
export const LIST_THRESHOLD = 10;

/** True when the digits pass the Luhn check (ISO/IEC 7812). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The lengths a brand's numbers have, by leading digits (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay). */
function brandFits(digits: string): boolean {
  const n = digits.length;
  const two = Number(digits.slice(0, 2));
  const four = Number(digits.slice(0, 4));
  if (digits[0] === '4') return n === 16 || n === 13 || n === 19;
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return n === 16;
  if (two === 34 || two === 37) return n === 15;
  if (four === 6011 || two === 65 || (four >= 6440 && four <= 6499)) return n === 16 || n === 19;
  if (four >= 3528 && four <= 3589) return n === 16;
  if (two === 36 || two === 38 || (four >= 3000 && four <= 3059)) return n === 14;
  if (two === 62) return n >= 16 && n <= 19;
  return false;
}

/**
 * Card numbers as printed: 4-4-4-4(-3), Amex 4-6-5, Diners 4-6-4, with one kind of separator; or 13-19 digits bare.
 * Written to begin with a digit, the look behind it made after it, and the four digits every shape begins with taken
 * once: V8 then tries the pattern only where a digit stands, once (a table of numbers: 184 -> 65 µs per 100 KB;
 * decision 0043).
 */
export const CARD =
  /\d(?<![0-9A-Za-z.,_/-]\d)\d{3}(?:([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?|([ -])\d{6}\2\d{4,5}|\d{9,15})(?![0-9A-Za-z_/-]|[.,]\d)/g;
/** Words that make a bare run of digits a card number when they stand shortly before it. */
const CARD_WORDS = /(?:card|visa|master ?card|amex|american express|discover|credit|debit|\bcc\b|\bpan\b|payment)/i;

function findCards(text: string, found: Match[]): void {
  for (const match of text.matchAll(CARD)) {
    const digits = match[0].replace(/[ -]/g, '');
    if (!brandFits(digits) || !luhnValid(digits) || /^(\d)\1+$/.test(digits)) continue;
    const grouped = digits.length !== match[0].length;
    if (!grouped && !CARD_WORDS.test(text.slice(Math.max(0, match.index - 60), match.index))) continue;
    found.push({
      start: match.index,
      end: match.index + match[0].length,
      rule: 'personal/card-number',
      kind: 'personal_data',
    });
  }
}

/** IBAN lengths by country (ISO 13616 registry). */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SC: 31,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
};

/** True when the IBAN (no spaces, upper case) has its country's length and its mod-97 remainder is 1. */
export function ibanValid(iban: string): boolean {
  if (IBAN_LENGTHS[iban.slice(0, 2)] !== iban.length) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of moved) {
    const code = char.charCodeAt(0);
    const value = code >= 65 ? code - 55 : code - 48;
    remainder = (value > 9 ? remainder * 100 + value : remainder * 10 + value) % 97;
  }
  return remainder === 1;
}

/** An IBAN written bare or in groups of four. */
const IBAN = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])/g;

function findIbans(text: string, found: Match[]): void {
  for (const match of text.matchAll(IBAN)) {
    if (!ibanValid(match[0].replace(/ /g, ''))) continue;
    found.push({
      start: match.index,
      end: match.index + match[0].length,
      rule: 'personal/iban',
      kind: 'personal_data',
    });
  }
}

/** The part of an address after its `@` (sticky); `name@2x.png` and the like are file names, not addresses. */
const EMAIL_DOMAIN =
  /[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.(?!(?:png|jpe?g|gif|svg|webp|avif|ico|css|js|mjs|json|html?)(?![A-Za-z]))[A-Za-z]{2,24}(?![A-Za-z0-9-])/y;
const LOCAL_CHAR = /[A-Za-z0-9._%+-]/;

/**
 * Email addresses, found from each `@` (a pattern starting at the local part was tried at every position of the
 * text): `{index, value}` in order.
 */
function* emails(text: string): Generator<{ index: number; value: string }> {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start < 64 && LOCAL_CHAR.test(text[start - 1] as string)) start--;
    while (start < at && !/[A-Za-z0-9]/.test(text[start] as string)) start++;
    if (start === at) continue;
    EMAIL_DOMAIN.lastIndex = at + 1;
    const domain = EMAIL_DOMAIN.exec(text);
    if (domain !== null) yield { index: start, value: text.slice(start, at + 1 + domain[0].length) };
  }
}

/**
 * International (+CC …), North American ((NPA) NXX-XXXX, NPA-NXX-XXXX) phone numbers. Each alternative begins with
 * its first character and looks behind it from there, as CARD does (102 -> 76 µs per 100 KB).
 */
export const PHONE =
  /(?:\+(?<![\w+]\+)[1-9]\d{0,2}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){2,4}|\((?<![\w+]\()\d{3}\) ?\d{3}-\d{4}|\d(?<![\w+]\d)\d{2}[-.]\d{3}[-.]\d{4})(?![\w])/g;

/**
 * One finding for a text listing at least LIST_THRESHOLD distinct values of `pattern` (as `normalize` keys them;
 * an empty key is no value), at the first of them.
 */
function findList(
  values: Iterable<{ index: number; value: string }>,
  rule: string,
  normalize: (value: string) => string,
  found: Match[],
): void {
  const seen = new Set<string>();
  let first: { index: number; value: string } | undefined;
  for (const match of values) {
    const key = normalize(match.value);
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    first ??= match;
  }
  if (first === undefined || seen.size < LIST_THRESHOLD) return;
  found.push({
    start: first.index,
    end: first.index + first.value.length,
    rule,
    kind: 'personal_data',
    count: seen.size,
  });
}

/** Every match of a global pattern as `{index, value}`. */
function* matches(text: string, pattern: RegExp): Generator<{ index: number; value: string }> {
  for (const match of text.matchAll(pattern)) yield { index: match.index, value: match[0] };
}

/** Mailboxes of a role, not a person: they make no list of people. */
const ROLE_MAILBOX =
  /^(?:info|support|help|hello|contact|press|sales|billing|admin|noreply|no-reply|team|office|jobs|careers|security|privacy|abuse|postmaster|webmaster)@/;

/** An address as a key for counting people: lower case; '' for a role's mailbox. */
function personalAddress(value: string): string {
  const key = value.toLowerCase();
  return ROLE_MAILBOX.test(key) ? '' : key;
}

/** A phone number's digits, or '' when there are too few or too many for one (E.164: at most 15). */
function phoneKey(value: string): string {
  const digits = value.replace(/\D/g, '');
  return digits.length >= 10 && digits.length <= 15 ? digits : '';
}

/** Every personal-data match in `text`. */
export function findPersonalData(text: string): Match[] {
  const found: Match[] = [];
  findCards(text, found);
  findIbans(text, found);
  findList(emails(text), 'personal/email-list', personalAddress, found);
  findList(matches(text, PHONE), 'personal/phone-list', phoneKey, found);
  return found;
}
