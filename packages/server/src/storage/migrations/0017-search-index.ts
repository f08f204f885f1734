import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Finding drops again (docs/api.md, "Search"; docs/decisions/0037-full-text-search-words-made-once.md): an entry per
 * drop in the search index, holding its title, description, latest version's text and context as folded words
 * (domain/search.ts). SQLite: the FTS5 table `search_index` (tokenizer `unicode61 remove_diacritics 2`; prefix
 * indexes of 2 and 3 characters, so a short last word is one lookup, not a scan of every word it begins), its rowid
 * the `id` of the drop's narrow `search_texts` row, which a trigger deletes with it, and the indexed text, for
 * snippets, in its unindexed column `text`. PostgreSQL: `search_texts` holds the text (`content`) and the words as
 * one tsvector (`terms`, the `simple` configuration, each field with its weight) under a GIN index on the column (an
 * index on an expression was priced above a sequential scan by the planner, which does not see the cost of reading
 * large tsvectors). Either goes with its drop (foreign key with cascade).
 *
 * Existing drops are indexed by migration 0021: the backfill writes entries as today's code does, so it runs after the
 * last migration that changed them (it ran here before 0020 existed, then in 0020; the tables this one makes are
 * unchanged).
 */
export const searchIndex: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const postgres = db.getExecutor().adapter.supportsTransactionalDdl;
    if (postgres) {
      await sql`create table if not exists search_texts (
        slug text primary key references drops (slug) on delete cascade,
        content text not null,
        terms tsvector not null
      )`.execute(db);
      // fastupdate off: each write updates the index itself. With it on, new entries wait in a pending list that every
      // query reads through until a vacuum merges it (100 ms for a word one drop of 2,000 holds, right after they were
      // written).
      await sql`create index if not exists search_texts_terms on search_texts using gin (terms)
        with (fastupdate = off)`.execute(db);
    } else {
      // Narrow, so that mapping a match to its drop is a lookup in a small table; the text lives in the FTS5 row.
      await sql`create table if not exists search_texts (
        id integer primary key,
        slug text not null unique references drops (slug) on delete cascade
      )`.execute(db);
      await sql`create virtual table if not exists search_index using fts5 (
        title, description, content, context, text unindexed, tokenize = 'unicode61 remove_diacritics 2',
        prefix = '2 3'
      )`.execute(db);
      await sql`create trigger if not exists search_texts_delete after delete on search_texts begin
        delete from search_index where rowid = old.id;
      end`.execute(db);
    }
  },
  async down(db: Kysely<unknown>): Promise<void> {
    if (!db.getExecutor().adapter.supportsTransactionalDdl) {
      await sql`drop trigger if exists search_texts_delete`.execute(db);
      await sql`drop table if exists search_index`.execute(db);
    }
    await sql`drop table if exists search_texts`.execute(db);
  },
};
