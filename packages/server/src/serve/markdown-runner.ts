/**
 * The one worker thread of the readable copy (markdown-worker.ts) and its queue
 * (docs/decisions/0031-markdown-copy-bounded-and-neutralised.md): started on the first job, not at start-up;
 * one job at a time, each under a time limit past which the worker is terminated, and under `resourceLimits`;
 * a bounded queue whose overflow is answered `busy` at once; terminated after `idleMs` without work, and started
 * again by the next job. A worker at work keeps the process alive; an idle one never does.
 */
import { Worker } from 'node:worker_threads';
import type { ConvertRequest, WorkerMessage } from './markdown-worker.js';

/** A job for the worker: the document's HTML and the version's context. */
export interface Job {
  readonly mode: ConvertRequest['mode'];
  readonly html: string;
  readonly context: string;
}

export type JobOutcome =
  | {
      readonly kind: 'done';
      readonly document: Uint8Array;
      readonly context: Uint8Array;
      readonly unsafe: string | undefined;
      readonly ms: number;
    }
  /** `timeout`/`failed`: the document's fault. `busy`: no room in the queue, the worker cannot start, or closed. */
  | { readonly kind: 'timeout' | 'failed' | 'busy'; readonly detail: string };

/** A worker started, or stopped and why. */
export type WorkerEvent =
  | { readonly kind: 'started' }
  | { readonly kind: 'stopped'; readonly reason: 'idle' | 'timeout' | 'lost' | 'closed' | 'no start' };

export interface RunnerOptions {
  readonly url: URL;
  /** Wall time a conversion may take, from the moment the worker takes it. */
  readonly timeoutMs: number;
  /** Wall time a plain-text pass may take. */
  readonly textTimeoutMs: number;
  readonly maxHeapMb: number;
  readonly maxQueued: number;
  readonly idleMs: number;
  readonly onWorker?: ((event: WorkerEvent) => void) | undefined;
}

export interface RunnerStats {
  readonly workerRunning: boolean;
  readonly workerStarts: number;
  readonly conversions: number;
  readonly textFallbacks: number;
  readonly queued: number;
}

export interface ConverterWorker {
  /**
   * Runs `job` when the worker is free. `first`: ahead of everything waiting and regardless of the queue's bound
   * (the plain text of a document whose conversion just failed: its readers have waited once already).
   */
  run(job: Job, first?: boolean): Promise<JobOutcome>;
  /**
   * Whether `run` would take one more job now, counting `coming` jobs the caller is still preparing (so a caller
   * need not read a document to be told `busy`).
   */
  hasRoom(coming?: number): boolean;
  stats(): RunnerStats;
  /** Terminates the worker; the running and waiting jobs are answered `busy`. */
  close(): Promise<void>;
}

/** How long a fresh worker may take to load the converter before it is given up on. */
const STARTUP_TIMEOUT_MS = 15_000;

interface Queued extends Job {
  readonly id: number;
  readonly settle: (outcome: JobOutcome) => void;
}

type StopReason = Extract<WorkerEvent, { kind: 'stopped' }>['reason'];

export function createConverterWorker(options: RunnerOptions): ConverterWorker {
  return new Runner(options);
}

class Runner implements ConverterWorker {
  readonly #queue: Queued[] = [];
  #worker: Worker | undefined;
  #ready = false;
  #current: { job: Queued; timer: NodeJS.Timeout; startedAt: number } | undefined;
  #startupTimer: NodeJS.Timeout | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #nextId = 1;
  #closed = false;
  #starts = 0;
  #conversions = 0;
  #textFallbacks = 0;

  constructor(private readonly options: RunnerOptions) {}

  hasRoom(coming = 0): boolean {
    return this.#queue.length + (this.#current === undefined ? 0 : 1) + coming < this.options.maxQueued + 1;
  }

  run(job: Job, first = false): Promise<JobOutcome> {
    if (this.#closed) return Promise.resolve({ kind: 'busy', detail: 'closed' });
    if (!first && !this.hasRoom()) return Promise.resolve({ kind: 'busy', detail: 'queue full' });
    return new Promise<JobOutcome>((settle) => {
      const queued: Queued = { ...job, id: this.#nextId++, settle };
      if (first) this.#queue.unshift(queued);
      else this.#queue.push(queued);
      this.#pump();
    });
  }

  stats(): RunnerStats {
    return {
      workerRunning: this.#worker !== undefined,
      workerStarts: this.#starts,
      conversions: this.#conversions,
      textFallbacks: this.#textFallbacks,
      queued: this.#queue.length,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const closed: JobOutcome = { kind: 'busy', detail: 'closed' };
    await this.#discard('closed', closed, closed);
  }

  /**
   * Ends the current worker; the current job (if any) settles with `outcome`, the queue with `queued` if given.
   * Resolves once the thread has stopped.
   */
  #discard(reason: StopReason, outcome: JobOutcome | undefined, queued?: JobOutcome): Promise<unknown> {
    const ending = this.#worker;
    this.#worker = undefined;
    this.#ready = false;
    clearTimeout(this.#startupTimer);
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    if (this.#current !== undefined) {
      clearTimeout(this.#current.timer);
      const { job } = this.#current;
      this.#current = undefined;
      if (outcome !== undefined) job.settle(outcome);
    }
    if (queued !== undefined) for (const job of this.#queue.splice(0)) job.settle(queued);
    if (ending === undefined) return Promise.resolve();
    ending.removeAllListeners();
    ending.on('error', () => undefined); // a late error of a terminated worker is of no interest
    this.options.onWorker?.({ kind: 'stopped', reason });
    return ending.terminate();
  }

  #start(): void {
    const started = new Worker(this.options.url, {
      resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
    });
    this.#worker = started;
    this.#starts++;
    this.options.onWorker?.({ kind: 'started' });
    this.#startupTimer = setTimeout(() => {
      if (this.#worker === started) void this.#discard('no start', undefined, { kind: 'busy', detail: 'no start' });
    }, STARTUP_TIMEOUT_MS);
    this.#startupTimer.unref();
    started.on('message', (message: WorkerMessage) => {
      if (this.#worker === started) this.#received(message);
    });
    started.on('error', (error: Error & { code?: string }) => {
      if (this.#worker !== started) return;
      this.#lost(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'heap limit reached' : error.message);
    });
    started.on('exit', (code) => {
      if (this.#worker === started) this.#lost(`worker exited (${code})`);
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
    const ms = performance.now() - startedAt;
    job.settle(
      message.type === 'done'
        ? { kind: 'done', document: message.document, context: message.context, unsafe: message.unsafe, ms }
        : { kind: 'failed', detail: message.error },
    );
    // After the settled job's continuation: a fallback it asks for (`first`) goes ahead of the queue.
    setImmediate(() => this.#pump());
  }

  /**
   * The worker failed or exited: the current job fails; before `ready` the worker itself is broken (its script
   * missing, say), so nothing queued can run now either.
   */
  #lost(detail: string): void {
    const queued: JobOutcome | undefined = this.#ready
      ? undefined
      : { kind: 'busy', detail: `worker failed: ${detail}` };
    void this.#discard(this.#ready ? 'lost' : 'no start', { kind: 'failed', detail }, queued);
    this.#pump();
  }

  /** Starts the next job if the worker is free; keeps a working worker referenced and ends an idle one later. */
  #pump(): void {
    this.#dispatch();
    const busy = this.#current !== undefined || this.#queue.length > 0;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    if (busy) this.#worker?.ref();
    else if (this.#worker !== undefined) {
      this.#worker.unref(); // an idle converter never keeps the process alive
      this.#idleTimer = setTimeout(() => void this.#discard('idle', undefined), this.options.idleMs);
      this.#idleTimer.unref();
    }
  }

  #dispatch(): void {
    if (this.#closed || this.#current !== undefined || this.#queue.length === 0) return;
    if (this.#worker === undefined) this.#start();
    if (!this.#ready || this.#worker === undefined) return;
    const job = this.#queue.shift() as Queued;
    const bound = job.mode === 'markdown' ? this.options.timeoutMs : this.options.textTimeoutMs;
    const timer = setTimeout(() => {
      void this.#discard('timeout', { kind: 'timeout', detail: `over ${bound} ms` });
      this.#pump();
    }, bound);
    this.#current = { job, timer, startedAt: performance.now() };
    if (job.mode === 'markdown') this.#conversions++;
    else this.#textFallbacks++;
    const request: ConvertRequest = { id: job.id, mode: job.mode, html: job.html, context: job.context };
    this.#worker.postMessage(request);
  }
}
