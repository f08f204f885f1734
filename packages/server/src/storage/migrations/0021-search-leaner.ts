import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import { type Kysely, type Migration, sql } from 'kysely';
import { indexedContent, indexWords } from '../../domain/search.js';
import { packText, unpackText } from '../bodies.js';
import { indexUnindexedDrops, tagTerm } from '../kysely/search.js';
import type { Database } from '../schema.js';

/**
 * SQLite's search index made cheaper to write and to filter by tags (docs/decisions/0041-search-index-leaner-writes.md):
 *
 * - The FTS5 table keeps a prefix index of 2 characters only (0017 to 0020 had 2 and 3). Each indexed word was written
 *   three times (itself and its two prefixes); now twice. A last word of 3 characters is found as one of 4 or more
 *   is, by reading the words it begins: measured under a millisecond over 8,000 drops.
 * - A fifth column, `tags`, holds each of the drop's tags as one term (kysely/search.ts `tagTerm`): a search filtered
 *   by tags is decided by the index, without reading each match's drop row.
 * - Each entry keeps its drop's `created_at` and `updated_at` (both databases; the latter kept by a trigger on
 *   `drops`, as 0020 keeps the expiry): a search sorted by date reads no drop row.
 * - `search_packed` keeps the text for snippets only (bodies.ts `packText`), made in the encoding worker off the event
 *   loop. 0020 packed the text's words and the context's words with it, as JSON, in the write's transaction; the one
 *   write that needs them again (a new title or description) now makes them from the text and the latest version's
 *   context.
 *
 * Entries made under 0020 are converted in one transaction, their words read from the old packed rows (no document
 * is read again); cut short, nothing changed (a half-converted table could not tell its two formats apart). Then
 * every drop without an entry is indexed from its stored body: the backfill of 0017, moved from 0020 to here because
 * it writes entries as today's code does (it runs after the last migration that changed them; 0020 no longer fills
 * anything). PostgreSQL's entries are unchanged: only the backfill runs there.
 */

/** 0020's FTS5 table. */
const PREFIXES_2_3 = sql`create virtual table search_index using fts5 (
  title, description, content, context, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3',
  content = '', contentless_delete = 1
)`;

/** This migration's: one prefix index, and the tags. */
const PREFIX_2 = sql`create virtual table search_index using fts5 (
  title, description, content, context, tags, tokenize = 'unicode61 remove_diacritics 2', prefix = '2',
  content = '', contentless_delete = 1
)`;

/** An entry as both formats are written from: its drop's fields, and its packed row as stored. */
interface EntryRow {
  readonly id: number;
  readonly title: string;
  readonly description: string | null;
  /** The drop's tags, JSON. */
  readonly metadata: string;
  readonly context: string | null;
  readonly packed: Uint8Array;
}

/** An entry's words (title, description, text, context; and its tag terms, in this format) and its packed row. */
interface Entry {
  readonly words: readonly string[];
  readonly packed: Buffer;
}

/** 0020's packed row: the text, its words and the context's words, as brotli-compressed JSON. */
interface PackedAt0020 {
  readonly text: string;
  readonly words: string;
  readonly context: string;
}

const PACK_0020 = {
  params: { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
};

/** From 0020's format to this one's. */
function from0020(row: EntryRow): Entry {
  const old = JSON.parse(brotliDecompressSync(row.packed).toString('utf8')) as PackedAt0020;
  const tags = Object.entries(JSON.parse(row.metadata) as Record<string, string>).map(([k, v]) => tagTerm(k, v));
  return {
    words: [indexWords(row.title), indexWords(row.description), old.words, old.context, tags.join(' ')],
    packed: packText(old.text),
  };
}

/** Back to 0020's format (the down migration): the words made again from the text and the context. */
function to0020(row: EntryRow): Entry {
  const text = unpackText(row.packed);
  const packed: PackedAt0020 = { text, words: indexedContent(text).words, context: indexWords(row.context) };
  return {
    words: [indexWords(row.title), indexWords(row.description), packed.words, packed.context],
    packed: brotliCompressSync(JSON.stringify(packed), PACK_0020),
  };
}

/** The index's columns, in order (0020's table has the first four). */
const COLUMNS = ['title', 'description', 'content', 'context', 'tags'];

/** Entries read per statement. */
const BATCH = 200;

/** The FTS5 table made anew by `create`, each entry written into it and its packed row by `convert`, in one transaction. */
async function rebuild(db: Kysely<unknown>, create: typeof PREFIX_2, convert: (row: EntryRow) => Entry): Promise<void> {
  await sql`begin immediate`.execute(db);
  try {
    await sql`drop table if exists search_index`.execute(db);
    await create.execute(db);
    let after = 0;
    for (;;) {
      const { rows } = await sql<EntryRow>`select search_packed.id, drops.title, drops.description, drops.metadata,
          versions.context, search_packed.packed
        from search_packed
        join search_texts on search_texts.id = search_packed.id
        join drops on drops.slug = search_texts.slug
        left join versions on versions.slug = drops.slug and versions.version = drops.latest_version
        where search_packed.id > ${after} order by search_packed.id limit ${BATCH}`.execute(db);
      for (const row of rows) {
        const { words, packed } = convert(row);
        const columns = sql.join(['rowid', ...COLUMNS.slice(0, words.length)].map((name) => sql.ref(name)));
        await sql`insert into search_index (${columns}) values (${sql.join([row.id, ...words])})`.execute(db);
        await sql`update search_packed set packed = ${packed} where id = ${row.id}`.execute(db);
      }
      if (rows.length < BATCH) break;
      after = (rows[rows.length - 1] as EntryRow).id;
    }
    await sql`commit`.execute(db);
  } catch (error) {
    await sql`rollback`.execute(db);
    throw error;
  }
}

/** Each entry's drop's dates, copied; the time of the last change kept by a trigger, as 0020 keeps the expiry. */
async function addDates(db: Kysely<unknown>, postgres: boolean): Promise<void> {
  await db.schema.alterTable('search_texts').addColumn('created_at', 'bigint').execute();
  await db.schema.alterTable('search_texts').addColumn('updated_at', 'bigint').execute();
  await sql`update search_texts set
    created_at = (select drops.created_at from drops where drops.slug = search_texts.slug),
    updated_at = (select drops.updated_at from drops where drops.slug = search_texts.slug)`.execute(db);
  if (postgres) {
    await sql`create or replace function search_texts_keep_updated() returns trigger language plpgsql as $$
      begin
        update search_texts set updated_at = new.updated_at where slug = new.slug;
        return null;
      end
    $$`.execute(db);
    await sql`create trigger drops_updated_searched after update of updated_at on drops for each row
      when (old.updated_at is distinct from new.updated_at) execute function search_texts_keep_updated()`.execute(db);
  } else {
    await sql`create trigger if not exists drops_updated_searched after update of updated_at on drops
      when old.updated_at is not new.updated_at begin
        update search_texts set updated_at = new.updated_at where slug = new.slug;
      end`.execute(db);
  }
}

async function dropDates(db: Kysely<unknown>, postgres: boolean): Promise<void> {
  if (postgres) {
    await sql`drop trigger if exists drops_updated_searched on drops`.execute(db);
    await sql`drop function if exists search_texts_keep_updated()`.execute(db);
  } else {
    await sql`drop trigger if exists drops_updated_searched`.execute(db);
  }
  await db.schema.alterTable('search_texts').dropColumn('updated_at').execute();
  await db.schema.alterTable('search_texts').dropColumn('created_at').execute();
}

export const searchLeaner: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const postgres = db.getExecutor().adapter.supportsTransactionalDdl;
    if (!postgres) await rebuild(db, PREFIX_2, from0020);
    await addDates(db, postgres);
    await indexUnindexedDrops(db as Kysely<Database>, postgres ? 'postgres' : 'sqlite');
  },
  async down(db: Kysely<unknown>): Promise<void> {
    const postgres = db.getExecutor().adapter.supportsTransactionalDdl;
    await dropDates(db, postgres);
    if (!postgres) await rebuild(db, PREFIXES_2_3, to0020);
  },
};
