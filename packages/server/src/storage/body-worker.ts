/**
 * The worker thread that encodes version bodies (body-encoder.ts; docs/decisions/0027-compressed-deduplicated-bodies.md):
 * the parent posts `{ id, bytes }` (the HTML in UTF-8) and gets `{ id, body }` (or `{ id, error }`) back, in order. It runs from the build
 * (dist/storage/body-worker.js), also when the service itself runs from sources in the tests.
 */
import { parentPort } from 'node:worker_threads';
import { encodeBodyBytesSync, type StoredBody } from './bodies.js';

/** What the parent posts. */
export interface EncodeRequest {
  readonly id: number;
  readonly bytes: Uint8Array;
}

/** What this worker answers, one per request. */
export type EncodeAnswer =
  | { readonly id: number; readonly body: StoredBody }
  | { readonly id: number; readonly error: string };

const port = parentPort;
if (port === null) throw new Error('body-worker runs as a worker thread');

port.on('message', ({ id, bytes }: EncodeRequest) => {
  let answer: EncodeAnswer;
  try {
    answer = { id, body: encodeBodyBytesSync(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) };
  } catch (error) {
    answer = { id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(answer);
});
