import type { Kysely, Migration } from 'kysely';

/** Accounts, tokens, drops, versions and rate windows. */
export const initial: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('login', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('drop_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addUniqueConstraint('accounts_identity_unique', ['provider', 'subject'])
      .execute();
    await db.schema.createIndex('accounts_login').on('accounts').column('login').execute();

    await db.schema
      .createTable('tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('hash', 'text', (c) => c.notNull().unique())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('label', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema.createIndex('tokens_account').on('tokens').column('account_id').execute();

    // A rowid table on SQLite: large rows in WITHOUT ROWID tables are read during key comparisons (docs/decisions/0002-sqlite-default-postgresql-option-via-kysely.md).
    await db.schema
      .createTable('drops')
      .addColumn('slug', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('passcode_hash', 'text')
      .addColumn('passcode_generation', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('latest_version', 'integer', (c) => c.notNull())
      .addColumn('last_issued_version', 'integer', (c) => c.notNull())
      .addColumn('version_count', 'integer', (c) => c.notNull())
      .addColumn('view_count', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    for (const column of ['created_at', 'updated_at', 'view_count']) {
      await db.schema.createIndex(`drops_account_${column}`).on('drops').columns(['account_id', column]).execute();
    }

    await db.schema
      .createTable('versions')
      .addColumn('slug', 'text', (c) => c.notNull().references('drops.slug').onDelete('cascade'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('html', 'text', (c) => c.notNull())
      .addColumn('size_bytes', 'integer', (c) => c.notNull())
      .addColumn('context', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('versions_pk', ['slug', 'version'])
      .execute();

    await db.schema
      .createTable('rate_windows')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addColumn('ends_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('rate_windows_ends_at').on('rate_windows').column('ends_at').execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    for (const table of ['rate_windows', 'versions', 'drops', 'tokens', 'accounts']) {
      await db.schema.dropTable(table).execute();
    }
  },
};
