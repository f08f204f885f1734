/**
 * How a version's HTML and its files are stored (docs/decisions/0027-compressed-deduplicated-bodies.md,
 * docs/decisions/0033-many-files-in-one-drop.md): once per distinct content, addressed by the SHA-256 of its bytes,
 * compressed with brotli from node:zlib at quality 1, a file only when that pays (PNG, JPEG or WOFF2 bytes are kept
 * as they are). Pure: no database here; kysely/bodies.ts keeps and releases the rows, body-encoder.ts decides which
 * thread encodes.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, brotliDecompress, brotliDecompressSync, constants } from 'node:zlib';

/** The codecs a stored body may carry: brotli, or the bytes as they are (a file that compression would not shrink). */
export type BodyCodec = 'br' | 'identity';

/**
 * Brotli quality 1, text mode. Measured on report-like documents of 100 KB (bench/README.md, "Write path"): 0.20x in
 * about 0.35 ms of CPU, where gzip took 0.5-0.7 ms for the same ratio (levels 1-2) and brotli quality 2 twice the
 * time for 0.18x. A create pays for the level, storage barely gains from more.
 */
const BROTLI_OPTIONS = (bytes: number, mode: number = constants.BROTLI_MODE_TEXT) => ({
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 1,
    [constants.BROTLI_PARAM_MODE]: mode,
    [constants.BROTLI_PARAM_SIZE_HINT]: bytes,
  },
});

/** A version's HTML, or one of its files, as it is stored. */
export interface StoredBody {
  /** SHA-256 of the bytes (the HTML's in UTF-8), lowercase hex: the body's address. */
  readonly hash: string;
  readonly codec: BodyCodec;
  readonly data: Buffer;
  /** Length of the bytes (the version's size_bytes, or the file's). */
  readonly sizeBytes: number;
}

/** A file to store: its bytes, and whether compressing them is worth a try (docs/decisions/0033). */
export interface FileToEncode {
  readonly bytes: Uint8Array;
  readonly compress: boolean;
}

/** Bytes this small are kept as they are: brotli's frame would eat what it saves. */
const MIN_COMPRESS_BYTES = 64;

/** A compressed file is kept only when it is at most this share of the bytes; otherwise they are kept as they are. */
const PAYS = 0.9;

/** Whether a file's compressed form is kept (else its bytes as they are): smaller by at least a tenth. */
const pays = (compressed: number, original: number) => compressed <= original * PAYS;

const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** A file stored as it is: the data is the bytes themselves (no copy). */
const identityBody = (bytes: Uint8Array): StoredBody => {
  const data = asBuffer(bytes);
  return { hash: bodyHash(data), codec: 'identity', data, sizeBytes: data.length };
};

const compressAsync = promisify(brotliCompress);
const decompressAsync = promisify(brotliDecompress);

/** The address of a document: SHA-256 of its UTF-8 bytes, hex. */
export const bodyHash = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Hashes and compresses a document (compression runs on the thread pool). */
export async function encodeBody(html: string): Promise<StoredBody> {
  const bytes = Buffer.from(html, 'utf8');
  const data = await compressAsync(bytes, BROTLI_OPTIONS(bytes.length));
  return { hash: bodyHash(bytes), codec: 'br', data, sizeBytes: bytes.length };
}

/** The same from the UTF-8 bytes, synchronously: for the encoding worker (body-encoder.ts), whose thread does nothing else. */
export function encodeBodyBytesSync(bytes: Buffer): StoredBody {
  const data = brotliCompressSync(bytes, BROTLI_OPTIONS(bytes.length));
  return { hash: bodyHash(bytes), codec: 'br', data, sizeBytes: bytes.length };
}

/** Hashes a file and, when worth a try and when it pays, compresses it (generic mode); synchronous, for the worker. */
export function encodeFileSync({ bytes, compress }: FileToEncode): StoredBody {
  if (!compress || bytes.length < MIN_COMPRESS_BYTES) return identityBody(bytes);
  const data = brotliCompressSync(bytes, BROTLI_OPTIONS(bytes.length, constants.BROTLI_MODE_GENERIC));
  if (!pays(data.length, bytes.length)) return identityBody(bytes);
  return { hash: bodyHash(asBuffer(bytes)), codec: 'br', data, sizeBytes: bytes.length };
}

/** The same, compressing on the thread pool: the in-process fallback of body-encoder.ts. */
export async function encodeFile({ bytes, compress }: FileToEncode): Promise<StoredBody> {
  if (!compress || bytes.length < MIN_COMPRESS_BYTES) return identityBody(bytes);
  const data = await compressAsync(bytes, BROTLI_OPTIONS(bytes.length, constants.BROTLI_MODE_GENERIC));
  if (!pays(data.length, bytes.length)) return identityBody(bytes);
  return { hash: bodyHash(asBuffer(bytes)), codec: 'br', data, sizeBytes: bytes.length };
}

/**
 * A document's indexed text as SQLite's search index keeps it for snippets (kysely/search.ts): compressed as a body
 * is (a report's text to about a fifth), without a hash (it is not addressed by its content). Synchronous: it runs in
 * the encoding worker, or for one document at a time (a backfill, a deleted version).
 */
export const packText = (text: string): Buffer => {
  const bytes = Buffer.from(text, 'utf8');
  return brotliCompressSync(bytes, BROTLI_OPTIONS(bytes.length));
};

/** The text {@link packText} packed. */
export const unpackText = (packed: Uint8Array): string => brotliDecompressSync(packed).toString('utf8');

/** The bytes of a stored body (decompressed on the thread pool; an identity body is its data). */
export async function decodeBodyBytes(codec: string, data: Uint8Array): Promise<Buffer> {
  if (codec === 'identity') return asBuffer(data);
  if (codec !== 'br') throw new Error(`unknown body codec "${codec}"`);
  return decompressAsync(data);
}

/** The HTML of a stored body. */
export async function decodeBody(codec: string, data: Uint8Array): Promise<string> {
  return (await decodeBodyBytes(codec, data)).toString('utf8');
}
