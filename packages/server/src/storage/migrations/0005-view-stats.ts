import type { Kysely, Migration } from 'kysely';

/**
 * Read receipts (docs/api.md, "Read receipts"): per-drop and per-version view statistics beside drops.view_count.
 * A viewer is a keyed hash that changes every UTC day (domain/viewer-id.ts); no address or user agent is stored.
 * The drop's rows go with the drop, a version's rows with the version (cascading foreign keys).
 */
export const viewStats: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('drop_views')
      .addColumn('slug', 'text', (c) => c.primaryKey().references('drops.slug').onDelete('cascade'))
      .addColumn('first_viewed_at', 'bigint', (c) => c.notNull())
      .addColumn('last_viewed_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('drop_viewers')
      .addColumn('slug', 'text', (c) => c.notNull().references('drops.slug').onDelete('cascade'))
      .addColumn('viewer', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('drop_viewers_pk', ['slug', 'viewer'])
      .execute();

    await db.schema
      .createTable('version_views')
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('views', 'bigint', (c) => c.notNull())
      .addColumn('first_viewed_at', 'bigint', (c) => c.notNull())
      .addColumn('last_viewed_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('version_views_pk', ['slug', 'version'])
      .addForeignKeyConstraint('version_views_version_fk', ['slug', 'version'], 'versions', ['slug', 'version'], (fk) =>
        fk.onDelete('cascade'),
      )
      .execute();

    await db.schema
      .createTable('version_viewers')
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('viewer', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('version_viewers_pk', ['slug', 'version', 'viewer'])
      .addForeignKeyConstraint(
        'version_viewers_version_fk',
        ['slug', 'version'],
        'versions',
        ['slug', 'version'],
        (fk) => fk.onDelete('cascade'),
      )
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    for (const table of ['version_viewers', 'version_views', 'drop_viewers', 'drop_views']) {
      await db.schema.dropTable(table).execute();
    }
  },
};
