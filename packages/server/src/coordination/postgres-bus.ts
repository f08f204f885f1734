/**
 * The invalidation bus over PostgreSQL LISTEN/NOTIFY, for several instances on PostgreSQL without Redis. The
 * listening connection is watched: when it ends (a restart, a failover, an idle-connection killer), the bus reports
 * it and reconnects with backoff until it listens again, then asks the receiver to reset (notifications sent
 * meanwhile are lost).
 */
import pg from 'pg';
import { type BusReceiver, backoffDelay, type InvalidationBus } from './bus.js';

const CHANNEL = 'htmldrop_invalidate';

export function createPostgresBus(url: string): InvalidationBus {
  const publisher = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 10_000 });
  // An idle pooled connection that dies is replaced on the next query; the query's own error is what matters.
  publisher.on('error', () => undefined);
  let listener: pg.Client | undefined;
  let subscribed = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  /** Opens the listening connection; rejects when it cannot. */
  async function listen(receiver: BusReceiver): Promise<void> {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost || closed) return;
      lost = true;
      subscribed = false;
      client.end().catch(() => undefined);
      receiver.onStatus?.(false, error ?? new Error('the LISTEN connection ended'));
      reconnect(receiver, 0);
    };
    client.on('notification', (message) => {
      if (message.channel === CHANNEL && message.payload !== undefined) receiver.onChange(message.payload);
    });
    client.on('error', onLost);
    client.on('end', () => onLost());
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      lost = true;
      client.end().catch(() => undefined);
      throw error;
    }
    listener = client;
    subscribed = true;
  }

  function reconnect(receiver: BusReceiver, attempt: number): void {
    if (closed) return;
    retry = setTimeout(() => {
      listen(receiver).then(
        () => {
          receiver.reset();
          receiver.onStatus?.(true);
        },
        (error: unknown) => {
          receiver.onStatus?.(false, error);
          reconnect(receiver, attempt + 1);
        },
      );
    }, backoffDelay(attempt));
    retry.unref();
  }

  return {
    async publish(slug) {
      await publisher.query('SELECT pg_notify($1, $2)', [CHANNEL, slug]);
    },
    async subscribe(receiver) {
      await listen(receiver);
    },
    get subscribed() {
      return subscribed;
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      await listener?.end().catch(() => undefined);
      await publisher.end();
    },
  };
}
