/**
 * The worker thread that converts documents to Markdown (docs/decisions/0025-markdown-copy.md). One document at a
 * time: the parent (markdown-copy.ts) posts `{ id, html }`, gets `{ id, markdown }` or `{ id, error }` back, and
 * terminates this thread when a conversion outlives its time; `resourceLimits` bound its heap. It runs from the
 * build (dist/serve/markdown-worker.js), also when the service itself runs from sources in the tests.
 */
import { parentPort } from 'node:worker_threads';
import { createHtmlToMarkdown } from './markdown-convert.js';

/** What the parent posts. */
export interface ConvertRequest {
  readonly id: number;
  readonly html: string;
}

/** What this worker answers: `ready` once loaded, then one answer per request. */
export type WorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'done'; readonly id: number; readonly markdown: string }
  | { readonly type: 'failed'; readonly id: number; readonly error: string };

const port = parentPort;
if (port === null) throw new Error('markdown-worker runs as a worker thread');
const toMarkdown = createHtmlToMarkdown();

port.on('message', ({ id, html }: ConvertRequest) => {
  let answer: WorkerMessage;
  try {
    answer = { type: 'done', id, markdown: toMarkdown(html) };
  } catch (error) {
    // Deep nesting overflows the converter's recursion (RangeError): the document's fault, answered as a failure.
    answer = { type: 'failed', id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
  port.postMessage(answer);
});
port.postMessage({ type: 'ready' } satisfies WorkerMessage);
