import type { Kysely, Migration } from 'kysely';

/**
 * Comments on drop versions and the drop's `comments` setting (docs/api.md, "Comments"). Comments go with their drop
 * and their version: deleting either deletes them.
 */
export const comments: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('drops')
      .addColumn('comments', 'text', (c) => c.notNull().defaultTo('signed_in'))
      .execute();
    await db.schema
      .createTable('comments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('quote', 'text')
      .addColumn('author_name', 'text', (c) => c.notNull())
      .addColumn('author_kind', 'text', (c) => c.notNull())
      .addColumn('author_account_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('resolved_at', 'bigint')
      .addColumn('resolved_in_version', 'integer')
      .addForeignKeyConstraint('comments_version', ['slug', 'version'], 'versions', ['slug', 'version'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
    await db.schema.createIndex('comments_slug_created').on('comments').columns(['slug', 'created_at']).execute();
    await db.schema
      .createIndex('comments_account_created')
      .on('comments')
      .columns(['account_id', 'created_at'])
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('comments').execute();
    await db.schema.alterTable('drops').dropColumn('comments').execute();
  },
};
