/**
 * How a version's HTML is stored (docs/decisions/0027-compressed-deduplicated-bodies.md): once per distinct content,
 * addressed by the SHA-256 of its UTF-8 bytes, compressed with gzip from node:zlib on the thread pool. Pure: no
 * database here; kysely/bodies.ts keeps and releases the rows.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';

/** The codecs a stored body may carry. Only gzip is written; the column leaves room for another one. */
export type BodyCodec = 'gzip';

/**
 * gzip level 1: measured on report-like documents of 100 KB (bench/README.md, "Write path"), it gave 0.20x in
 * about 0.65 ms where level 6 gave 0.17x in 1.3 ms; creates pay for the level, storage barely gains from more.
 */
export const BODY_GZIP_LEVEL = 1;

/** A version's HTML as it is stored. */
export interface StoredBody {
  /** SHA-256 of the UTF-8 bytes, lowercase hex: the body's address. */
  readonly hash: string;
  readonly codec: BodyCodec;
  readonly data: Buffer;
  /** Length of the UTF-8 bytes (the version's size_bytes). */
  readonly sizeBytes: number;
}

const gzipAsync = promisify(gzip);
/** Output buffer of one compression: a report of some 100 KB fits in one (one trip to the thread pool, not two). */
const COMPRESS_CHUNK = 256 * 1024;
const gunzipAsync = promisify(gunzip);

/** The address of a document: SHA-256 of its UTF-8 bytes, hex. */
export const bodyHash = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Hashes and compresses a document (compression runs on the thread pool). */
export async function encodeBody(html: string): Promise<StoredBody> {
  const bytes = Buffer.from(html, 'utf8');
  const data = await gzipAsync(bytes, { level: BODY_GZIP_LEVEL, chunkSize: COMPRESS_CHUNK });
  return { hash: bodyHash(bytes), codec: 'gzip', data, sizeBytes: bytes.length };
}

/** The UTF-8 bytes of a stored body (decompressed on the thread pool). */
export async function decodeBodyBytes(codec: string, data: Uint8Array): Promise<Buffer> {
  if (codec !== 'gzip') throw new Error(`unknown body codec "${codec}"`);
  return gunzipAsync(data);
}

/** The HTML of a stored body. */
export async function decodeBody(codec: string, data: Uint8Array): Promise<string> {
  return (await decodeBodyBytes(codec, data)).toString('utf8');
}
