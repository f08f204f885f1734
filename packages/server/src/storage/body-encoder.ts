/**
 * Where version bodies are hashed and compressed (docs/decisions/0027-compressed-deduplicated-bodies.md): in one
 * worker thread, so a create spends on its event loop only a copy of its HTML into the worker and the copy of the
 * compressed bytes back. A version's files go over as one job (docs/decisions/0033). Jobs
 * are encoded in the order they arrive. When the worker is busy with more than `maxPending` jobs, has failed, or
 * cannot start, encoding runs on the thread pool in-process (encodeBody, encodeFile): slower for the event loop,
 * never lost.
 */
import { Worker } from 'node:worker_threads';
import { builtFile } from '../built-files.js';
import { textOfHtml } from '../domain/plain-text.js';
import { type IndexedContent, indexedContent } from '../domain/search.js';
import { releaseMemoryWhenQuiet } from '../release-memory.js';
import { encodeBody, encodeFile, type FileToEncode, packText, type StoredBody } from './bodies.js';
import type { EncodeAnswer, EncodedFile, EncodeRequest } from './body-worker.js';

/** A version's HTML stored, and its text as the search index takes it (docs/decisions/0037). */
export interface EncodedDocument {
  readonly body: StoredBody;
  readonly content: IndexedContent;
  /** The text packed for SQLite's index (bodies.ts `packText`), when the encoder was made to pack it. */
  readonly packedText?: Buffer | undefined;
}

export interface BodyEncoder {
  encode(html: string): Promise<StoredBody>;
  /** A version's HTML encoded as `encode` does, and its indexed text (domain/search.ts), made in the same job. */
  encodeDocument(html: string): Promise<EncodedDocument>;
  /** A version's files, each hashed and, when that pays, compressed; in the order given. */
  encodeFiles(files: readonly FileToEncode[]): Promise<StoredBody[]>;
  /** Stops the worker; jobs still being encoded finish in-process. */
  close(): Promise<void>;
}

/** The compiled worker, which `npm run build` writes and `npm test` builds first (built-files.ts). */
export const BODY_WORKER_URL = builtFile('storage/body-worker.js');

/** Structured cloning turns the Buffer into a plain Uint8Array: the same bytes, viewed as a Buffer again. */
function asBuffer(body: StoredBody): StoredBody {
  const { data } = body;
  return { ...body, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength) };
}

/** A job the worker holds: how to finish it from its answer, and how to do it in-process if the worker goes. */
interface Pending {
  readonly settle: (answer: EncodeAnswer) => void;
  readonly fallback: () => void;
}

/** The files' answers as stored bodies: a file kept as it is gets its own bytes (the worker sent none back). */
function filesFrom(bodies: readonly EncodedFile[], files: readonly FileToEncode[]): StoredBody[] {
  return bodies.map((body, i) => {
    const data = body.data ?? (files[i] as FileToEncode).bytes;
    return { ...body, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength) };
  });
}

const inProcess = (files: readonly FileToEncode[]) => Promise.all(files.map(encodeFile));

/** The worker's document job on this thread (compression on the thread pool, the text here). */
async function encodeDocumentInProcess(html: string, pack: boolean): Promise<EncodedDocument> {
  const body = await encodeBody(html);
  const content = indexedContent(textOfHtml(html));
  return { body, content, packedText: pack ? packText(content.text) : undefined };
}

/**
 * An idle worker stops after this long, giving back its memory (about 14 MB of the service's RSS after a burst of
 * 100 KB creates, bench:write); the next create starts one again in a few milliseconds. 10 s, not a minute: an agent's
 * publishes come in bursts, and between bursts the worker is memory held for nothing
 * (docs/decisions/0042-memory-given-back-after-a-burst.md).
 */
const IDLE_STOP_MS = 10_000;

/**
 * The worker's heap, kept small: the documents it encodes arrive and leave as bytes outside its heap. Its young
 * generation was 2 MB (V8's default, up to 16 MB per half, cost about 20 MB resident for nothing) until the worker
 * also made each document's text and words for the search index, which allocate as they go. In bench:write a 100 KB
 * create cost 21.7 ms of CPU at 2 MB and 16.1 ms at 16 MB; with the leaner index of decision 0040, 14.7 ms at 8 MB and
 * 13.6 ms at 16 MB, the service's RSS after the run 165 MB (2 MB), 180 MB (8 MB) and 185 MB (16 MB): 8 MB it is
 * (docs/decisions/0040-search-filters-in-the-index.md). A worker that runs out of heap exits, and its documents
 * are encoded in-process (never lost).
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 32 } as const;

export interface BodyEncoderOptions {
  readonly workerUrl?: URL;
  readonly maxPending?: number;
  readonly idleStopMs?: number;
  /**
   * Whether a document's text also comes packed for SQLite's search index (kysely/search.ts): compressed in the
   * worker, off the event loop, rather than in the write's transaction. PostgreSQL keeps the text as it is.
   */
  readonly packText?: boolean;
  /**
   * Whether the process gives memory back (releaseMemoryWhenQuiet(): one full collection once it is quiet) when the
   * worker stops for idleness: the end of a burst of writes, which grew the main thread's heap (decision 0042).
   */
  readonly releaseMemoryWhenIdle?: boolean;
}

export function createBodyEncoder(options: BodyEncoderOptions = {}): BodyEncoder {
  const maxPending = options.maxPending ?? 16;
  const pack = options.packText === true;
  const idleStopMs = options.idleStopMs ?? IDLE_STOP_MS;
  let idleTimer: NodeJS.Timeout | undefined;
  const pending = new Map<number, Pending>();
  let worker: Worker | undefined;
  /** Set once a worker failed before answering anything: its script is missing or broken, so stop trying. */
  let broken = false;
  let closed = false;
  let nextId = 1;

  /** Hands what the worker still held to the in-process encoder, and forgets the worker. */
  function discard(): Promise<unknown> {
    clearTimeout(idleTimer);
    const ending = worker;
    worker = undefined;
    ending?.removeAllListeners();
    ending?.on('error', () => undefined);
    for (const job of pending.values()) job.fallback();
    pending.clear();
    return ending?.terminate() ?? Promise.resolve();
  }

  function start(): Worker {
    const started = new Worker(options.workerUrl ?? BODY_WORKER_URL, { resourceLimits: WORKER_LIMITS });
    let answered = false;
    started.on('message', (answer: EncodeAnswer) => {
      answered = true;
      const job = pending.get(answer.id);
      if (job === undefined) return;
      pending.delete(answer.id);
      job.settle(answer);
      if (pending.size === 0) {
        started.unref();
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => {
          if (worker !== started || pending.size > 0) return;
          void discard();
          if (options.releaseMemoryWhenIdle === true) releaseMemoryWhenQuiet();
        }, idleStopMs);
        idleTimer.unref();
      }
    });
    const fail = () => {
      if (worker !== started) return;
      if (!answered) broken = true;
      void discard();
    };
    started.on('error', fail);
    started.on('exit', fail);
    return started;
  }

  /** Hands a job to the worker (started on demand); its promise settles from the answer, or in-process. */
  function post<T>(
    request: (id: number) => EncodeRequest,
    settle: (answer: EncodeAnswer) => T,
    fallback: () => Promise<T>,
  ): Promise<T> {
    clearTimeout(idleTimer);
    worker ??= start();
    const id = nextId++;
    const running = worker;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, {
        settle: (answer) => {
          if ('error' in answer) reject(new Error(`encoding a body failed: ${answer.error}`));
          else resolve(settle(answer));
        },
        fallback: () => void fallback().then(resolve, reject),
      });
      running.ref();
      running.postMessage(request(id));
    });
  }

  const busy = () => closed || broken || pending.size >= maxPending;

  /**
   * The HTML goes to the worker as a string, which it encodes to UTF-8 for the hash and brotli, and reads as it is for
   * the text. Copying a 100 KB string into the worker's heap costs about 14 µs; sending its UTF-8 bytes instead (moved
   * without a copy) cost the event loop 0.1 ms to encode them and the worker 0.26 ms to decode them again for the text,
   * as soon as the document held one character beyond ASCII (decision 0043).
   */
  function postHtml<T>(
    html: string,
    document: boolean,
    settle: (answer: EncodeAnswer) => T,
    fallback: () => Promise<T>,
  ) {
    const request = (id: number): EncodeRequest => (document ? { id, html, document, pack } : { id, html });
    return post(request, settle, fallback);
  }

  return {
    encode(html) {
      if (busy()) return encodeBody(html);
      return postHtml(
        html,
        false,
        (answer) => asBuffer((answer as { body: StoredBody }).body),
        () => encodeBody(html),
      );
    },
    encodeDocument(html) {
      if (busy()) return encodeDocumentInProcess(html, pack);
      return postHtml(
        html,
        true,
        (answer) => {
          const { body, content, packedText } = answer as {
            body: StoredBody;
            content: IndexedContent;
            packedText?: Uint8Array;
          };
          const packed =
            packedText === undefined
              ? undefined
              : Buffer.from(packedText.buffer, packedText.byteOffset, packedText.byteLength);
          return { body: asBuffer(body), content, packedText: packed };
        },
        () => encodeDocumentInProcess(html, pack),
      );
    },
    encodeFiles(files) {
      if (files.length === 0) return Promise.resolve([]);
      if (busy()) return inProcess(files);
      // Copied, not moved: the bytes stay here for the in-process fallback and for files kept as they are.
      return post(
        (id) => ({ id, files }),
        (answer) => filesFrom((answer as { bodies: readonly EncodedFile[] }).bodies, files),
        () => inProcess(files),
      );
    },
    async close() {
      closed = true;
      await discard();
    },
  };
}
