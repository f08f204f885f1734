import { type Kysely, type Migration, sql, type Transaction } from 'kysely';
import { bodyHash, decodeBodyBytes, encodeBody } from '../bodies.js';
import { columnsOf } from './columns.js';

/**
 * The cost of keeping history (docs/decisions/0027-compressed-deduplicated-bodies.md): a version's HTML moves from
 * `versions.html` into `bodies`, stored once per distinct content (addressed by its SHA-256) and compressed, counted by
 * the versions that use it.
 *
 * In place, in batches: each batch hashes and compresses some versions, keeps their bodies, points the versions at
 * them and empties their `html`, then reads every kept body back and checks that it decompresses to the hash it is
 * stored under, all in one transaction. On SQLite (migrations run outside a transaction there) each batch commits on
 * its own and every step checks what is already done, so a migration cut short by a crash resumes where it stopped.
 * On PostgreSQL the whole migration is one transaction: all of it or nothing. End state: every version has a
 * `body_hash`, every body's `refs` is the number of versions using it, and `versions.html` is gone.
 */
export const versionBodies: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const transactional = db.getExecutor().adapter.supportsTransactionalDdl;
    const columns = transactional ? new Set(['html']) : await columnsOf(db, 'versions');
    await db.schema
      .createTable('bodies')
      .ifNotExists()
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('codec', 'text', (c) => c.notNull())
      // A rowid table on SQLite (docs/decisions/0002-sqlite-default-postgresql-option-via-kysely.md).
      .addColumn('data', transactional ? sql`bytea` : sql`blob`, (c) => c.notNull())
      .addColumn('size_bytes', 'integer', (c) => c.notNull())
      .addColumn('refs', 'integer', (c) => c.notNull())
      .execute();
    if (!columns.has('body_hash')) await db.schema.alterTable('versions').addColumn('body_hash', 'text').execute();
    await db.schema.createIndex('versions_body_hash').ifNotExists().on('versions').column('body_hash').execute();
    if (columns.has('html')) {
      const inBatch = transactional
        ? (work: (trx: Kysely<Loose>) => Promise<number>) => work(db as Kysely<Loose>)
        : (work: (trx: Kysely<Loose>) => Promise<number>) =>
            (db as Kysely<Loose>).transaction().execute((trx: Transaction<Loose>) => work(trx));
      while ((await inBatch(convertBatch)) > 0) {
        // next batch
      }
      await db.schema.alterTable('versions').dropColumn('html').execute();
    }
  },
  async down(db: Kysely<unknown>): Promise<void> {
    // Only before any body is shared or compressed data matters: the HTML goes back into versions, uncompressed.
    await db.schema
      .alterTable('versions')
      .addColumn('html', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    const loose = db as Kysely<Loose>;
    const bodies = await loose.selectFrom('bodies').select(['hash', 'codec', 'data']).execute();
    for (const body of bodies) {
      const html = (await decodeBodyBytes(String(body.codec), body.data as Uint8Array)).toString('utf8');
      await loose.updateTable('versions').set({ html }).where('body_hash', '=', body.hash).execute();
    }
    await db.schema.dropIndex('versions_body_hash').execute();
    await db.schema.alterTable('versions').dropColumn('body_hash').execute();
    await db.schema.dropTable('bodies').execute();
  },
};

// biome-ignore lint/suspicious/noExplicitAny: the migration sees tables as they were then, not as schema.ts says now
type Loose = Record<string, any>;

/** Versions per batch: each holds up to 2 MiB of HTML (docs/api.md 8). */
const BATCH = 20;

/** Converts up to BATCH versions still holding their HTML; returns how many it converted. */
async function convertBatch(trx: Kysely<Loose>): Promise<number> {
  const rows = await trx
    .selectFrom('versions')
    .select(['slug', 'version', 'html'])
    .where('body_hash', 'is', null)
    .orderBy('slug')
    .orderBy('version')
    .limit(BATCH)
    .execute();
  const kept = new Map<string, Buffer>();
  for (const row of rows) {
    const body = await encodeBody(String(row.html));
    kept.set(body.hash, Buffer.from(String(row.html), 'utf8'));
    await trx
      .insertInto('bodies')
      .values({ hash: body.hash, codec: body.codec, data: body.data, size_bytes: body.sizeBytes, refs: 1 })
      .onConflict((oc) => oc.column('hash').doUpdateSet({ refs: sql`bodies.refs + 1` }))
      .execute();
    await trx
      .updateTable('versions')
      .set({ body_hash: body.hash, html: '' })
      .where('slug', '=', row.slug)
      .where('version', '=', row.version)
      .execute();
  }
  // Verified by content hash: every body this batch points at decompresses to exactly the bytes it was given.
  for (const [hash, bytes] of kept) {
    const stored = await trx.selectFrom('bodies').select(['codec', 'data']).where('hash', '=', hash).executeTakeFirst();
    const decoded = stored === undefined ? undefined : await decodeBodyBytes(String(stored.codec), stored.data);
    if (decoded === undefined || bodyHash(decoded) !== hash || !decoded.equals(bytes)) {
      throw new Error(`migration 0010: the stored body ${hash} does not hold the version's HTML`);
    }
  }
  return rows.length;
}
