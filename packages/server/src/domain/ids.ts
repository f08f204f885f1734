/** Identifiers and secrets (docs/api.md, "Identifiers"). Randomness is injectable for tests. */
import { createHash, randomInt as cryptoRandomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform integer in [0, max). crypto.randomInt has no modulo bias. */
export type RandomInt = (max: number) => number;

export const secureRandomInt: RandomInt = (max) => cryptoRandomInt(max);

export function randomBase62(length: number, random: RandomInt = secureRandomInt): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[random(62)];
  return out;
}

/** Lowercase letters and digits only: for DNS labels, where case does not count. */
export function randomBase36(length: number, random: RandomInt = secureRandomInt): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[random(36)]?.toLowerCase();
  return out;
}

/** A slug: 10 base62 characters, about 59 bits. */
export function newSlug(random?: RandomInt): string {
  return randomBase62(10, random);
}

/** A comment id: `c_` + 16 base62 characters. */
export function newCommentId(random?: RandomInt): string {
  return `c_${randomBase62(16, random)}`;
}

/** A user id: `u_` + 16 base62 characters. */
export function newUserId(random?: RandomInt): string {
  return `u_${randomBase62(16, random)}`;
}

/** Path slugs accepted by the API (docs/api.md, "Identifiers": 1 to 64 of [A-Za-z0-9_-]). */
export const SLUG_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
const SLUG_RE = new RegExp(SLUG_PATTERN);
export function isValidSlug(value: string): boolean {
  return SLUG_RE.test(value);
}

export const TOKEN_PREFIX = 'hd_';
const TOKEN_BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;

function encodeChecksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A new API token: `hd_` + 32 random base62 + 6-character base62 CRC32 of the random part. */
export function newApiToken(random?: RandomInt): string {
  const body = randomBase62(TOKEN_BODY_LENGTH, random);
  return `${TOKEN_PREFIX}${body}${encodeChecksum(body)}`;
}

const TOKEN_RE = new RegExp(`^${TOKEN_PREFIX}([0-9A-Za-z]{${TOKEN_BODY_LENGTH},})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);

/** True when the token has the right shape and checksum (no storage lookup needed to reject typos). */
export function isWellFormedToken(token: string): boolean {
  const match = TOKEN_RE.exec(token);
  return match !== null && encodeChecksum(match[1] ?? '') === match[2];
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Token id: the first 12 hex characters of the token's SHA-256 hash (spec 4.4). */
export function tokenIdFromHash(hash: string): string {
  return hash.slice(0, 12);
}

export const TOKEN_ID_PATTERN = '^[0-9a-f]{12}$';

/** Version numbers are 32-bit integers in storage (PostgreSQL refuses larger ones): anything above names nothing. */
export const MAX_VERSION_NUMBER = 2_147_483_647;

/**
 * A version number as written in a path or query (`/v/<n>`, `?v=<n>`): 1 to 2^31-1 in plain decimal, else
 * undefined (a malformed or impossible number).
 */
export function parseVersionNumber(raw: unknown): number | undefined {
  if (typeof raw !== 'string' || !/^[1-9]\d{0,9}$/.test(raw)) return undefined;
  const n = Number(raw);
  return n <= MAX_VERSION_NUMBER ? n : undefined;
}
