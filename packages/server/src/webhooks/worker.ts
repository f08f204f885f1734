/**
 * The delivery worker (docs/decisions/0036-live-pages-and-webhooks.md): on every instance, a few loops that claim a
 * due delivery, attempt it and record it, until none is due; then they wait for the next poll (every second) or for
 * an event put in the outbox here. The claim's lease makes each attempt one instance's, whichever polls first.
 * Started by the composition root's timers; `stop()` stops claiming and waits for the attempts under way (each ends
 * within its 10 s timeout).
 */
import { type AttemptDeps, attemptOneDelivery } from '../domain/webhooks.js';

export interface WorkerLog {
  error(details: object, message: string): void;
}

export interface WebhookWorker {
  start(log: WorkerLog): void;
  /** Something was put in the outbox: look now rather than at the next poll. */
  wake(): void;
  stop(): Promise<void>;
}

export interface WorkerOptions {
  /** Attempts under way at once on this instance. */
  readonly concurrency?: number;
  readonly pollMs?: number;
}

export function createWebhookWorker(deps: AttemptDeps, options: WorkerOptions = {}): WebhookWorker {
  const concurrency = options.concurrency ?? 4;
  const pollMs = options.pollMs ?? 1000;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let log: WorkerLog = { error: () => undefined };
  const loops = new Set<Promise<void>>();

  /** One loop: attempts deliveries until none is due (or the worker stops). */
  const drain = async () => {
    while (running) {
      let attempted: boolean;
      try {
        attempted = await attemptOneDelivery(deps);
      } catch (error) {
        log.error({ err: error }, 'webhook delivery failed');
        return;
      }
      if (!attempted) return;
      // There was work: more loops may share it (an idle poll costs one claim query, not `concurrency`).
      spread(concurrency);
    }
  };
  const spread = (upTo: number) => {
    while (running && loops.size < upTo) {
      const loop = drain().finally(() => loops.delete(loop));
      loops.add(loop);
    }
  };
  const kick = () => spread(1);
  return {
    start(given) {
      if (running) return;
      log = given;
      running = true;
      timer = setInterval(kick, pollMs);
      timer.unref();
      kick();
    },
    wake() {
      if (running) kick();
    },
    async stop() {
      running = false;
      clearInterval(timer);
      await Promise.all([...loops]);
    },
  };
}
