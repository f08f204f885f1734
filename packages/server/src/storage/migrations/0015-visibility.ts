import type { Kysely, Migration } from 'kysely';
import { columnsOf } from './columns.js';

/**
 * Who can see a drop (docs/api.md, "Who can see a drop"; docs/decisions/0035-who-can-see-a-drop.md): each drop's
 * `visibility` and `allow` list, its recipient links (the secret kept only as its SHA-256, with the views each link
 * opened), and the access log (viewed and refused, with the reason and who, no address or user agent; purged after
 * 90 days). Links and log entries go with their drop.
 *
 * SQLite runs migrations outside a transaction: each step checks what is already there, so a migration cut short by
 * a crash completes on the next start (as 0008 does).
 */
export const visibility: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const transactional = db.getExecutor().adapter.supportsTransactionalDdl;
    const columns = transactional ? new Set<string>() : await columnsOf(db, 'drops');
    if (!columns.has('visibility')) {
      /** `public`, `signed_in` or `people`. */
      await db.schema
        .alterTable('drops')
        .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('public'))
        .execute();
    }
    if (!columns.has('allow')) {
      /** A JSON array of usernames, email addresses and `@domain` entries. */
      await db.schema
        .alterTable('drops')
        .addColumn('allow', 'text', (c) => c.notNull().defaultTo('[]'))
        .execute();
    }
    await db.schema
      .createTable('recipient_links')
      .ifNotExists()
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('slug', 'text', (c) => c.notNull().references('drops.slug').onDelete('cascade'))
      .addColumn('label', 'text', (c) => c.notNull())
      /** SHA-256 of the secret, lowercase hex: the secret itself is shown once and never stored. */
      .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .addColumn('views', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('last_viewed_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('recipient_links_slug')
      .ifNotExists()
      .on('recipient_links')
      .columns(['slug', 'created_at'])
      .execute();
    await db.schema
      .createTable('access_log')
      .ifNotExists()
      /** Random, so that rows copy between databases as they are (migrate-data) and order ties stay stable. */
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('slug', 'text', (c) => c.notNull().references('drops.slug').onDelete('cascade'))
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('who_kind', 'text', (c) => c.notNull())
      .addColumn('who_name', 'text')
      .addColumn('version', 'integer')
      .execute();
    await db.schema.createIndex('access_log_slug_at').ifNotExists().on('access_log').columns(['slug', 'at']).execute();
    await db.schema.createIndex('access_log_at').ifNotExists().on('access_log').column('at').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('access_log').execute();
    await db.schema.dropTable('recipient_links').execute();
    await db.schema.alterTable('drops').dropColumn('allow').execute();
    await db.schema.alterTable('drops').dropColumn('visibility').execute();
  },
};
