/** The invalidation bus over PostgreSQL LISTEN/NOTIFY, for several instances on PostgreSQL without Redis. */
import pg from 'pg';
import type { InvalidationBus } from './bus.js';

const CHANNEL = 'htmldrop_invalidate';

export function createPostgresBus(url: string): InvalidationBus {
  const publisher = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 10_000 });
  publisher.on('error', () => undefined);
  let listener: pg.Client | undefined;
  let closed = false;

  return {
    async publish(slug) {
      await publisher.query('SELECT pg_notify($1, $2)', [CHANNEL, slug]);
    },
    async subscribe(onChange, reset) {
      const connect = async (): Promise<void> => {
        const client = new pg.Client({ connectionString: url });
        client.on('notification', (message) => {
          if (message.channel === CHANNEL && message.payload !== undefined) onChange(message.payload);
        });
        client.on('error', () => {
          // The connection is gone: notifications may be lost. Forget the cache and listen again.
          client.end().catch(() => undefined);
          if (closed) return;
          reset();
          setTimeout(() => connect().catch(() => undefined), 1000).unref();
        });
        await client.connect();
        await client.query(`LISTEN ${CHANNEL}`);
        listener = client;
      };
      await connect();
    },
    async close() {
      closed = true;
      await listener?.end().catch(() => undefined);
      await publisher.end();
    },
  };
}
