/**
 * The worker thread that makes a version's readable text (docs/decisions/0025-markdown-copy.md,
 * docs/decisions/0031-markdown-copy-bounded-and-neutralised.md). One request at a time: the parent
 * (markdown-runner.ts) posts `{ id, mode, html, context }` and gets `{ id, document, context }` (UTF-8, transferred)
 * or `{ id, error }` back, and terminates this thread when a request outlives its time; `resourceLimits` bound its
 * heap. `markdown` converts the document (and falls back to its text if the result fails the safety check);
 * `text` is the fallback the parent asks for after a conversion failed: the document's plain text, escaped as
 * Markdown text. The converter and its libraries load here only, when the parent first needs the worker. It runs
 * from the build (dist/serve/markdown-worker.js), also when the service itself runs from sources in the tests.
 */
import { parentPort } from 'node:worker_threads';
import { escapeMarkdownText } from '../domain/markdown-text.js';
import { textOfHtml } from '../domain/plain-text.js';
import { createHtmlToMarkdown } from './markdown-convert.js';
import { contextAsMarkdown, findUnsafeMarkdown } from './markdown-safety.js';

/** What the parent posts. */
export interface ConvertRequest {
  readonly id: number;
  /** `markdown`: convert the document; `text`: its plain text only (the fallback). */
  readonly mode: 'markdown' | 'text';
  /** The document's HTML. */
  readonly html: string;
  /** The version's context, the agent's Markdown ('' for none). */
  readonly context: string;
}

/** What this worker answers: `ready` once loaded, then one answer per request. */
export type WorkerMessage =
  | { readonly type: 'ready' }
  | {
      readonly type: 'done';
      readonly id: number;
      /** The document as Markdown, or its escaped plain text (UTF-8, trimmed). */
      readonly document: Uint8Array;
      /** The context as neutralised Markdown (UTF-8, trimmed). */
      readonly context: Uint8Array;
      /** Set when the converted Markdown failed the safety check and `document` is the plain text instead. */
      readonly unsafe: string | undefined;
    }
  | { readonly type: 'failed'; readonly id: number; readonly error: string };

const port = parentPort;
if (port === null) throw new Error('markdown-worker runs as a worker thread');
const toMarkdown = createHtmlToMarkdown();
const encoder = new TextEncoder();

/** The document's text as Markdown text: nothing in it renders as markup. */
const plainText = (html: string) => escapeMarkdownText(textOfHtml(html));

function contextOf(context: string): string {
  try {
    return contextAsMarkdown(context, toMarkdown);
  } catch {
    return escapeMarkdownText(context.trim()); // the converter failed on it: its text, escaped
  }
}

function answer({ id, mode, html: source, context }: ConvertRequest): WorkerMessage {
  let document: string;
  let unsafe: string | undefined;
  if (mode === 'text') document = plainText(source);
  else {
    document = toMarkdown(source).trim();
    unsafe = findUnsafeMarkdown(document);
    if (unsafe !== undefined) document = plainText(source);
  }
  return { type: 'done', id, document: encoder.encode(document), context: encoder.encode(contextOf(context)), unsafe };
}

port.on('message', (request: ConvertRequest) => {
  let reply: WorkerMessage;
  try {
    reply = answer(request);
  } catch (error) {
    // Deep nesting overflows the converter's recursion (RangeError): the document's fault, answered as a failure.
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    reply = { type: 'failed', id: request.id, error: message };
  }
  const transfer = reply.type === 'done' ? [reply.document.buffer, reply.context.buffer] : [];
  port.postMessage(reply, transfer as ArrayBuffer[]);
});
port.postMessage({ type: 'ready' } satisfies WorkerMessage);
