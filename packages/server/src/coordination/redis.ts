/**
 * Redis for many instances (HTMLDROP_REDIS_URL): exact shared rate-limit counters (one Lua script, so a hit on
 * several windows is all-or-nothing) and the invalidation bus over pub/sub.
 *
 * Invalidations are acknowledged: PUBLISH says how many instances received the message, each instance answers
 * on an ack channel once its cache has dropped the slug, and publish() resolves when all have answered (or after
 * a short timeout). A write is acknowledged to its client only then, so no instance serves the old document to a
 * client that has seen the write's answer.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { RateCounter } from '../domain/rate-counter.js';
import type { RateWindow } from '../domain/store.js';
import type { InvalidationBus } from './bus.js';

/** KEYS: window keys. ARGV: limit and expiry (Unix ms) per key. Returns 0, or the 1-based index of a full window. */
const HIT_SCRIPT = `
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  if count >= tonumber(ARGV[2 * i - 1]) then return i end
end
for i, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then redis.call('PEXPIREAT', key, ARGV[2 * i]) end
end
return 0`;

const RELEASE_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 then redis.call('DECR', KEYS[1]) end
return 0`;

/** How long a write waits for other instances to confirm an invalidation before it is acknowledged anyway. */
const ACK_TIMEOUT_MS = 250;

interface Waiting {
  acks: number;
  expected: number | undefined;
  done: () => void;
}

export interface RedisCoordination {
  readonly counter: RateCounter;
  readonly bus: InvalidationBus;
  close(): Promise<void>;
}

/** Exact shared rate-limit counters: each hit is one Lua script, so a hit on several windows is all-or-nothing. */
function createRedisCounter(client: Redis, prefix: string): RateCounter {
  return {
    async hitRateWindows(windows: readonly RateWindow[]) {
      const args = windows.flatMap((w) => [String(w.limit), String(w.endsAt + 1000)]);
      const result = Number(
        await client.eval(HIT_SCRIPT, windows.length, ...windows.map((w) => prefix + w.key), ...args),
      );
      return { exceeded: result === 0 ? undefined : result - 1 };
    },
    async releaseRateWindow(key) {
      await client.eval(RELEASE_SCRIPT, 1, prefix + key);
    },
  };
}

/** The acknowledged invalidation bus: publishes and acks on `client`, receives both channels on `subscriber`. */
function createRedisBus(client: Redis, subscriber: Redis, prefix: string): InvalidationBus {
  const channel = `${prefix}invalidate`;
  const ackChannel = `${prefix}invalidate-ack`;
  const waiting = new Map<string, Waiting>();
  let subscribed = false;

  return {
    async publish(slug) {
      const nonce = randomBytes(8).toString('hex');
      let finish: () => void = () => undefined;
      const acked = new Promise<void>((resolve) => {
        finish = resolve;
      });
      // Acks can arrive (on the subscriber connection) before PUBLISH's own answer says how many to expect.
      const wait: Waiting = { acks: 0, expected: undefined, done: finish };
      waiting.set(nonce, wait);
      const timer = setTimeout(finish, ACK_TIMEOUT_MS);
      try {
        wait.expected = await client.publish(channel, `${nonce} ${slug}`);
        if (wait.acks >= wait.expected) finish();
        await acked;
      } finally {
        clearTimeout(timer);
        waiting.delete(nonce);
      }
    },
    async subscribe(receiver) {
      subscriber.on('message', (from: string, message: string) => {
        const space = message.indexOf(' ');
        if (from === channel && space > 0) {
          receiver.onChange(message.slice(space + 1));
          client.publish(ackChannel, message.slice(0, space)).catch(() => undefined);
        } else if (from === ackChannel) {
          const wait = waiting.get(message);
          if (wait === undefined) return;
          wait.acks += 1;
          if (wait.expected !== undefined && wait.acks >= wait.expected) wait.done();
        }
      });
      // ioredis reconnects by itself (with growing delays) and subscribes again before 'ready'. Announcements sent
      // while it was away are lost: start from an empty cache when it is back.
      let lastError: unknown;
      subscriber.on('error', (error: unknown) => {
        lastError = error;
      });
      subscriber.on('close', () => {
        if (!subscribed) return;
        subscribed = false;
        receiver.onStatus?.(false, lastError ?? new Error('the Redis subscriber connection closed'));
      });
      subscriber.on('reconnecting', () => {
        if (lastError !== undefined) receiver.onStatus?.(false, lastError);
      });
      subscriber.on('ready', () => {
        if (subscribed) return;
        subscribed = true;
        lastError = undefined;
        receiver.reset();
        receiver.onStatus?.(true);
      });
      await subscriber.connect();
      await subscriber.subscribe(channel, ackChannel);
      subscribed = true;
    },
    get subscribed() {
      return subscribed && client.status === 'ready';
    },
    async close() {
      subscriber.disconnect();
    },
  };
}

export function createRedisCoordination(url: string, prefix: string): RedisCoordination {
  const client = new Redis(url, { maxRetriesPerRequest: 2 });
  // Connected explicitly before SUBSCRIBE: a SUBSCRIBE queued before the connection is ready puts it in
  // subscriber mode ahead of ioredis's ready check (INFO), which then fails, and the subscription is lost.
  const subscriber = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: true });
  // Commands fail with their own errors (answered 500 and logged); the connection is retried by ioredis and its
  // state is visible in readiness (`subscribed`). An 'error' listener keeps a lost connection from crashing us.
  client.on('error', () => undefined);
  subscriber.on('error', () => undefined);

  return {
    counter: createRedisCounter(client, prefix),
    bus: createRedisBus(client, subscriber, prefix),
    async close() {
      subscriber.disconnect();
      await client.quit().catch(() => client.disconnect());
    },
  };
}
