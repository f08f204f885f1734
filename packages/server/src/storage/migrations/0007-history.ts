import type { Kysely, Migration } from 'kysely';

/**
 * History and safe writers (docs/api.md, "History and safe writers"): a drop's expiry, and the answers kept for
 * idempotency keys. Both are read by time, so both are indexed by it for the purge.
 */
export const history: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('drops').addColumn('expires_at', 'bigint').execute();
    await db.schema.createIndex('drops_expires_at').on('drops').column('expires_at').execute();
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      /** What the request was: its method, path and body digest (docs/api.md, "Idempotency keys"). */
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      /** Null while the first request runs; its status once it answered with success. */
      .addColumn('status', 'integer')
      .addColumn('body', 'text')
      .addColumn('etag', 'text')
      /** While running: after this instant the claim is taken to be abandoned (its instance stopped). */
      .addColumn('locked_until', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
      .execute();
    await db.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('idempotency_keys').execute();
    await db.schema.dropIndex('drops_expires_at').execute();
    await db.schema.alterTable('drops').dropColumn('expires_at').execute();
  },
};
