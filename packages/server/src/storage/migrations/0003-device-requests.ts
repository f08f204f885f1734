import type { Kysely, Migration } from 'kysely';

/** Device-code sign-in requests (spec 3.1, 5). Only hashes of poll tokens are stored; API tokens are minted at claim. */
export const deviceRequests: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('device_requests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('poll_hash', 'text', (c) => c.notNull().unique())
      .addColumn('user_code', 'text', (c) => c.notNull().unique())
      .addColumn('label', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.references('accounts.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .execute();
    await db.schema.createIndex('device_requests_expires_at').on('device_requests').column('expires_at').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('device_requests').execute();
  },
};
