/**
 * What /p/<slug>/raw, a drop's own origin and their files send. Everything that can be done once per version
 * (injection, ETag, gzip and brotli variants, the header list of every encoding under every cache policy) is done
 * once when the entry is built, then cached (raw-cache.ts); a request only picks an answer and compares an ETag. A
 * file (docs/api.md, "Many files in one drop") is built the same way, from its bytes as they are.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { isCompressible } from '../domain/files.js';
import { networkDirectives } from '../domain/network.js';
import type { DropRecord, VersionContent, VersionFileContent } from '../domain/types.js';
import { injectDefensiveHead } from './inject.js';
import { prepareHead } from './prepared-head.js';
import type { CachePolicy, RawAnswer, RawAnswers, RawEntry, SurfaceAnswers } from './raw-cache.js';

/** What an entry needs of its drop. */
type ServedDrop = Pick<
  DropRecord,
  | 'slug'
  | 'accountId'
  | 'latestVersion'
  | 'locked'
  | 'passcodeGeneration'
  | 'expiresAt'
  | 'contentLabel'
  | 'network'
  | 'visibility'
  | 'allow'
>;

/** docs/api.md 4.6: on the raw path the sandbox never includes allow-same-origin. */
export const SANDBOX_CSP = 'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads';

/**
 * On the drop's own origin (docs/api.md, "Each drop on its own origin") the sandbox keeps that origin, so storage
 * works; the origin is the drop's alone, so it reaches nothing of the service's or another drop's.
 */
export const CONTENT_SANDBOX_CSP =
  'sandbox allow-scripts allow-same-origin allow-forms allow-popups allow-modals allow-downloads';

/** Where a document is answered: `/p/<slug>/raw` (opaque origin), or the drop's own content host. */
export type Surface = 'raw' | 'content';

/** What the answers depend on besides the drop: who may frame a content host; undefined when none is served. */
export interface ServeOptions {
  readonly contentFrameAncestors: string | undefined;
  /**
   * `{base_url}`: under a network policy, a version with files may load them from its raw folder,
   * `{base_url}/p/<slug>/raw/`. Absent: the raw path names no such source.
   */
  readonly baseUrl?: string | undefined;
}

/** Short shared caching for the latest version; `?v=<n>` never changes, so it is immutable. */
export const CACHE_LATEST = 'public, max-age=60, s-maxage=60';
export const CACHE_PINNED = 'public, max-age=31536000, immutable';
export const CACHE_PRIVATE = 'private, no-store';

const CACHE_CONTROL: Readonly<Record<CachePolicy, string>> = {
  latest: CACHE_LATEST,
  pinned: CACHE_PINNED,
  private: CACHE_PRIVATE,
};

/**
 * The Cache-Control of an expiring drop's answer at `now`: no cache may keep it past the expiry (docs/api.md,
 * "Expiry"), so the usual lifetime is capped at the whole seconds left. Private answers are not kept anyway.
 */
export function cappedCacheControl(policy: CachePolicy, expiresAt: number, now: number): string {
  if (policy === 'private') return CACHE_PRIVATE;
  const left = Math.max(0, Math.floor((expiresAt - now) / 1000));
  return policy === 'latest'
    ? `public, max-age=${Math.min(60, left)}, s-maxage=${Math.min(60, left)}`
    : `public, max-age=${Math.min(31_536_000, left)}, immutable`;
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** Below this size compression is not worth a request's CPU. */
const MIN_COMPRESS_BYTES = 512;

/**
 * A sequential copy of a string built by concatenation or slicing (a V8 cons or sliced string), for values made
 * once per version and read by every request: flat, one object to read instead of a tree of them. Header values
 * are ASCII, so the latin1 round trip is exact.
 */
const flat = (value: string) => Buffer.from(value, 'latin1').toString('latin1');

interface Encoded {
  readonly body: Buffer;
  readonly etag: string;
  readonly encoding: RawAnswer['encoding'];
}

/**
 * What a version's answers are made of: the document (injected) or one of its files (as it is). `files`: the
 * version has files, so a network policy lets it load them from where they are served (its own origin, or its raw
 * folder). `file`: this is a file, answered with byte ranges, and on the raw path readable from the document's
 * opaque origin (a module script, a font or a fetch there is a CORS request from `null`).
 */
interface Representation {
  readonly body: Buffer;
  readonly tag: string;
  readonly contentType: string;
  readonly compress: boolean;
  readonly textMode: boolean;
  readonly files: boolean;
  readonly file: boolean;
  /**
   * A file that neither renders as a document nor runs (an image other than SVG, a font, audio, video): it gets no
   * CSP and no Referrer-Policy, which only a document or a script acts on, and fewer headers cost every request.
   */
  readonly passive: boolean;
}

/** Types that are never a document nor a script, whatever loads them: raster images, fonts, audio, video. */
const PASSIVE = /^(image\/(?!svg)|font\/|audio\/|video\/)/;

/**
 * The headers that differ by surface: the CSP (the sandbox, the network policy and, on a content host, who may frame
 * it) and, on a content host, a CORP that keeps other origins (another drop) from reading its bytes.
 */
function surfaceHeaders(drop: ServedDrop, surface: Surface, what: Representation, options: ServeOptions): SurfaceSpec {
  // The version's own files stay reachable under a network policy: 'self' is the drop's origin on its content host;
  // on the raw path, only the drop's raw folder ('self' would be the service).
  const rawFolder = options.baseUrl === undefined ? undefined : `${options.baseUrl}/p/${drop.slug}/raw/`;
  const self = !what.files ? undefined : surface === 'content' ? "'self'" : rawFolder;
  const network = networkDirectives(drop.network, self);
  const directives =
    surface === 'raw'
      ? [SANDBOX_CSP, network]
      : [CONTENT_SANDBOX_CSP, `frame-ancestors ${options.contentFrameAncestors}`, network];
  const csp = what.passive
    ? []
    : ['content-security-policy', flat(directives.filter((d) => d !== undefined).join('; '))];
  const fileHeaders = what.file ? ['accept-ranges', 'bytes'] : [];
  return surface === 'raw'
    ? {
        headers: [...csp, ...fileHeaders, ...(what.file ? ['access-control-allow-origin', '*'] : [])],
        cacheControl: CACHE_CONTROL,
      }
    : {
        headers: [...csp, 'cross-origin-resource-policy', 'same-origin', ...fileHeaders],
        cacheControl: { ...CACHE_CONTROL, pinned: CACHE_CONTROL[cachedAs('content', 'pinned')] },
      };
}

/**
 * The lifetime a surface gives a policy's answers. On a content host a pinned `?v=<n>` is kept like the latest
 * (60 s), not a year: the viewer frames pinned URLs, and a change of the drop's network policy or of who may frame
 * it must reach browsers that already hold the document (docs/api.md, "Each drop on its own origin").
 */
export function cachedAs(surface: Surface, policy: CachePolicy): CachePolicy {
  return surface === 'content' && policy === 'pinned' ? 'latest' : policy;
}

/** A surface's own headers, and the Cache-Control of each policy there. */
interface SurfaceSpec {
  readonly headers: readonly string[];
  readonly cacheControl: Readonly<Record<CachePolicy, string>>;
}

function answer(
  { body, etag, encoding }: Encoded,
  policy: CachePolicy,
  surface: SurfaceSpec,
  what: Representation,
): RawAnswer {
  const notModifiedHeaders = [
    'content-type',
    what.contentType,
    'x-content-type-options',
    'nosniff',
    ...surface.headers,
    ...(what.passive ? [] : ['referrer-policy', 'no-referrer']),
    'cache-control',
    surface.cacheControl[policy],
    // A file that is never compressed has one representation: nothing to vary on.
    ...(what.compress ? ['vary', 'Accept-Encoding'] : []),
    'etag',
    etag,
  ];
  const headers = [
    ...notModifiedHeaders,
    ...(encoding === undefined ? [] : ['content-encoding', encoding]),
    'content-length',
    String(body.length),
  ];
  return { body, etag, encoding, headers, head: prepareHead(headers), notModifiedHeaders };
}

interface Encodings {
  readonly identity: Encoded;
  readonly gzip: Encoded | undefined;
  readonly brotli: Encoded | undefined;
}

function answersUnder(
  drop: ServedDrop,
  { identity, gzip, brotli }: Encodings,
  policy: CachePolicy,
  surface: SurfaceSpec,
  what: Representation,
): RawAnswers {
  const optional = (encoded: Encoded | undefined) =>
    encoded === undefined ? undefined : answer(encoded, policy, surface, what);
  return {
    policy,
    // Gated (raw-cache.ts): the fast path never sends these, and the writer sends them only privately.
    locked: drop.locked || drop.visibility !== 'public',
    expiresAt: drop.expiresAt,
    identity: answer(identity, policy, surface, what),
    gzip: optional(gzip),
    brotli: optional(brotli),
    ranges: what.file,
  };
}

/** The answers of one surface under each cache policy (the bodies are shared). */
function surfaceAnswers(
  drop: ServedDrop,
  encodings: Encodings,
  headers: SurfaceSpec,
  what: Representation,
): SurfaceAnswers {
  return {
    latest: answersUnder(drop, encodings, 'latest', headers, what),
    pinned: answersUnder(drop, encodings, 'pinned', headers, what),
    private: answersUnder(drop, encodings, 'private', headers, what),
  };
}

/** gzip and brotli of a body that is worth compressing (on the thread pool); each kept only when smaller. */
async function encodingsOf(what: Representation, etag: (suffix: string) => string): Promise<Encodings> {
  const { body } = what;
  const compress = what.compress && body.length >= MIN_COMPRESS_BYTES;
  const [gz, br] = compress
    ? await Promise.all([
        gzipAsync(body, { level: 6 }),
        brotliAsync(body, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: 5,
            [constants.BROTLI_PARAM_MODE]: what.textMode ? constants.BROTLI_MODE_TEXT : constants.BROTLI_MODE_GENERIC,
            [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
          },
        }),
      ])
    : [undefined, undefined];
  return {
    identity: { body, etag: etag(''), encoding: undefined },
    gzip: gz !== undefined && gz.length < body.length ? { body: gz, etag: etag('-gz'), encoding: 'gzip' } : undefined,
    brotli: br !== undefined && br.length < body.length ? { body: br, etag: etag('-br'), encoding: 'br' } : undefined,
  };
}

/** The entry of a document or a file: its encodings and the answers of each surface served. */
async function entryOf(
  drop: ServedDrop,
  version: number,
  what: Representation,
  options: ServeOptions,
): Promise<RawEntry> {
  const encodings = await encodingsOf(what, (suffix) => flat(`"${what.tag}${suffix}"`));
  return {
    slug: drop.slug,
    accountId: drop.accountId,
    version,
    latestVersion: drop.latestVersion,
    locked: drop.locked,
    passcodeGeneration: drop.passcodeGeneration,
    expiresAt: drop.expiresAt,
    visibility: drop.visibility,
    allow: drop.allow,
    contentLabel: drop.contentLabel,
    answers: surfaceAnswers(drop, encodings, surfaceHeaders(drop, 'raw', what, options), what),
    contentAnswers:
      options.contentFrameAncestors === undefined
        ? undefined
        : surfaceAnswers(drop, encodings, surfaceHeaders(drop, 'content', what, options), what),
    bytes: what.body.length + (encodings.gzip?.body.length ?? 0) + (encodings.brotli?.body.length ?? 0),
  };
}

/** The inputs of the headers, hashed into an ETag: a changed network policy or framing rule is a new tag, never a 304. */
const headerInputs = (drop: ServedDrop, options: ServeOptions, files: boolean) =>
  JSON.stringify([drop.network, options.contentFrameAncestors ?? null, files ? (options.baseUrl ?? null) : null]);

/**
 * Builds a document's cache entry: injected bytes, ETag and compressed variants (compression runs on the thread
 * pool), with the answers of the raw path and, when content hosts are served, of the drop's own origin.
 */
export async function buildRawEntry(
  drop: ServedDrop,
  content: Pick<VersionContent, 'version' | 'html'> & { readonly hasFiles?: boolean },
  options: ServeOptions = { contentFrameAncestors: undefined },
): Promise<RawEntry> {
  const body = Buffer.from(injectDefensiveHead(content.html), 'utf8');
  const files = content.hasFiles === true;
  const inputs = headerInputs(drop, options, files);
  const digest = createHash('sha256').update(body).update('\0').update(inputs).digest('base64url');
  const what: Representation = {
    body,
    tag: `${content.version}-${digest.slice(0, 22)}`,
    contentType: 'text/html; charset=utf-8',
    compress: true,
    textMode: true,
    files,
    file: false,
    passive: false,
  };
  return entryOf(drop, content.version, what, options);
}

/** Files above this size are served uncompressed: compressing one would hold the thread pool for too long. */
const MAX_COMPRESSED_FILE_BYTES = 8 * 1_048_576;

/**
 * Builds a file's cache entry (docs/api.md, "Many files in one drop"): its bytes as they are, never injected, with
 * its stored Content-Type, byte ranges, and gzip and brotli variants when its type compresses. The ETag is made
 * from the file's SHA-256 and the headers' inputs, so the same bytes keep their tag from version to version.
 */
export async function buildFileEntry(
  drop: ServedDrop,
  content: VersionFileContent,
  options: ServeOptions = { contentFrameAncestors: undefined },
): Promise<RawEntry> {
  const { file, bytes } = content;
  const inputs = JSON.stringify([file.sha256, file.contentType, headerInputs(drop, options, true)]);
  const digest = createHash('sha256').update(inputs).digest('base64url');
  const what: Representation = {
    body: bytes,
    tag: `f-${digest.slice(0, 22)}`,
    contentType: file.contentType,
    compress: isCompressible(file.contentType) && bytes.length <= MAX_COMPRESSED_FILE_BYTES,
    textMode: /^text\/|json|javascript|xml|svg/.test(file.contentType),
    files: true,
    file: true,
    passive: PASSIVE.test(file.contentType),
  };
  return entryOf(drop, content.version, what, options);
}

/**
 * Picks the variant for an Accept-Encoding header: brotli, then gzip, then identity. A coding listed with q=0 is
 * refused (RFC 9110 12.5.3); other q-values are not ranked (both codings are good for text).
 */
export function pickVariant(answers: RawAnswers, acceptEncoding: string | undefined): RawAnswer {
  if (acceptEncoding === undefined || acceptEncoding === '') return answers.identity;
  if (answers.brotli !== undefined && accepts(acceptEncoding, 'br')) return answers.brotli;
  if (answers.gzip !== undefined && accepts(acceptEncoding, 'gzip')) return answers.gzip;
  return answers.identity;
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
export function matchesEtag(answers: RawAnswers, ifNoneMatch: string | undefined): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate.trim().replace(/^W\//, '');
    if (tag === answers.identity.etag || tag === answers.gzip?.etag || tag === answers.brotli?.etag) return true;
  }
  return false;
}
