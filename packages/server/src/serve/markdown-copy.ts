/**
 * Documents as Markdown for the readable copy (docs/api.md, "Readable copy (Markdown)"), converted off the event
 * loop and bounded (docs/decisions/0025-markdown-copy.md): one reusable worker thread converts one document at a
 * time, under a heap limit (`resourceLimits`) and a time limit after which it is terminated. A document that
 * outlives either bound, or fails inside the converter, gets its plain text instead (plain-text.ts). Results are
 * kept in a small LRU keyed by the served document's ETag (its version and content hash), so a change of the drop
 * never needs an invalidation, and concurrent requests for the same document share one conversion.
 */
import { Worker } from 'node:worker_threads';
import { builtFile } from '../built-files.js';
import type { ConvertRequest, WorkerMessage } from './markdown-worker.js';
import { textOfHtml } from './plain-text.js';

/** A document's text for the readable copy. */
export interface DocumentText {
  readonly markdown: string;
  /**
   * `converted`: the document as Markdown. Otherwise its plain text, because the conversion took longer than allowed
   * (`timeout`), hit the memory limit or failed inside the converter (`failed`), or could not run now (`busy`: too
   * many conversions waiting, or the worker could not start).
   */
  readonly outcome: 'converted' | 'timeout' | 'failed' | 'busy';
  /** Milliseconds the conversion took in the worker (0 when it came from the cache or did not run). */
  readonly convertMs: number;
}

export interface MarkdownCopies {
  /**
   * The text of the document stored under `key` (the served ETag: equal keys mean equal documents). `html` is read
   * only on a miss.
   */
  documentText(key: string, html: () => string): Promise<DocumentText>;
  /** Terminates the worker; waiting conversions get their plain text. */
  close(): Promise<void>;
}

export interface MarkdownCopyOptions {
  /** Wall time one conversion may take in the worker (default 3000 ms). */
  readonly timeoutMs?: number;
  /** The worker's old-generation heap (default 256 MiB); past it the worker dies and the text is the answer. */
  readonly maxHeapMb?: number;
  /** Conversions that may wait for the worker; beyond, the answer is the plain text at once (default 8). */
  readonly maxQueued?: number;
  /** Characters of Markdown kept by the LRU (default 16 Mi, about 32 MiB). */
  readonly cacheChars?: number;
  /** Where the worker's script is; the build's by default. */
  readonly workerUrl?: URL;
  /** Told about each conversion that fell back to text (the app's log). */
  readonly onFallback?: (key: string, outcome: DocumentText['outcome'], detail: string) => void;
}

/** The compiled worker, which `npm run build` writes and `npm test` builds first (built-files.ts). */
export const MARKDOWN_WORKER_URL = builtFile('serve/markdown-worker.js');

/**
 * The bounds (docs/decisions/0025-markdown-copy.md): a dense 2 MiB document (about 200,000 elements) converts in
 * about 1.4 s within about 200 MiB of heap on a loaded 2-core machine; documents beyond either bound get their text.
 */
export const MARKDOWN_TIMEOUT_MS = 3000;
export const MARKDOWN_HEAP_MB = 256;

/** How long a fresh worker may take to load the converter before it is given up on. */
const STARTUP_TIMEOUT_MS = 15_000;

type Outcome =
  | { readonly kind: 'converted'; readonly markdown: string; readonly ms: number }
  | { readonly kind: 'timeout' | 'failed' | 'busy'; readonly detail: string };

interface Job {
  readonly id: number;
  readonly html: string;
  readonly settle: (outcome: Outcome) => void;
}

interface WorkerRunner {
  run(html: string): Promise<Outcome>;
  close(): Promise<void>;
}

/** The worker's limits: heap, and how long one conversion may take. */
interface WorkerLimits {
  readonly timeoutMs: number;
  readonly maxHeapMb: number;
  readonly maxQueued: number;
}

/** One worker, started on first use and after each termination; one conversion at a time, the rest queued. */
class ConverterWorker implements WorkerRunner {
  readonly #queue: Job[] = [];
  #worker: Worker | undefined;
  #ready = false;
  #current: { job: Job; timer: NodeJS.Timeout; startedAt: number } | undefined;
  #startupTimer: NodeJS.Timeout | undefined;
  #nextId = 1;
  #closed = false;

  constructor(
    private readonly url: URL,
    private readonly limits: WorkerLimits,
  ) {}

  run(html: string): Promise<Outcome> {
    if (this.#closed) return Promise.resolve({ kind: 'busy', detail: 'closed' });
    if (this.#queue.length >= this.limits.maxQueued) return Promise.resolve({ kind: 'busy', detail: 'queue full' });
    return new Promise<Outcome>((settle) => {
      this.#queue.push({ id: this.#nextId++, html, settle });
      this.#pump();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#discard({ kind: 'busy', detail: 'closed' }, { kind: 'busy', detail: 'closed' });
  }

  /**
   * Ends the current worker; the current job (if any) settles with `outcome`, the queue with `queued` if given.
   * Resolves once the thread has stopped.
   */
  #discard(outcome: Outcome | undefined, queued?: Outcome): Promise<unknown> {
    const ending = this.#worker;
    this.#worker = undefined;
    this.#ready = false;
    clearTimeout(this.#startupTimer);
    if (this.#current !== undefined) {
      clearTimeout(this.#current.timer);
      const { job } = this.#current;
      this.#current = undefined;
      if (outcome !== undefined) job.settle(outcome);
    }
    if (queued !== undefined) for (const job of this.#queue.splice(0)) job.settle(queued);
    ending?.removeAllListeners();
    ending?.on('error', () => undefined); // a late error of a terminated worker is of no interest
    return ending?.terminate() ?? Promise.resolve();
  }

  #start(): void {
    const started = new Worker(this.url, {
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
    });
    this.#worker = started;
    this.#startupTimer = setTimeout(() => {
      if (this.#worker === started) void this.#discard(undefined, { kind: 'busy', detail: 'worker did not start' });
    }, STARTUP_TIMEOUT_MS);
    this.#startupTimer.unref();
    started.on('message', (message: WorkerMessage) => {
      if (this.#worker === started) this.#received(message);
    });
    started.on('error', (error: Error & { code?: string }) => {
      if (this.#worker !== started) return;
      const detail = error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'heap limit reached' : error.message;
      this.#lost(detail, `worker failed: ${detail}`);
    });
    started.on('exit', (code) => {
      if (this.#worker === started) this.#lost(`worker exited (${code})`, `worker exited (${code})`);
    });
  }

  /** The worker is ready, or answered the current job. */
  #received(message: WorkerMessage): void {
    if (message.type === 'ready') {
      this.#ready = true;
      clearTimeout(this.#startupTimer);
      this.#pump();
      return;
    }
    if (this.#current === undefined || this.#current.job.id !== message.id) return;
    const { job, timer, startedAt } = this.#current;
    clearTimeout(timer);
    this.#current = undefined;
    job.settle(
      message.type === 'done'
        ? { kind: 'converted', markdown: message.markdown, ms: performance.now() - startedAt }
        : { kind: 'failed', detail: message.error },
    );
    this.#pump();
  }

  /**
   * The worker failed or exited: the current job fails; before `ready` the worker itself is broken (its script
   * missing, say), so nothing queued can run now either.
   */
  #lost(detail: string, queuedDetail: string): void {
    const queued: Outcome | undefined = this.#ready ? undefined : { kind: 'busy', detail: queuedDetail };
    void this.#discard({ kind: 'failed', detail }, queued);
    this.#pump();
  }

  /** Starts the next conversion if the worker is free; a worker at work (or awaited) keeps the process alive. */
  #pump(): void {
    this.#dispatch();
    if (this.#current !== undefined || this.#queue.length > 0) this.#worker?.ref();
    else this.#worker?.unref(); // an idle converter never keeps the process alive
  }

  #dispatch(): void {
    if (this.#closed || this.#current !== undefined || this.#queue.length === 0) return;
    if (this.#worker === undefined) this.#start();
    if (!this.#ready || this.#worker === undefined) return;
    const job = this.#queue.shift() as Job;
    const timer = setTimeout(() => {
      void this.#discard({ kind: 'timeout', detail: `over ${this.limits.timeoutMs} ms` });
      this.#pump();
    }, this.limits.timeoutMs);
    this.#current = { job, timer, startedAt: performance.now() };
    this.#worker.postMessage({ id: job.id, html: job.html } satisfies ConvertRequest);
  }
}

/** A least-recently-used map bounded by the total length of its values. */
function createTextCache(maxChars: number) {
  const entries = new Map<string, DocumentText>();
  let chars = 0;
  return {
    get(key: string): DocumentText | undefined {
      const found = entries.get(key);
      if (found !== undefined) {
        entries.delete(key);
        entries.set(key, found);
      }
      return found;
    },
    set(key: string, value: DocumentText): void {
      if (value.markdown.length > maxChars) return;
      const old = entries.get(key);
      if (old !== undefined) chars -= old.markdown.length;
      entries.delete(key);
      entries.set(key, value);
      chars += value.markdown.length;
      for (const [oldest, text] of entries) {
        if (chars <= maxChars) break;
        entries.delete(oldest);
        chars -= text.markdown.length;
      }
    },
  };
}

export function createMarkdownCopies(options: MarkdownCopyOptions = {}): MarkdownCopies {
  const runner = new ConverterWorker(options.workerUrl ?? MARKDOWN_WORKER_URL, {
    timeoutMs: options.timeoutMs ?? MARKDOWN_TIMEOUT_MS,
    maxHeapMb: options.maxHeapMb ?? MARKDOWN_HEAP_MB,
    maxQueued: options.maxQueued ?? 8,
  });
  const cache = createTextCache(options.cacheChars ?? 16 * 1_048_576);
  const inFlight = new Map<string, Promise<DocumentText>>();

  async function convert(key: string, html: string): Promise<DocumentText> {
    const outcome = await runner.run(html);
    if (outcome.kind === 'converted') {
      const text: DocumentText = { markdown: outcome.markdown, outcome: 'converted', convertMs: outcome.ms };
      cache.set(key, { ...text, convertMs: 0 });
      return text;
    }
    options.onFallback?.(key, outcome.kind, outcome.detail);
    const text: DocumentText = { markdown: textOfHtml(html), outcome: outcome.kind, convertMs: 0 };
    // The same document would fail the same way: kept. `busy` says nothing about the document: not kept.
    if (outcome.kind !== 'busy') cache.set(key, text);
    return text;
  }

  return {
    documentText(key, html) {
      const cached = cache.get(key);
      if (cached !== undefined) return Promise.resolve(cached);
      const pending = inFlight.get(key);
      if (pending !== undefined) return pending;
      const started = convert(key, html()).finally(() => inFlight.delete(key));
      inFlight.set(key, started);
      return started;
    },
    close: () => runner.close(),
  };
}
