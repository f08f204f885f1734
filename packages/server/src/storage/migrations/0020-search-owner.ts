import { type Kysely, type Migration, sql } from 'kysely';

/**
 * A search decides whose and which live drops match without reading the drops table (docs/decisions/0040-search-
 * filters-in-the-index.md): each entry of the search index gains its drop's `account_id` and `expires_at`, copied
 * from the drop. The account never changes; the expiry is kept by a trigger on `drops` (one place for every path
 * that sets it: PATCH, PUT, import), so no writer has to remember it. Existing entries are filled from their drops.
 * On PostgreSQL each entry also gets an identity `id`, the order of "newest" that relevance is bounded by (SQLite's
 * entries have one already).
 *
 * On SQLite the FTS5 table is made anew as a contentless table (`content = ''`, deletes kept: `contentless_delete`):
 * FTS5 otherwise stores a second copy of every indexed column, the folded words of each text, beside the text itself,
 * which cost a 100 KB create about 60 KB more written and made the database four times the size (decision 0040). What
 * it cannot give back, the text for snippets and the words, goes to `search_packed`, compressed. Its entries are
 * dropped and written again below.
 *
 * Drops without an entry are indexed by migration 0021 (the backfill runs after the last migration that changed an
 * entry's format; it ran here until 0021 changed SQLite's).
 *
 * Over 10,000 drops that all hold a word, reading each match's drop row cost SQLite about 10 ms of the count and 20 of
 * the page: the match is now mapped to its owner through the narrow `search_texts` row (an integer-key lookup).
 */
export const searchOwner: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const postgres = db.getExecutor().adapter.supportsTransactionalDdl;
    if (!postgres) {
      // The FTS5 table made anew, contentless: it keeps its index and one packed column, not a second copy of the
      // words (kysely/search.ts). Its entries are written again by the backfill of 0021.
      await sql`drop table if exists search_index`.execute(db);
      await sql`create virtual table search_index using fts5 (
        title, description, content, context, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3',
        content = '', contentless_delete = 1
      )`.execute(db);
      await sql`delete from search_texts`.execute(db);
      // Beside it, what it cannot give back (its own unindexed column, contentless_unindexed, leaves a table behind
      // when the index is dropped, in SQLite 3.53).
      await sql`create table search_packed (
        id integer primary key references search_texts (id) on delete cascade,
        packed blob not null
      )`.execute(db);
    }
    await db.schema.alterTable('search_texts').addColumn('account_id', 'text').execute();
    await db.schema.alterTable('search_texts').addColumn('expires_at', 'bigint').execute();
    await sql`update search_texts set
      account_id = (select drops.account_id from drops where drops.slug = search_texts.slug),
      expires_at = (select drops.expires_at from drops where drops.slug = search_texts.slug)`.execute(db);
    if (postgres) {
      // The order of "newest" that ranking is bounded by (SQLite's entries have it already: their integer id).
      await sql`alter table search_texts add column id bigint generated always as identity`.execute(db);
      await sql`create index search_texts_account_id on search_texts (account_id, id)`.execute(db);
      await sql`create or replace function search_texts_keep_expiry() returns trigger language plpgsql as $$
        begin
          update search_texts set expires_at = new.expires_at where slug = new.slug;
          return null;
        end
      $$`.execute(db);
      await sql`create trigger drops_expiry_searched after update of expires_at on drops for each row
        when (old.expires_at is distinct from new.expires_at) execute function search_texts_keep_expiry()`.execute(db);
    } else {
      await sql`create trigger if not exists drops_expiry_searched after update of expires_at on drops
        when old.expires_at is not new.expires_at begin
          update search_texts set expires_at = new.expires_at where slug = new.slug;
        end`.execute(db);
    }
  },
  async down(db: Kysely<unknown>): Promise<void> {
    const postgres = db.getExecutor().adapter.supportsTransactionalDdl;
    if (postgres) {
      await sql`drop trigger if exists drops_expiry_searched on drops`.execute(db);
      await sql`drop function if exists search_texts_keep_expiry()`.execute(db);
      await sql`drop index if exists search_texts_account_id`.execute(db);
      await db.schema.alterTable('search_texts').dropColumn('id').execute();
    } else {
      // Back to 0017's table, empty: an upgrade again rebuilds it.
      await sql`drop trigger if exists drops_expiry_searched`.execute(db);
      await sql`drop table if exists search_packed`.execute(db);
      await sql`drop table if exists search_index`.execute(db);
      await sql`create virtual table search_index using fts5 (
        title, description, content, context, text unindexed, tokenize = 'unicode61 remove_diacritics 2',
        prefix = '2 3'
      )`.execute(db);
      await sql`delete from search_texts`.execute(db);
    }
    await db.schema.alterTable('search_texts').dropColumn('expires_at').execute();
    await db.schema.alterTable('search_texts').dropColumn('account_id').execute();
  },
};
