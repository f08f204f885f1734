import { type Kysely, type Migration, sql } from 'kysely';
import { columnsOf } from './columns.js';

/**
 * Each drop on its own origin (docs/api.md, "Each drop on its own origin"): the drop's content label (the `{id}` of its
 * host name, unique) and its network policy. Existing drops get a fresh random label here, so every drop has one from
 * this migration on; labels are never derived from slugs.
 *
 * The backfill is one statement, so a large table is labelled in one pass (PostgreSQL holds the table's lock for
 * the migration's transaction). SQLite runs migrations outside a transaction: each step checks what is already
 * there, so a migration cut short by a crash completes on the next start.
 */
export const contentOrigins: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    // PostgreSQL runs this in one transaction: all of it or nothing. (Its introspection would also see other schemas.)
    const transactional = db.getExecutor().adapter.supportsTransactionalDdl;
    const columns = transactional ? new Set<string>() : await columnsOf(db, 'drops');
    if (!columns.has('content_label')) await db.schema.alterTable('drops').addColumn('content_label', 'text').execute();
    if (!columns.has('network')) {
      /** `open`, `none`, or a JSON array of origins (domain/network.ts). */
      await db.schema
        .alterTable('drops')
        .addColumn('network', 'text', (c) => c.notNull().defaultTo('open'))
        .execute();
    }
    // 20 lowercase hex characters (80 random bits) fit the label's shape, [0-9a-z]{20}; new drops get base36 ones.
    const random = transactional ? sql`substr(md5(gen_random_uuid()::text), 1, 20)` : sql`lower(hex(randomblob(10)))`;
    await sql`update drops set content_label = ${random} where content_label is null`.execute(db);
    await db.schema
      .createIndex('drops_content_label')
      .ifNotExists()
      .on('drops')
      .column('content_label')
      .unique()
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('drops_content_label').execute();
    await db.schema.alterTable('drops').dropColumn('network').execute();
    await db.schema.alterTable('drops').dropColumn('content_label').execute();
  },
};
