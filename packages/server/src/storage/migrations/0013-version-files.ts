import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Many files in one drop (docs/api.md, "Many files in one drop"; docs/decisions/0033-many-files-in-one-drop.md): a
 * version is its HTML plus, optionally, files loaded by relative URL. Each file row points at a stored body, counted
 * in `bodies.refs` like the version's HTML (migration 0010), so a file is stored once however many versions or drops
 * carry it. Files go with their version: the store deletes them first to release their bodies; the foreign key keeps
 * a stray delete from leaving rows behind. Nothing to convert: existing versions have no files.
 */
export const versionFiles: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('version_files')
      .ifNotExists()
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('body_hash', 'text', (c) => c.notNull())
      .addColumn('size_bytes', 'bigint', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('version_files_pk', ['slug', 'version', 'path'])
      .addForeignKeyConstraint('version_files_version', ['slug', 'version'], 'versions', ['slug', 'version'], (c) =>
        c.onDelete('cascade'),
      )
      .execute();
    await db.schema
      .createIndex('version_files_body_hash')
      .ifNotExists()
      .on('version_files')
      .column('body_hash')
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    // The files' uses of their bodies go with them; a body nothing else uses goes too.
    await sql`UPDATE bodies SET refs = refs - (SELECT COUNT(*) FROM version_files WHERE version_files.body_hash = bodies.hash)
      WHERE hash IN (SELECT body_hash FROM version_files)`.execute(db);
    await sql`DELETE FROM bodies WHERE refs <= 0`.execute(db);
    await db.schema.dropTable('version_files').execute();
  },
};
