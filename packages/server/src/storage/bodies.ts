/**
 * How a version's HTML is stored (docs/decisions/0027-compressed-deduplicated-bodies.md): once per distinct content,
 * addressed by the SHA-256 of its UTF-8 bytes, compressed with brotli from node:zlib at quality 1. Pure: no database
 * here; kysely/bodies.ts keeps and releases the rows, body-encoder.ts decides which thread encodes.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, brotliDecompress, constants } from 'node:zlib';

/** The codecs a stored body may carry. Only `br` is written; the column leaves room for another one. */
export type BodyCodec = 'br';

/**
 * Brotli quality 1, text mode. Measured on report-like documents of 100 KB (bench/README.md, "Write path"): 0.20x in
 * about 0.35 ms of CPU, where gzip took 0.5-0.7 ms for the same ratio (levels 1-2) and brotli quality 2 twice the
 * time for 0.18x. A create pays for the level, storage barely gains from more.
 */
const BROTLI_OPTIONS = (bytes: number) => ({
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 1,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    [constants.BROTLI_PARAM_SIZE_HINT]: bytes,
  },
});

/** A version's HTML as it is stored. */
export interface StoredBody {
  /** SHA-256 of the UTF-8 bytes, lowercase hex: the body's address. */
  readonly hash: string;
  readonly codec: BodyCodec;
  readonly data: Buffer;
  /** Length of the UTF-8 bytes (the version's size_bytes). */
  readonly sizeBytes: number;
}

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

/** The UTF-8 bytes of a stored body (decompressed on the thread pool). */
export async function decodeBodyBytes(codec: string, data: Uint8Array): Promise<Buffer> {
  if (codec !== 'br') throw new Error(`unknown body codec "${codec}"`);
  return decompressAsync(data);
}

/** The HTML of a stored body. */
export async function decodeBody(codec: string, data: Uint8Array): Promise<string> {
  return (await decodeBodyBytes(codec, data)).toString('utf8');
}
