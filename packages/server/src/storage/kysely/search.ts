/**
 * The search index (docs/api.md, "Search"; docs/decisions/0037-full-text-search-words-made-once.md), both engines side
 * by side: SQLite's contentless FTS5 table `search_index` (a row per drop, its rowid the drop's `search_texts.id`,
 * the words of title, description, text and context, and the tags as terms of their own column; the text for snippets
 * packed in `search_packed`) and PostgreSQL's tsvector column `terms` of `search_texts` (each field's words weighted:
 * title A, description B, context C, text D) under a GIN index, beside the text (`content`). Both receive the words of
 * domain/search.ts, folded and joined by spaces. `search_texts` also carries the drop's owner, expiry and dates
 * (migrations 0020, 0021), so most searches read no drop row. An entry goes with its drop (a foreign key with cascade;
 * on SQLite a trigger takes the FTS5 row with it).
 *
 * One function keeps the index, `keepSearchIndex()`, called inside the transaction of every write that changes a
 * searched field: create, a new version (PUT, restore), a change of title, description or tags, the delete of the
 * latest version. Its statements are written once per engine, without a query builder (kysely/prepared.ts says why).
 */
import { createHash } from 'node:crypto';
import { CompiledQuery, type Kysely, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import { textOfHtml } from '../../domain/plain-text.js';
import type { IndexedContent } from '../../domain/search.js';
import { indexedContent, indexWords, type SearchedTexts, type SearchTerms } from '../../domain/search.js';
import { decodeBody, packText, unpackText } from '../bodies.js';
import type { Database } from '../schema.js';
import { slot } from './prepared.js';

export type Engine = 'sqlite' | 'postgres';

/** A drop's searched fields as they are now (after the write); `content` only when the latest version changed. */
export interface SearchEntry {
  readonly title: string;
  readonly description: string | null;
  /** The drop's tags (SQLite indexes each as a term of its column `tags`, tagTerm()). */
  readonly metadata: Readonly<Record<string, string>>;
  /** The latest version's text and its context: both, or neither (a change of title or description only). */
  readonly version?:
    | {
        readonly content: IndexedContent;
        readonly context: string | null;
        /** SQLite: the text already packed (bodies.ts `packText`, by the encoding worker); else packed here. */
        readonly packedText?: Uint8Array | undefined;
      }
    | undefined;
}

/** PostgreSQL: a field's words as a tsvector of the `simple` configuration, weighted (title A, description B, context C, content D). */
const tsv = (n: number, weight: string) => `setweight(to_tsvector('simple', $${n}), '${weight}')`;

const STATEMENTS = {
  sqlite: {
    // The owner, expiry and dates come from the drop's row, written earlier in the same transaction (migrations 0020,
    // 0021); a trigger keeps the expiry and the time of the last change (a PATCH writes no entry).
    id: `insert into search_texts (slug, account_id, expires_at, created_at, updated_at)
      select slug, account_id, expires_at, created_at, updated_at from drops where slug = ?
      on conflict (slug) do update set slug = excluded.slug returning id`,
    all: `insert or replace into search_index (rowid, title, description, content, context, tags)
      values (?, ?, ?, ?, ?, ?)`,
    pack: `insert or replace into search_packed (id, packed) values (?, ?)`,
    // The index keeps no copy of its words (contentless, migration 0020): a new title or description is written
    // with the words of the packed text and of the latest version's context, made again.
    kept: `select search_texts.id, search_packed.packed, versions.context from search_texts
      join search_packed on search_packed.id = search_texts.id
      join drops on drops.slug = search_texts.slug
      left join versions on versions.slug = drops.slug and versions.version = drops.latest_version
      where search_texts.slug = ?`,
  },
  postgres: {
    all: `insert into search_texts (slug, account_id, expires_at, created_at, updated_at, content, terms)
      select slug, account_id, expires_at, created_at, updated_at, $2,
        ${tsv(3, 'A')} || ${tsv(4, 'B')} || ${tsv(6, 'C')} || ${tsv(5, 'D')}
      from drops where slug = $1
      on conflict (slug) do update set content = excluded.content, terms = excluded.terms`,
    // The new title and description, and of the old words only the context's and the text's (weights C and D).
    details: `update search_texts set terms = ${tsv(1, 'A')} || ${tsv(2, 'B')} || ts_filter(terms, '{c,d}')
      where slug = $3`,
  },
} as const;

/*
 * SQLite: what the contentless index cannot give back, the text for snippets, is kept beside it in `search_packed`,
 * compressed (bodies.ts `packText`, in the encoding worker; migration 0021): a 100 KB report's 32 KB of text take
 * about 7 KB. Its words and the context's are not kept: the rare write that needs them again (a new title,
 * description or tags) makes them again.
 */

const run = (executor: Kysely<Database>, text: string, parameters: readonly unknown[]) =>
  executor.executeQuery<{ id: number }>(CompiledQuery.raw(text, [...parameters]));

/**
 * Writes a drop's entry of the index, in the caller's transaction: every field when the latest version changed (a
 * new entry, or its words replaced), else the title, description and tags (SQLite writes the whole row again, the
 * words of the text and context made from the packed text and the latest version).
 */
export async function keepSearchIndex(
  executor: Kysely<Database>,
  engine: Engine,
  slug: string,
  entry: SearchEntry,
): Promise<void> {
  const title = indexWords(entry.title);
  const description = indexWords(entry.description);
  const { version } = entry;
  if (engine === 'sqlite') {
    if (version === undefined) {
      const { rows } = await executor.executeQuery<{ id: number; packed: Uint8Array; context: string | null }>(
        CompiledQuery.raw(STATEMENTS.sqlite.kept, [slug]),
      );
      const row = rows[0];
      if (row === undefined) return;
      const { words } = indexedContent(unpackText(row.packed));
      const context = indexWords(row.context);
      await run(executor, STATEMENTS.sqlite.all, [
        row.id,
        title,
        description,
        words,
        context,
        tagTerms(entry.metadata),
      ]);
      return;
    }
    const { rows } = await run(executor, STATEMENTS.sqlite.id, [slug]);
    const id = rows[0]?.id;
    const { words, text } = version.content;
    const context = indexWords(version.context);
    await run(executor, STATEMENTS.sqlite.all, [id, title, description, words, context, tagTerms(entry.metadata)]);
    await run(executor, STATEMENTS.sqlite.pack, [id, version.packedText ?? packText(text)]);
    return;
  }
  if (version === undefined) {
    await run(executor, STATEMENTS.postgres.details, [title, description, slug]);
    return;
  }
  await run(executor, STATEMENTS.postgres.all, [
    slug,
    version.content.text,
    title,
    description,
    version.content.words,
    indexWords(version.context),
  ]);
}

/** The entry of `slug` rebuilt from its latest version's stored body (a version deleted, the backfill). */
export async function reindexFromStore(executor: Kysely<Database>, engine: Engine, slug: string): Promise<void> {
  const row = await executor
    .selectFrom('drops')
    .innerJoin('versions', (join) =>
      join.onRef('versions.slug', '=', 'drops.slug').onRef('versions.version', '=', 'drops.latest_version'),
    )
    .innerJoin('bodies', 'bodies.hash', 'versions.body_hash')
    .select(['drops.title', 'drops.description', 'drops.metadata', 'versions.context', 'bodies.codec', 'bodies.data'])
    .where('drops.slug', '=', slug)
    .executeTakeFirst();
  if (row === undefined) return;
  const html = await decodeBody(row.codec, row.data);
  await keepSearchIndex(executor, engine, slug, {
    title: row.title,
    description: row.description,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    version: { content: indexedContent(textOfHtml(html)), context: row.context },
  });
}

/** Drops per batch of the backfill. */
const BACKFILL_BATCH = 100;

/**
 * Indexes every drop that has no entry yet (migration 0017, and `migrate-data` on its target, where the index is
 * rebuilt rather than copied: an FTS5 table does not move to PostgreSQL). Returns how many it indexed.
 */
export async function indexUnindexedDrops(executor: Kysely<Database>, engine: Engine): Promise<number> {
  let indexed = 0;
  let after = '';
  for (;;) {
    const slugs = await executor
      .selectFrom('drops')
      .select('drops.slug')
      .where('drops.slug', '>', after)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb.selectFrom('search_texts').select('search_texts.slug').whereRef('search_texts.slug', '=', 'drops.slug'),
          ),
        ),
      )
      .orderBy('drops.slug')
      .limit(BACKFILL_BATCH)
      .execute();
    for (const { slug } of slugs) await reindexFromStore(executor, engine, slug);
    indexed += slugs.length;
    if (slugs.length < BACKFILL_BATCH) return indexed;
    after = (slugs[slugs.length - 1] as { slug: string }).slug;
  }
}

/**
 * SQLite: a tag as one term of the index's column `tags`, so that a search filtered by tags is decided by the index
 * (docs/decisions/0041): `t` and the first 24 hex digits (96 bits) of the SHA-256 of the key, a NUL and the value.
 * Letters and digits only, so the tokenizer keeps it whole; a term of no other column, so no word can match it.
 */
export const tagTerm = (key: string, value: string): string =>
  `t${createHash('sha256').update(key).update('\0').update(value).digest('hex').slice(0, 24)}`;

/** SQLite: the index's columns a word of `q` is looked for in (FTS5's column filter). */
const TEXT_COLUMNS = '{title description content context}';

/** A drop's tags as the terms of the column `tags`. */
const tagTerms = (metadata: Readonly<Record<string, string>>): string =>
  Object.entries(metadata)
    .map(([key, value]) => tagTerm(key, value))
    .join(' ');

/**
 * The query an engine runs for `terms` (never empty): each word a literal, ANDed, the last as a prefix; on SQLite each
 * tag filter too, as a term of the column `tags` (PostgreSQL filters tags on the drop's row).
 */
export function engineQuery(
  engine: Engine,
  terms: SearchTerms,
  tags: ReadonlyArray<readonly [string, string]> = [],
): string {
  // The words hold letters and digits only (domain/search.ts), and so do tag terms: no quote, operator or column
  // filter of the caller's can reach the engine's query syntax. They are still quoted, as literals.
  if (engine === 'sqlite') {
    // Words are looked for in the four searched fields only: a word spelled like a tag term matches no tag.
    const words = terms.words.map((word, i, all) => `${TEXT_COLUMNS} : "${word}"${i === all.length - 1 ? '*' : ''}`);
    return [...words, ...tags.map(([key, value]) => `tags : "${tagTerm(key, value)}"`)].join(' ');
  }
  return terms.words.map((word, i, all) => `'${word}'${i === all.length - 1 ? ':*' : ''}`).join(' & ');
}

/** PostgreSQL: the drop's words, the column the GIN index of migration 0017 is on. */
const TERMS = sql`search_texts.terms`;

type SearchSource = SelectQueryBuilder<Database, 'search_texts', object>;

/**
 * The index entries of the account in slot `account` that match the query in slot `q`, alive at `aliveAt` when that
 * slot is asked for: decided from the index alone (the owner and expiry are copied into `search_texts`, migration
 * 0020), so a word every drop holds reads no drop row. A caller that filters on the drop's own columns joins `drops`.
 */
export function matchingEntries(engine: Engine, executor: Kysely<Database>, alive: boolean): SearchSource {
  const source =
    engine === 'sqlite'
      ? (executor
          .selectFrom('search_index')
          .innerJoin('search_texts', 'search_texts.id', 'search_index.rowid')
          .where(sql<boolean>`search_index match ${slot<string>('q')}`) as unknown as SearchSource)
      : executor.selectFrom('search_texts').where(sql<boolean>`${TERMS} @@ to_tsquery('simple', ${slot<string>('q')})`);
  const owned = source.where('search_texts.account_id', '=', slot<string>('account'));
  if (!alive) return owned;
  return owned.where((eb) =>
    eb.or([eb('search_texts.expires_at', 'is', null), eb('search_texts.expires_at', '>', slot<number>('aliveAt'))]),
  );
}

/**
 * How many matches relevance ranks (docs/decisions/0040-search-filters-in-the-index.md): the newest this many by
 * entry (an entry's id is given when its drop is first indexed, so newer means created later). When more drops
 * match, the older ones follow the ranked ones, newest first: a page costs the same however many drops hold a word.
 */
export const RANK_WINDOW = 1000;

/** An entry's id, the order of "newest": SQLite's FTS5 rowid (a range of it is a seek in the index), PostgreSQL's identity. */
export const entryId = (engine: Engine): RawBuilder<number> =>
  engine === 'sqlite' ? sql<number>`search_index.rowid` : sql<number>`search_texts.id`;

/** The relevance of a matching drop, and which way is best first. */
export function relevance(engine: Engine): { readonly rank: RawBuilder<number>; readonly order: 'asc' | 'desc' } {
  // SQLite's bm25 is better the lower; ts_rank the higher. Weights: title, description, content, context (tags 0).
  if (engine === 'sqlite') return { rank: sql<number>`bm25(search_index, 8.0, 4.0, 1.0, 2.0, 0.0)`, order: 'asc' };
  return { rank: sql<number>`ts_rank(${TERMS}, to_tsquery('simple', ${slot<string>('q')}))`, order: 'desc' };
}

/**
 * The found drops of one page, by slug, with the texts their match is shown from (read for the page only: ranking
 * and counting never read a text).
 */
export function foundDrops(engine: Engine, executor: Kysely<Database>, slugs: readonly string[]) {
  const context = sql<
    string | null
  >`(select versions.context from versions where versions.slug = drops.slug and versions.version = drops.latest_version)`.as(
    'search_context',
  );
  const base = executor.selectFrom('drops').innerJoin('search_texts', 'search_texts.slug', 'drops.slug');
  const joined =
    engine === 'sqlite'
      ? base
          .innerJoin('search_packed', 'search_packed.id', 'search_texts.id')
          .select(sql<string | Uint8Array>`search_packed.packed`.as('search_content'))
      : base.select(sql<string | Uint8Array>`search_texts.content`.as('search_content'));
  return joined.select(context).where('drops.slug', 'in', [...slugs]);
}

/** The texts of a found drop's row (its title and description come with the drop's own columns). */
export const searchedTexts = (row: {
  title: string;
  description: string | null;
  /** PostgreSQL: the text; SQLite: the packed column. */
  search_content: string | Uint8Array;
  search_context: string | null;
}): SearchedTexts => ({
  title: row.title,
  description: row.description,
  content: typeof row.search_content === 'string' ? row.search_content : unpackText(row.search_content),
  context: row.search_context,
});
