import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Previews (docs/api.md, "Previews and embeds"; docs/decisions/0038-previews-and-embeds.md): one row per version
 * that has a screenshot, pointing at a stored body (the PNG's bytes, counted in `bodies.refs` like a version's HTML
 * and files, migration 0010), so identical images are stored once. The row goes with its version: the store deletes
 * it first to release its body; the foreign key keeps a stray delete from leaving rows behind. Title cards are not
 * stored (they are drawn from what they show). Nothing to convert: no version has a screenshot yet.
 */
export const versionPreviews: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('version_previews')
      .ifNotExists()
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('body_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('version_previews_pk', ['slug', 'version'])
      .addForeignKeyConstraint('version_previews_version', ['slug', 'version'], 'versions', ['slug', 'version'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('version_previews_body_hash')
      .ifNotExists()
      .on('version_previews')
      .column('body_hash')
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    // The previews' uses of their bodies go with them; a body nothing else uses goes too.
    await sql`UPDATE bodies SET refs = refs - (SELECT COUNT(*) FROM version_previews WHERE version_previews.body_hash = bodies.hash)
      WHERE hash IN (SELECT body_hash FROM version_previews)`.execute(db);
    await sql`DELETE FROM bodies WHERE refs <= 0`.execute(db);
    await db.schema.dropTable('version_previews').execute();
  },
};
