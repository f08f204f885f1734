/**
 * The invalidation bus over PostgreSQL LISTEN/NOTIFY, for several instances on PostgreSQL without Redis. The
 * listening connection is watched: when it ends (a restart, a failover, an idle-connection killer), the bus reports
 * it and reconnects with backoff until it listens again, then asks the receiver to reset (notifications sent
 * meanwhile are lost).
 *
 * A channel belongs to a whole database, not to a schema: deployments that share one database in schemas of their own
 * (docs/operating.md, "Several instances") would hear each other's announcements. The channel is therefore named after the
 * schema the connection writes to (`current_schema()`): the `public` schema keeps the name every earlier release
 * used, so that instances of two releases side by side during an upgrade still hear each other; any other schema gets
 * `htmldrop_invalidate_` and 16 hex digits of the SHA-256 of its name (an identifier of letters and digits, whatever
 * the schema is called).
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { type BusReceiver, backoffDelay, type InvalidationBus } from './bus.js';

const PUBLIC_CHANNEL = 'htmldrop_invalidate';

/** The channel of the schema a connection writes to (null: no schema on its search path, as `public`). */
export function channelFor(schema: string | null): string {
  if (schema === null || schema === 'public') return PUBLIC_CHANNEL;
  return `${PUBLIC_CHANNEL}_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`;
}

async function channelOf(client: pg.Client | pg.Pool): Promise<string> {
  const { rows } = await client.query<{ schema: string | null }>('SELECT current_schema() AS schema');
  return channelFor(rows[0]?.schema ?? null);
}

export function createPostgresBus(url: string): InvalidationBus {
  const publisher = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 10_000 });
  // An idle pooled connection that dies is replaced on the next query; the query's own error is what matters.
  publisher.on('error', () => undefined);
  let listener: pg.Client | undefined;
  let subscribed = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  /** The schema's channel, asked for once by whichever connection comes first. */
  let channel: Promise<string> | undefined;
  const channelVia = (client: pg.Client | pg.Pool) => {
    channel ??= channelOf(client).catch((error: unknown) => {
      channel = undefined;
      throw error;
    });
    return channel;
  };

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
    let listening = '';
    client.on('notification', (message) => {
      if (message.channel === listening && message.payload !== undefined) receiver.onChange(message.payload);
    });
    client.on('error', onLost);
    client.on('end', () => onLost());
    try {
      await client.connect();
      listening = await channelVia(client);
      // Letters, digits and underscores only (channelFor): safe as an unquoted identifier.
      await client.query(`LISTEN ${listening}`);
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
      await publisher.query('SELECT pg_notify($1, $2)', [await channelVia(publisher), slug]);
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
