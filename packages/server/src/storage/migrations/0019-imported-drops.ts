import type { Kysely, Migration } from 'kysely';

/**
 * Drops made by an import (docs/api.md, "Export and import"): the archive's id of each drop (`<exporting account
 * id>/<slug in the archive>`) per importing account, so that importing the same archive again creates nothing. The
 * row goes with its drop: once the drop is deleted, the same archive brings it back.
 */
export const importedDrops: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('imported_drops')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('slug', 'text', (c) => c.notNull().references('drops.slug').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('imported_drops_pk', ['account_id', 'source'])
      .execute();
    await db.schema.createIndex('imported_drops_slug').on('imported_drops').column('slug').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('imported_drops').execute();
  },
};
