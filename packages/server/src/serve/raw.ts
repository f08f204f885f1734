/**
 * What /p/<slug>/raw sends. Everything that can be done once per version (injection, ETag, gzip and brotli
 * variants, header sets) is done once when the entry is built, then cached (raw-cache.ts); a request only picks a
 * variant and compares an ETag.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { DropRecord, VersionContent } from '../domain/types.js';
import { injectDefensiveHead } from './inject.js';
import type { CachePolicy, RawEntry, RawVariant } from './raw-cache.js';

/** DECISIONS "Public serving": the sandbox never includes allow-same-origin. */
export const SANDBOX_CSP = 'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads';

/** Short shared caching for the latest version; `?v=<n>` never changes, so it is immutable. */
export const CACHE_LATEST = 'public, max-age=60, s-maxage=60';
export const CACHE_PINNED = 'public, max-age=31536000, immutable';
export const CACHE_PRIVATE = 'private, no-store';

const CACHE_CONTROL: Readonly<Record<CachePolicy, string>> = {
  latest: CACHE_LATEST,
  pinned: CACHE_PINNED,
  private: CACHE_PRIVATE,
};
const POLICIES = ['latest', 'pinned', 'private'] as const;

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** Below this size compression is not worth a request's CPU. */
const MIN_COMPRESS_BYTES = 512;

function variant(body: Buffer, etag: string, encoding: RawVariant['encoding']): RawVariant {
  const common = (policy: CachePolicy) => [
    'content-type',
    'text/html; charset=utf-8',
    'x-content-type-options',
    'nosniff',
    'content-security-policy',
    SANDBOX_CSP,
    'referrer-policy',
    'no-referrer',
    'cache-control',
    CACHE_CONTROL[policy],
    'vary',
    'Accept-Encoding',
    'etag',
    etag,
  ];
  const full = (policy: CachePolicy) => [
    ...common(policy),
    ...(encoding === undefined ? [] : ['content-encoding', encoding]),
    'content-length',
    String(body.length),
  ];
  return {
    body,
    etag,
    encoding,
    headers: Object.fromEntries(POLICIES.map((p) => [p, full(p)])) as Record<CachePolicy, string[]>,
    notModifiedHeaders: Object.fromEntries(POLICIES.map((p) => [p, common(p)])) as Record<CachePolicy, string[]>,
  };
}

/** Builds a cache entry: injected bytes, ETag and compressed variants (compression runs on the thread pool). */
export async function buildRawEntry(drop: DropRecord, content: VersionContent): Promise<RawEntry> {
  const body = Buffer.from(injectDefensiveHead(content.html), 'utf8');
  const tag = `${content.version}-${createHash('sha256').update(body).digest('base64url').slice(0, 22)}`;
  const compress = body.length >= MIN_COMPRESS_BYTES;
  const [gz, br] = compress
    ? await Promise.all([
        gzipAsync(body, { level: 6 }),
        brotliAsync(body, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: 5,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
          },
        }),
      ])
    : [undefined, undefined];
  return {
    slug: drop.slug,
    version: content.version,
    latestVersion: drop.latestVersion,
    locked: drop.locked,
    passcodeGeneration: drop.passcodeGeneration,
    identity: variant(body, `"${tag}"`, undefined),
    gzip: gz !== undefined && gz.length < body.length ? variant(gz, `"${tag}-gz"`, 'gzip') : undefined,
    brotli: br !== undefined && br.length < body.length ? variant(br, `"${tag}-br"`, 'br') : undefined,
    bytes: body.length + (gz?.length ?? 0) + (br?.length ?? 0),
  };
}

/**
 * Picks the variant for an Accept-Encoding header: brotli, then gzip, then identity. A coding listed with q=0 is
 * refused (RFC 9110 12.5.3); other q-values are not ranked (both codings are good for text).
 */
export function pickVariant(entry: RawEntry, acceptEncoding: string | undefined): RawVariant {
  if (acceptEncoding === undefined || acceptEncoding === '') return entry.identity;
  if (entry.brotli !== undefined && accepts(acceptEncoding, 'br')) return entry.brotli;
  if (entry.gzip !== undefined && accepts(acceptEncoding, 'gzip')) return entry.gzip;
  return entry.identity;
}

function accepts(header: string, coding: string): boolean {
  let from = 0;
  for (;;) {
    const at = header.indexOf(coding, from);
    if (at === -1) return false;
    from = at + coding.length;
    const before = at === 0 ? ',' : header[at - 1];
    if (before !== ',' && before !== ' ') continue;
    const end = header.indexOf(',', from);
    const params = header.slice(from, end === -1 ? undefined : end).trim();
    if (params === '') return true;
    if (!params.startsWith(';')) continue;
    return !/;\s*q\s*=\s*0(\.0*)?\s*$/.test(params);
  }
}

/** True when If-None-Match names any variant of this entry (or is `*`). RFC 9110 13.1.2: weak comparison. */
export function matchesEtag(entry: RawEntry, ifNoneMatch: string | undefined): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate.trim().replace(/^W\//, '');
    if (tag === entry.identity.etag || tag === entry.gzip?.etag || tag === entry.brotli?.etag) return true;
  }
  return false;
}
