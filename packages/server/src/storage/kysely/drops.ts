/**
 * Drops and their versions over Kysely: create, list with metadata and title filters, append and delete versions,
 * passcode, delete (view counts are in view-stats.ts). Each method's atomicity is stated on it in domain/store.ts.
 */
import { type Compilable, type Insertable, type Kysely, sql } from 'kysely';
import type { SearchTerms } from '../../domain/search.js';
import type { DropChanges, NewDrop, NewVersion, Store, VersionConflict } from '../../domain/store.js';
import type { DropRecord, ListedDrop, ListQuery } from '../../domain/types.js';
import type { BodyEncoder } from '../body-encoder.js';
import { containsPattern, type Dialect } from '../dialect.js';
import type { Database, DropsTable } from '../schema.js';
import { deleteVersionRows, releaseBodies } from './bodies.js';
import { type Prepared, prepared, slot } from './prepared.js';
import {
  type Engine,
  engineQuery,
  entryId,
  foundDrops,
  keepSearchIndex,
  matchingEntries,
  RANK_WINDOW,
  relevance,
  searchedTexts,
} from './search.js';
import { changeSet, DROP_COLUMNS, type DropRow, encodeNetwork, inTransaction, Rollback, toDrop } from './shared.js';
import { encodeFiles, insertVersion, type VersionStore, versionStore } from './versions.js';

export type DropStore = Pick<
  Store,
  | 'createDrop'
  | 'findDrop'
  | 'findDropByContentLabel'
  | 'listDrops'
  | 'appendVersion'
  | 'updateDrop'
  | 'setPasscode'
  | 'findPasscode'
  | 'deleteDrop'
  | 'listExpiredDrops'
> &
  VersionStore;

const selectDrop = (executor: Kysely<Database>, slug: string) =>
  executor.selectFrom('drops').select(DROP_COLUMNS).where('slug', '=', slug).executeTakeFirst();

/**
 * Why a conditional write on the drop's row changed nothing: the drop is gone, or the `If-Match` precondition
 * failed (a VersionConflict naming the latest version), or neither (undefined: the caller's own condition failed).
 */
async function missedWrite(
  executor: Kysely<Database>,
  slug: string,
  ifLatest: number | undefined,
): Promise<'not_found' | VersionConflict | undefined> {
  const row = await executor.selectFrom('drops').select('latest_version').where('slug', '=', slug).executeTakeFirst();
  if (row === undefined) return 'not_found';
  const latestVersion = Number(row.latest_version);
  if (ifLatest !== undefined && latestVersion !== ifLatest) return { kind: 'version_conflict', latestVersion };
  return undefined;
}

export function dropStore(dialect: Dialect, bodies: BodyEncoder, rankWindow = RANK_WINDOW): DropStore {
  const { db } = dialect;
  return {
    createDrop: createDrop(db, bodies, dialect.name),
    findDrop: findDrop(db),
    async findDropByContentLabel(label) {
      const row = await db
        .selectFrom('drops')
        .select(DROP_COLUMNS)
        .where('content_label', '=', label)
        .executeTakeFirst();
      return row === undefined ? undefined : toDrop(row);
    },
    listDrops: listDrops(dialect, rankWindow),
    appendVersion: appendVersion(db, bodies, dialect.name),
    updateDrop: updateDrop(db, dialect.name),
    setPasscode: setPasscode(db),
    findPasscode: findPasscode(db),
    deleteDrop: deleteDrop(db),
    listExpiredDrops: listExpiredDrops(db),
    ...versionStore(db, dialect.name),
  };
}

/** The columns a create writes, each a slot of the prepared insert. */
/**
 * The insert's columns: visibility and allow (migration 0015) are left to their defaults, and set by an update in the
 * same transaction only when the drop is not public, so the create's compiled statement is what it was before.
 */
const NEW_DROP_COLUMNS = [
  ...DROP_COLUMNS.filter(
    (c): c is Exclude<(typeof DROP_COLUMNS)[number], 'visibility' | 'allow'> => c !== 'visibility' && c !== 'allow',
  ),
  'last_issued_version',
] as const;

/** The create's own statements, compiled once (kysely/prepared.ts). */
const countDrop = prepared<{ accountId: string; maxDrops: number }>((db) =>
  db
    .updateTable('accounts')
    .set((eb) => ({ drop_count: eb('drop_count', '+', 1) }))
    .where('id', '=', slot<string>('accountId'))
    .where('drop_count', '<', slot<number>('maxDrops')),
);
const insertDrop = prepared<Record<(typeof NEW_DROP_COLUMNS)[number], unknown>>((db) =>
  db
    .insertInto('drops')
    .values(Object.fromEntries(NEW_DROP_COLUMNS.map((column) => [column, slot(column)])) as Insertable<DropsTable>),
);

function createDrop(db: Kysely<Database>, bodies: BodyEncoder, engine: Engine): Store['createDrop'] {
  return async (drop: NewDrop, maxDrops: number) => {
    // Hashed and compressed (and its text made for the index) before the transaction, so the database is held only
    // for the statements.
    const [{ body, content, packedText }, files] = await Promise.all([
      bodies.encodeDocument(drop.html),
      encodeFiles(bodies, drop.files),
    ]);
    return inTransaction<DropRecord, undefined>(db, async (trx) => {
      const counted = await countDrop(trx, { accountId: drop.accountId, maxDrops });
      if (counted.numAffectedRows === 0n) throw new Rollback(undefined);
      const row = {
        slug: drop.slug,
        account_id: drop.accountId,
        title: drop.title,
        description: drop.description,
        passcode_hash: drop.passcodeHash,
        passcode_generation: drop.passcodeHash === null ? 0 : 1,
        latest_version: 1,
        last_issued_version: 1,
        version_count: 1,
        view_count: 0,
        comments: drop.comments ?? 'signed_in',
        metadata: JSON.stringify(drop.metadata),
        created_at: drop.now,
        updated_at: drop.now,
        expires_at: drop.expiresAt ?? null,
        content_label: drop.contentLabel,
        network: encodeNetwork(drop.network ?? 'open'),
      };
      await insertDrop(trx, row);
      const visibility = drop.visibility ?? 'public';
      const allow = JSON.stringify(drop.allow ?? []);
      if (visibility !== 'public' || allow !== '[]') {
        await trx.updateTable('drops').set({ visibility, allow }).where('slug', '=', drop.slug).execute();
      }
      await insertVersion(trx, drop.slug, 1, { ...drop, body, files });
      await keepSearchIndex(trx, engine, drop.slug, {
        title: drop.title,
        description: drop.description,
        metadata: drop.metadata,
        version: { content, context: drop.context, packedText },
      });
      return toDrop({ ...row, visibility, allow });
    });
  };
}

function findDrop(db: Kysely<Database>): Store['findDrop'] {
  return async (slug) => {
    const row = await selectDrop(db, slug);
    return row === undefined ? undefined : toDrop(row);
  };
}

/** Compiled list statements kept per shape (which filters, which sort); a shape beyond this many is compiled each time. */
const MAX_LIST_SHAPES = 128;

interface ListStatements {
  readonly page: Prepared<Record<string, unknown>>;
  readonly count: Prepared<Record<string, unknown>>;
}

/**
 * One page of an account's drops and the number matching, compiled once per shape of the query (kysely/prepared.ts):
 * how many tags are filtered on, whether a title filter and the expiry condition apply, the sort. Only values vary
 * between two calls of one shape.
 */
function listDrops(dialect: Dialect, rankWindow: number): Store['listDrops'] {
  const shapes = new Map<string, ListStatements>();
  const statementsFor = (query: ListQuery, tags: number): ListStatements => {
    const title = Boolean(query.titleContains);
    const alive = query.aliveAt !== undefined;
    const shape = `${tags} ${title} ${alive} ${query.sortBy} ${query.sortOrder}`;
    const known = shapes.get(shape);
    if (known !== undefined) return known;
    const filtered = (executor: Kysely<Database>) => {
      let base = executor.selectFrom('drops').where('account_id', '=', slot<string>('account'));
      for (let i = 0; i < tags; i++) {
        base = base.where(dialect.jsonText('metadata', slot<string>(`k${i}`)), '=', slot<string>(`v${i}`));
      }
      if (title) base = base.where(dialect.likeIgnoringCase('title', slot<string>('title')));
      if (alive) {
        base = base.where((eb) =>
          eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', slot<number>('aliveAt'))]),
        );
      }
      return base;
    };
    const statements: ListStatements = {
      count: prepared((executor) =>
        filtered(executor).select((eb) => eb.fn.countAll<number | string | bigint>().as('n')),
      ),
      page: prepared((executor) =>
        filtered(executor)
          .select(DROP_COLUMNS)
          .orderBy(query.sortBy, query.sortOrder)
          .orderBy('slug', query.sortOrder)
          .limit(slot<number>('limit'))
          .offset(slot<number>('offset')),
      ),
    };
    if (shapes.size < MAX_LIST_SHAPES) shapes.set(shape, statements);
    return statements;
  };
  const search = searchList(dialect, rankWindow);
  return async (accountId, query: ListQuery) => {
    if (query.search !== undefined) return search(accountId, query, query.search);
    const entries = Object.entries(query.metadata);
    const values: Record<string, unknown> = {
      account: accountId,
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
      ...(query.titleContains ? { title: containsPattern(query.titleContains) } : {}),
      ...(query.aliveAt === undefined ? {} : { aliveAt: query.aliveAt }),
    };
    entries.forEach(([key, value], i) => {
      values[`k${i}`] = dialect.jsonKeyPath(key);
      values[`v${i}`] = value;
    });
    const statements = statementsFor(query, entries.length);
    const counted = await statements.count<{ n: number | string | bigint }>(dialect.db, values);
    const total = Number(counted.rows[0]?.n ?? 0);
    if (total === 0) return { items: [], total };
    const { rows } = await statements.page<DropRow>(dialect.db, values);
    return { items: rows.map(toDrop), total };
  };
}

/** The drop columns, named with their table: a search joins tables that share some names (slug, title, content). */
const QUALIFIED_DROP_COLUMNS = DROP_COLUMNS.map((column) => `drops.${column}` as const);

/** A search's statements: a listing's, and for relevance past the window, its boundary and the older matches. */
interface SearchStatements extends ListStatements {
  readonly boundary: Prepared<Record<string, unknown>>;
  readonly older: Prepared<Record<string, unknown>>;
}

/**
 * A search's page and total (docs/api.md, "Search"): the same filters as a listing, over the drops the engine's index
 * matches (kysely/search.ts), best first unless a sort was asked for. Compiled once per shape, as a listing is.
 *
 * Relevance ranks the newest `rankWindow` matches (RANK_WINDOW unless a test shrinks it) (docs/decisions/0040-search-filters-in-the-index.md): past that many,
 * the total tells, the boundary statement finds the window's oldest entry, the page ranks from it on, and the older
 * matches follow it newest first.
 */
function searchList(dialect: Dialect, rankWindow: number) {
  const engine = dialect.name;
  const { rank, order } = relevance(engine);
  const id = entryId(engine);
  const shapes = new Map<string, SearchStatements>();
  const statementsFor = (query: ListQuery, tags: number, byRelevance: boolean): SearchStatements => {
    const title = Boolean(query.titleContains);
    const alive = query.aliveAt !== undefined;
    const shape = `${tags} ${title} ${alive} ${byRelevance ? 'relevance' : `${query.sortBy} ${query.sortOrder}`}`;
    const known = shapes.get(shape);
    if (known !== undefined) return known;
    // The drop's row is read only for a filter on its own columns (docs/decisions/0040), and by the page for an order
    // on them: counting the matches of a search sorted by date reads no drop row. SQLite's index holds the tags
    // (engineQuery), PostgreSQL's does not.
    const tagsOnDrops = engine === 'postgres' ? tags : 0;
    const filteredOnDrops = tagsOnDrops > 0 || title;
    // The index keeps each drop's dates (migration 0021): only a sort by views reads the drop's row for the page.
    const sortedOn = query.sortBy === 'view_count' ? 'drops' : 'search_texts';
    const filtered = (executor: Kysely<Database>, sortedOnDrops = false) => {
      const entries = matchingEntries(engine, executor, alive);
      if (!filteredOnDrops && !sortedOnDrops) return entries;
      let base = entries.innerJoin('drops', 'drops.slug', 'search_texts.slug');
      for (let i = 0; i < tagsOnDrops; i++) {
        base = base.where(dialect.jsonText('metadata', slot<string>(`k${i}`)), '=', slot<string>(`v${i}`));
      }
      if (title) base = base.where(dialect.likeIgnoringCase('drops.title', slot<string>('title')));
      return base as unknown as typeof entries;
    };
    const paged = <T extends { limit(n: number): { offset(n: number): Compilable<unknown> } }>(q: T) =>
      q.limit(slot<number>('limit')).offset(slot<number>('offset'));
    const statements: SearchStatements = {
      count: prepared((executor) =>
        filtered(executor).select((eb) => eb.fn.countAll<number | string | bigint>().as('n')),
      ),
      // The page's slugs only: ranking and sorting carry no row's columns, let alone its text.
      page: prepared((executor) => {
        const selected = filtered(executor, !byRelevance && sortedOn === 'drops').select('search_texts.slug');
        if (byRelevance) {
          return paged(
            selected.where(id, '>=', slot<number>('from')).orderBy(rank, order).orderBy('search_texts.slug', 'asc'),
          );
        }
        return paged(
          selected
            .orderBy(sql.ref(`${sortedOn}.${query.sortBy}`), query.sortOrder)
            .orderBy('search_texts.slug', query.sortOrder),
        );
      }),
      boundary: prepared((executor) =>
        filtered(executor)
          .select(id.as('id'))
          .orderBy(id, 'desc')
          .limit(1)
          .offset(rankWindow - 1),
      ),
      older: prepared((executor) =>
        paged(filtered(executor).select('search_texts.slug').where(id, '<', slot<number>('from')).orderBy(id, 'desc')),
      ),
    };
    if (shapes.size < MAX_LIST_SHAPES) shapes.set(shape, statements);
    return statements;
  };
  return async (
    accountId: string,
    query: ListQuery,
    search: { readonly terms: SearchTerms; readonly byRelevance: boolean },
  ): Promise<{ items: ListedDrop[]; total: number }> => {
    const entries = Object.entries(query.metadata);
    const offset = (query.page - 1) * query.pageSize;
    const values: Record<string, unknown> = {
      account: accountId,
      q: engineQuery(engine, search.terms, entries),
      limit: query.pageSize,
      offset,
      from: 0,
      ...(query.titleContains ? { title: containsPattern(query.titleContains) } : {}),
      ...(query.aliveAt === undefined ? {} : { aliveAt: query.aliveAt }),
    };
    entries.forEach(([key, value], i) => {
      values[`k${i}`] = dialect.jsonKeyPath(key);
      values[`v${i}`] = value;
    });
    const statements = statementsFor(query, entries.length, search.byRelevance);
    const counted = await statements.count<{ n: number | string | bigint }>(dialect.db, values);
    const total = Number(counted.rows[0]?.n ?? 0);
    if (total === 0) return { items: [], total };
    const windowed = search.byRelevance && total > rankWindow;
    if (windowed) {
      const { rows } = await statements.boundary<{ id: number | string }>(dialect.db, values);
      values.from = Number(rows[0]?.id ?? 0);
    }
    const slugs = (await statements.page<{ slug: string }>(dialect.db, values)).rows.map((row) => row.slug);
    if (windowed && slugs.length < query.pageSize) {
      // The page reaches past the ranked window: the older matches, newest first.
      const older = { ...values, limit: query.pageSize - slugs.length, offset: Math.max(0, offset - rankWindow) };
      for (const row of (await statements.older<{ slug: string }>(dialect.db, older)).rows) slugs.push(row.slug);
    }
    if (slugs.length === 0) return { items: [], total };
    const found = await foundDrops(engine, dialect.db, slugs).select(QUALIFIED_DROP_COLUMNS).execute();
    const bySlug = new Map(found.map((row) => [row.slug, row]));
    const items: ListedDrop[] = [];
    for (const slug of slugs) {
      const row = bySlug.get(slug);
      // Gone between the two statements (deleted meanwhile): left out of this page.
      if (row !== undefined) items.push({ ...toDrop(row), searched: searchedTexts(row) });
    }
    return { items, total };
  };
}

function appendVersion(db: Kysely<Database>, bodies: BodyEncoder, engine: Engine): Store['appendVersion'] {
  type Result = DropRecord | 'not_found' | 'version_limit' | 'version_not_found' | VersionConflict;
  return async (slug: string, version: NewVersion, changes: DropChanges, maxVersions: number, ifLatest?: number) => {
    const [{ body, content, packedText }, files] = await Promise.all([
      bodies.encodeDocument(version.html),
      encodeFiles(bodies, version.files),
    ]);
    return inTransaction<Result, 'version_not_found'>(db, async (trx) => {
      // One conditional update on the drop's row: the cap and the precondition are checked under its row lock, so
      // of two writers with the same If-Match exactly one gets a row back.
      let update = trx
        .updateTable('drops')
        .set((eb) => ({
          ...changeSet(changes),
          last_issued_version: eb('last_issued_version', '+', 1),
          latest_version: eb('last_issued_version', '+', 1),
          version_count: eb('version_count', '+', 1),
          updated_at: version.now,
        }))
        .where('slug', '=', slug)
        .where('version_count', '<', maxVersions);
      if (ifLatest !== undefined) update = update.where('latest_version', '=', ifLatest);
      const row = await update.returning(DROP_COLUMNS).executeTakeFirst();
      if (row === undefined) return (await missedWrite(trx, slug, ifLatest)) ?? 'version_limit';
      const copied = await insertVersion(trx, slug, Number(row.latest_version), { ...version, body, files });
      if (copied === 'version_not_found') throw new Rollback(copied);
      await keepSearchIndex(trx, engine, slug, {
        title: row.title,
        description: row.description,
        metadata: toDrop(row).metadata,
        version: { content, context: version.context, packedText },
      });
      return toDrop(row);
    });
  };
}

function updateDrop(db: Kysely<Database>, engine: Engine): Store['updateDrop'] {
  return async (slug, changes, now, ifLatest) => {
    const write = async (executor: Kysely<Database>) => {
      let update = executor
        .updateTable('drops')
        .set({ ...changeSet(changes), updated_at: now })
        .where('slug', '=', slug);
      if (ifLatest !== undefined) update = update.where('latest_version', '=', ifLatest);
      return update.returning(DROP_COLUMNS).executeTakeFirst();
    };
    // A new title, description or tags are searched at once: the index changes in the same transaction.
    const searched = changes.title !== undefined || changes.description !== undefined || changes.metadata !== undefined;
    const row = searched
      ? await db.transaction().execute(async (trx) => {
          const updated = await write(trx);
          if (updated !== undefined) {
            const { title, description, metadata } = toDrop(updated);
            await keepSearchIndex(trx, engine, slug, { title, description, metadata });
          }
          return updated;
        })
      : await write(db);
    if (row !== undefined) return toDrop(row);
    const missed = await missedWrite(db, slug, ifLatest);
    return missed === 'not_found' ? undefined : missed;
  };
}

function setPasscode(db: Kysely<Database>): Store['setPasscode'] {
  return async (slug, passcodeHash, now) => {
    const row = await db
      .updateTable('drops')
      .set((eb) => ({
        passcode_hash: passcodeHash,
        passcode_generation: eb('passcode_generation', '+', 1),
        updated_at: now,
      }))
      .where('slug', '=', slug)
      .returning(DROP_COLUMNS)
      .executeTakeFirst();
    return row === undefined ? undefined : toDrop(row);
  };
}

function findPasscode(db: Kysely<Database>): Store['findPasscode'] {
  return async (slug) => {
    const row = await db
      .selectFrom('drops')
      .select(['passcode_hash', 'passcode_generation'])
      .where('slug', '=', slug)
      .executeTakeFirst();
    return row === undefined ? undefined : { hash: row.passcode_hash, generation: Number(row.passcode_generation) };
  };
}

function deleteDrop(db: Kysely<Database>): Store['deleteDrop'] {
  return (slug, ifLatest) =>
    inTransaction<boolean | VersionConflict, never>(db, async (trx) => {
      // A no-op update takes the drop's row lock (and checks the precondition) before anything is read or deleted,
      // so no version can be added between the release of the bodies and the delete of the drop.
      let lock = trx
        .updateTable('drops')
        .set((eb) => ({ updated_at: eb.ref('updated_at') }))
        .where('slug', '=', slug);
      if (ifLatest !== undefined) lock = lock.where('latest_version', '=', ifLatest);
      const locked = await lock.executeTakeFirst();
      if (locked.numUpdatedRows === 0n) {
        const missed = await missedWrite(trx, slug, ifLatest);
        return typeof missed === 'object' ? missed : false;
      }
      const uses = await deleteVersionRows(trx, slug);
      const row = await trx
        .deleteFrom('drops')
        .where('slug', '=', slug)
        .returning('account_id')
        .executeTakeFirstOrThrow();
      // The account's row before the bodies: the order a create takes them in (kysely/bodies.ts).
      await trx
        .updateTable('accounts')
        .set((eb) => ({ drop_count: eb('drop_count', '-', 1) }))
        .where('id', '=', row.account_id)
        .execute();
      await releaseBodies(trx, uses);
      return true;
    });
}

function listExpiredDrops(db: Kysely<Database>): Store['listExpiredDrops'] {
  return async (now, limit) => {
    const rows = await db
      .selectFrom('drops')
      .select(['slug', 'account_id'])
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ slug: row.slug, accountId: row.account_id }));
  };
}
