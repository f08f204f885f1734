/**
 * The worker thread that encodes stored bodies (body-encoder.ts; docs/decisions/0027-compressed-deduplicated-bodies.md):
 * the parent posts `{ id, html }` (a version's HTML) or `{ id, files }` (a version's files) and gets
 * `{ id, body }` or `{ id, bodies }` (or `{ id, error }`) back, in order. A file kept as it is comes back without its
 * data (the parent has the bytes). It runs from the build (dist/storage/body-worker.js), also when the service itself
 * runs from sources in the tests. With `document: true` the answer also carries the HTML's text as the search index
 * takes it (`content`, docs/decisions/0037-full-text-search-words-made-once.md), made here, off the event loop, and with `pack: true` that text packed for SQLite's index (`packedText`).
 */
import { parentPort } from 'node:worker_threads';
import { textOfHtml } from '../domain/plain-text.js';
import { type IndexedContent, indexedContent } from '../domain/search.js';
import { encodeBodyBytesSync, encodeFileSync, type FileToEncode, packText, type StoredBody } from './bodies.js';

/** What the parent posts. */
export type EncodeRequest =
  | { readonly id: number; readonly html: string; readonly document?: boolean; readonly pack?: boolean }
  | { readonly id: number; readonly files: readonly FileToEncode[] };

/** A file's stored body as answered: without `data` when it is kept as it is. */
export type EncodedFile = Omit<StoredBody, 'data'> & { readonly data: Uint8Array | undefined };

/** What this worker answers, one per request. */
export type EncodeAnswer =
  | {
      readonly id: number;
      readonly body: StoredBody;
      readonly content?: IndexedContent;
      readonly packedText?: Uint8Array;
    }
  | { readonly id: number; readonly bodies: readonly EncodedFile[] }
  | { readonly id: number; readonly error: string };

const port = parentPort;
if (port === null) throw new Error('body-worker runs as a worker thread');

function encode(request: EncodeRequest): EncodeAnswer {
  if ('files' in request) {
    const bodies = request.files.map((file): EncodedFile => {
      const body = encodeFileSync(file);
      return body.codec === 'identity' ? { ...body, data: undefined } : body;
    });
    return { id: request.id, bodies };
  }
  const body = encodeBodyBytesSync(Buffer.from(request.html, 'utf8'));
  if (request.document !== true) return { id: request.id, body };
  const content = indexedContent(textOfHtml(request.html));
  return { id: request.id, body, content, ...(request.pack === true ? { packedText: packText(content.text) } : {}) };
}

port.on('message', (request: EncodeRequest) => {
  let answer: EncodeAnswer;
  try {
    answer = encode(request);
  } catch (error) {
    answer = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(answer);
});
