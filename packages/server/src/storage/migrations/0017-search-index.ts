import { type Kysely, type Migration, sql } from 'kysely';
import { indexUnindexedDrops } from '../kysely/search.js';
import type { Database } from '../schema.js';

/**
 * Finding drops again (docs/api.md, "Search"; docs/decisions/0037-full-text-search-words-made-once.md): an entry per
 * drop in the search index, holding its title, description, latest version's text and context as folded words
 * (domain/search.ts). SQLite: the FTS5 table `search_index` (tokenizer `unicode61 remove_diacritics 2`), its rowid
 * the `id` of the drop's `search_texts` row, which a trigger deletes with it. PostgreSQL: a tsvector per field in
 * `search_texts` (the `simple` configuration) and a GIN index on their concatenation. `search_texts.content` keeps
 * the indexed text, for snippets, and goes with its drop (foreign key with cascade).
 *
 * Existing drops are indexed here, from their stored bodies, in batches. On SQLite (outside a transaction) a
 * migration cut short resumes: the backfill indexes only drops without an entry.
 */
export const searchIndex: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const postgres = db.getExecutor().adapter.supportsTransactionalDdl;
    if (postgres) {
      await sql`create table if not exists search_texts (
        slug text primary key references drops (slug) on delete cascade,
        content text not null,
        title_terms tsvector not null,
        description_terms tsvector not null,
        content_terms tsvector not null,
        context_terms tsvector not null
      )`.execute(db);
      // The same expression as kysely/search.ts's TERMS, so the planner uses the index.
      await sql`create index if not exists search_texts_terms on search_texts using gin
        ((title_terms || description_terms || context_terms || content_terms))`.execute(db);
    } else {
      await sql`create table if not exists search_texts (
        id integer primary key,
        slug text not null unique references drops (slug) on delete cascade,
        content text not null
      )`.execute(db);
      await sql`create virtual table if not exists search_index using fts5 (
        title, description, content, context, tokenize = 'unicode61 remove_diacritics 2'
      )`.execute(db);
      await sql`create trigger if not exists search_texts_delete after delete on search_texts begin
        delete from search_index where rowid = old.id;
      end`.execute(db);
    }
    await indexUnindexedDrops(db as Kysely<Database>, postgres ? 'postgres' : 'sqlite');
  },
  async down(db: Kysely<unknown>): Promise<void> {
    if (!db.getExecutor().adapter.supportsTransactionalDdl) {
      await sql`drop trigger if exists search_texts_delete`.execute(db);
      await sql`drop table if exists search_index`.execute(db);
    }
    await sql`drop table if exists search_texts`.execute(db);
  },
};
