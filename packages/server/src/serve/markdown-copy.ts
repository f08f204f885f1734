/**
 * Versions as readable text for the readable copy (docs/api.md, "Readable copy (Markdown)"), made off the event loop
 * and bounded (docs/decisions/0025-markdown-copy.md, docs/decisions/0031-markdown-copy-bounded-and-neutralised.md).
 * One worker thread, started on first use and stopped when idle, does one request at a time under a heap limit
 * (`resourceLimits`) and a time limit past which it is terminated. A document that outlives either bound, or fails
 * inside the converter, gets its plain text instead, made by the worker too: nothing heavier than a cache lookup
 * runs on the event loop. Finished texts are kept per version in an LRU bounded by their bytes (a version never
 * changes, so nothing needs invalidating); the document is read only on a miss; concurrent requests for one version
 * share one conversion; past `maxQueued` waiting conversions the answer is `busy` at once, before anything is read.
 */
import { builtFile } from '../built-files.js';
import { escapeMarkdownText } from '../domain/markdown-text.js';
import { type ConverterWorker, createConverterWorker, type JobOutcome, type WorkerEvent } from './markdown-runner.js';

/** A version's readable text, as the worker made it. */
export interface ReadableText {
  /** The document as Markdown (UTF-8, trimmed), or its plain text escaped as Markdown text. */
  readonly document: Buffer;
  /** The version's context as neutralised Markdown (UTF-8, trimmed; empty when it has none). */
  readonly context: Buffer;
  /**
   * `converted`; otherwise `document` is the plain text, because the conversion took longer than allowed
   * (`timeout`), or hit the memory limit, failed inside the converter or gave Markdown that failed the safety check
   * (`failed`); or `document` is empty (`unreadable`): even the plain text could not be had within the bounds.
   */
  readonly outcome: 'converted' | 'timeout' | 'failed' | 'unreadable';
  /** Milliseconds the worker spent on it; 0 when it came from the cache or from another request's conversion. */
  readonly convertMs: number;
  /** Why it is not `converted`, for the log: set only on the answer of the request that ran the conversion. */
  readonly detail?: string;
}

/** Too many conversions wait, or the worker cannot run: answered 503 with `Retry-After` (never cached). */
export interface ConverterBusy {
  readonly outcome: 'busy';
  readonly retryAfterSeconds: number;
  readonly detail: string;
}

/** The version a readable text is made of. */
export interface VersionSource {
  /** Names the version's document and context: equal keys mean equal texts (domain/readable-copy.ts). */
  readonly key: string;
  /** Reads the version's HTML: only when no text is kept or being made for `key`; undefined if it is gone. */
  readonly document: () => Promise<string | undefined>;
  /** The version's context ('' for none). */
  readonly context: string;
}

/** What the readable texts hold and do now: for tests, benchmarks and the log. */
export interface MarkdownCopyStats {
  readonly workerRunning: boolean;
  /** Workers started since creation (one per first use, per restart after idle, timeout or crash). */
  readonly workerStarts: number;
  /** Documents handed to the worker for conversion. */
  readonly conversions: number;
  /** Documents handed to the worker for their plain text (after a conversion failed). */
  readonly textFallbacks: number;
  /** Conversions waiting for the worker. */
  readonly queued: number;
  readonly cacheEntries: number;
  /** Bytes of the kept texts (documents, contexts and keys). */
  readonly cacheBytes: number;
}

export interface MarkdownCopies {
  /**
   * The readable text of `source`: from the cache, from a conversion already running for the same version, or from
   * a new one. `busy` when `maxQueued` conversions already wait (or the worker cannot run); undefined when the
   * document is gone.
   */
  readableText(source: VersionSource): Promise<ReadableText | ConverterBusy | undefined>;
  stats(): MarkdownCopyStats;
  /** Terminates the worker; waiting conversions are answered `busy`. */
  close(): Promise<void>;
}

export interface MarkdownCopyOptions {
  /** Wall time one conversion may take in the worker (default 3000 ms). */
  readonly timeoutMs?: number;
  /** Wall time the plain-text pass of a document that failed to convert may take (default 3000 ms). */
  readonly textTimeoutMs?: number;
  /** The worker's old-generation heap (default 256 MiB); past it the worker dies and the text is the answer. */
  readonly maxHeapMb?: number;
  /** Conversions that may wait behind the running one; beyond, the answer is `busy` (default 8). */
  readonly maxQueued?: number;
  /** Bytes of finished texts kept (default 32 MiB); a text larger than this is not kept. */
  readonly cacheBytes?: number;
  /** How long an idle worker is kept before it is terminated (default 30 s); the next request starts another. */
  readonly idleMs?: number;
  /** Where the worker's script is; the build's by default. */
  readonly workerUrl?: URL;
  /** Told when a worker starts or stops, and why (tests, the log). */
  readonly onWorker?: (event: WorkerEvent) => void;
}

/** The compiled worker, which `npm run build` writes and `npm test` builds first (built-files.ts). */
export const MARKDOWN_WORKER_URL = builtFile('serve/markdown-worker.js');

/**
 * The bounds (docs/decisions/0025-markdown-copy.md): a dense 2 MiB document (about 200,000 elements) converts in
 * about 1.4 s within about 200 MiB of heap on a loaded 2-core machine; documents beyond either bound get their text.
 */
export const MARKDOWN_TIMEOUT_MS = 3000;
/** The plain text is one linear pass (about 0.1-0.4 s for the worst 2 MiB measured); the bound is for a stall. */
export const MARKDOWN_TEXT_TIMEOUT_MS = 3000;
export const MARKDOWN_HEAP_MB = 256;
export const MARKDOWN_MAX_QUEUED = 8;
export const MARKDOWN_CACHE_BYTES = 32 * 1_048_576;
export const MARKDOWN_IDLE_MS = 30_000;

/** Bytes an entry is counted for besides its texts and key (the Map entry, the objects, the Buffer headers). */
const ENTRY_OVERHEAD_BYTES = 256;

/** A least-recently-used map bounded by the bytes of its values. */
function createTextCache(maxBytes: number) {
  const entries = new Map<string, { text: ReadableText; bytes: number }>();
  let total = 0;
  return {
    get(key: string): ReadableText | undefined {
      const found = entries.get(key);
      if (found === undefined) return undefined;
      entries.delete(key);
      entries.set(key, found);
      return found.text;
    },
    set(key: string, text: ReadableText): void {
      const bytes = text.document.length + text.context.length + key.length * 2 + ENTRY_OVERHEAD_BYTES;
      if (bytes > maxBytes) return;
      const old = entries.get(key);
      if (old !== undefined) total -= old.bytes;
      entries.delete(key);
      entries.set(key, { text, bytes });
      total += bytes;
      for (const [oldest, entry] of entries) {
        if (total <= maxBytes) break;
        entries.delete(oldest);
        total -= entry.bytes;
      }
    },
    size: () => ({ entries: entries.size, bytes: total }),
  };
}

const bufferOf = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** A worker's answer as a readable text. */
function readableTextOf(done: Extract<JobOutcome, { kind: 'done' }>, as: ReadableText['outcome'], detail?: string) {
  const text: ReadableText = {
    document: bufferOf(done.document),
    context: bufferOf(done.context),
    outcome: as,
    convertMs: done.ms,
    ...(detail === undefined ? {} : { detail }),
  };
  return text;
}

/** The same text without what only the request that made it reports (its time, its detail). */
function asShared(text: ReadableText): ReadableText {
  const { detail: _detail, ...shared } = text;
  return { ...shared, convertMs: 0 };
}

/**
 * Converts `html` in the worker; when the document is at fault (time, heap, converter error), asks the worker for
 * its plain text ahead of every conversion waiting. A string: the detail of a `busy` answer.
 */
async function convertVersion(runner: ConverterWorker, html: string, context: string): Promise<ReadableText | string> {
  const converted = await runner.run({ mode: 'markdown', html, context });
  if (converted.kind === 'busy') return converted.detail;
  if (converted.kind === 'done') {
    const { unsafe } = converted;
    return unsafe === undefined ? readableTextOf(converted, 'converted') : readableTextOf(converted, 'failed', unsafe);
  }
  const fallback = await runner.run({ mode: 'text', html, context }, true);
  if (fallback.kind === 'busy') return fallback.detail;
  if (fallback.kind === 'done') return readableTextOf(fallback, converted.kind, converted.detail);
  return {
    document: Buffer.alloc(0),
    context: Buffer.from(escapeMarkdownText(context.trim())),
    outcome: 'unreadable',
    convertMs: 0,
    detail: `${converted.detail}; plain text: ${fallback.detail}`,
  };
}

export function createMarkdownCopies(options: MarkdownCopyOptions = {}): MarkdownCopies {
  const timeoutMs = options.timeoutMs ?? MARKDOWN_TIMEOUT_MS;
  const runner = createConverterWorker({
    url: options.workerUrl ?? MARKDOWN_WORKER_URL,
    timeoutMs,
    textTimeoutMs: options.textTimeoutMs ?? MARKDOWN_TEXT_TIMEOUT_MS,
    maxHeapMb: options.maxHeapMb ?? MARKDOWN_HEAP_MB,
    maxQueued: options.maxQueued ?? MARKDOWN_MAX_QUEUED,
    idleMs: options.idleMs ?? MARKDOWN_IDLE_MS,
    onWorker: options.onWorker,
  });
  const cache = createTextCache(options.cacheBytes ?? MARKDOWN_CACHE_BYTES);
  const inFlight = new Map<string, Promise<ReadableText | ConverterBusy | undefined>>();
  let reading = 0; // documents being read for a conversion: they hold a place in the queue
  // Past one conversion's bound a place in the queue has freed, whatever is running now.
  const busy = (detail: string): ConverterBusy => ({
    outcome: 'busy',
    retryAfterSeconds: Math.max(1, Math.ceil(timeoutMs / 1000)),
    detail,
  });

  async function produce(source: VersionSource): Promise<ReadableText | ConverterBusy | undefined> {
    // No room: answered before the document is read (a full queue must cost nothing more).
    if (!runner.hasRoom(reading)) return busy('queue full');
    reading++;
    let html: string | undefined;
    try {
      html = await source.document();
    } finally {
      reading--;
    }
    if (html === undefined) return undefined;
    const text = await convertVersion(runner, html, source.context);
    if (typeof text === 'string') return busy(text);
    // Kept whatever the outcome: the same version would fail the same way, so a hostile one costs one bound.
    cache.set(source.key, asShared(text));
    return text;
  }

  return {
    readableText(source) {
      const { key } = source;
      const cached = cache.get(key);
      if (cached !== undefined) return Promise.resolve(cached);
      const pending = inFlight.get(key);
      // Shared: the request that ran the conversion reports its time and its detail.
      if (pending !== undefined)
        return pending.then((t) => (t === undefined || t.outcome === 'busy' ? t : asShared(t)));
      const started = produce(source).finally(() => inFlight.delete(key));
      inFlight.set(key, started);
      return started;
    },
    stats() {
      const size = cache.size();
      return { ...runner.stats(), cacheEntries: size.entries, cacheBytes: size.bytes };
    },
    close: () => runner.close(),
  };
}
