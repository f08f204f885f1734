/**
 * Read receipts over Kysely (docs/api.md, "Read receipts"): one flush of viewer renders written as increments and
 * insert-or-ignore, and the statistics of one drop. Each method's atomicity is stated on it in domain/store.ts.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Store } from '../../domain/store.js';
import type { DropViewStats, VersionViewStats, ViewTally } from '../../domain/types.js';
import type { Database } from '../schema.js';

export type ViewStatsStore = Pick<Store, 'addViews' | 'getDropStats'>;

/** Rows per multi-row insert: far below the bound-parameter limits of SQLite (32766) and PostgreSQL (65535). */
const CHUNK_ROWS = 500;

export function viewStatsStore(db: Kysely<Database>): ViewStatsStore {
  return { addViews: addViews(db), getDropStats: getDropStats(db) };
}

/** The tallies of several versions as one: summed views, the outer times, the union of the viewers. */
function combine(tallies: readonly ViewTally[]): ViewTally {
  const viewers = new Set<string>();
  let views = 0;
  let firstAt = Number.POSITIVE_INFINITY;
  let lastAt = Number.NEGATIVE_INFINITY;
  for (const tally of tallies) {
    views += tally.views;
    firstAt = Math.min(firstAt, tally.firstAt);
    lastAt = Math.max(lastAt, tally.lastAt);
    for (const viewer of tally.viewers) viewers.add(viewer);
  }
  return { views, firstAt, lastAt, viewers };
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK_ROWS) out.push(items.slice(i, i + CHUNK_ROWS));
  return out;
}

/** On conflict: the earlier of the stored and the new first render, the later of the two last renders. */
function widenTimes(table: 'drop_views' | 'version_views') {
  // A CASE rather than two-argument min()/max(): SQLite spells those min/max, PostgreSQL least/greatest.
  const pick = (column: 'first_viewed_at' | 'last_viewed_at', op: '<' | '>') => {
    const stored = sql.ref(`${table}.${column}`);
    const incoming = sql.ref(`excluded.${column}`);
    return sql<number>`case when ${incoming} ${sql.raw(op)} ${stored} then ${incoming} else ${stored} end`;
  };
  return { first_viewed_at: pick('first_viewed_at', '<'), last_viewed_at: pick('last_viewed_at', '>') };
}

function addViews(db: Kysely<Database>): Store['addViews'] {
  return async (batch) => {
    if (batch.size === 0) return;
    // In one order on every instance, so concurrent flushes take their row locks alike and cannot deadlock.
    const slugs = [...batch.keys()].sort();
    await db.transaction().execute(async (trx) => {
      for (const slug of slugs) {
        const versions = batch.get(slug);
        if (versions !== undefined && versions.size > 0) await addDropViews(trx, slug, versions);
      }
    });
  };
}

/** One drop's share of a flush. */
async function addDropViews(
  trx: Transaction<Database>,
  slug: string,
  versions: ReadonlyMap<number, ViewTally>,
): Promise<void> {
  const total = combine([...versions.values()]);
  // The drop's row lock first: deleteVersion and deleteDrop take it first too, so the versions found below stay
  // until this transaction ends, and the rows inserted for them satisfy their foreign keys.
  const counted = await trx
    .updateTable('drops')
    .set((eb) => ({ view_count: eb('view_count', '+', total.views) }))
    .where('slug', '=', slug)
    .executeTakeFirst();
  if (counted.numUpdatedRows === 0n) return;
  await trx
    .insertInto('drop_views')
    .values({ slug, first_viewed_at: total.firstAt, last_viewed_at: total.lastAt })
    .onConflict((oc) => oc.column('slug').doUpdateSet(widenTimes('drop_views')))
    .execute();
  for (const rows of chunks([...total.viewers].sort().map((viewer) => ({ slug, viewer })))) {
    await trx
      .insertInto('drop_viewers')
      .values(rows)
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  await addVersionViews(trx, slug, versions);
}

/** The per-version rows of one drop's share, for the versions that still exist. */
async function addVersionViews(
  trx: Transaction<Database>,
  slug: string,
  versions: ReadonlyMap<number, ViewTally>,
): Promise<void> {
  const existing = await trx
    .selectFrom('versions')
    .select('version')
    .where('slug', '=', slug)
    .where('version', 'in', [...versions.keys()])
    .execute();
  const numbers = existing.map((row) => Number(row.version)).sort((a, b) => a - b);
  const counts = numbers.flatMap((version) => {
    const tally = versions.get(version);
    return tally === undefined ? [] : [{ version, tally }];
  });
  if (counts.length === 0) return;
  await trx
    .insertInto('version_views')
    .values(
      counts.map(({ version, tally }) => ({
        slug,
        version,
        views: tally.views,
        first_viewed_at: tally.firstAt,
        last_viewed_at: tally.lastAt,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['slug', 'version']).doUpdateSet((eb) => ({
        views: eb('version_views.views', '+', eb.ref('excluded.views')),
        ...widenTimes('version_views'),
      })),
    )
    .execute();
  const viewerRows = counts.flatMap(({ version, tally }) =>
    [...tally.viewers].sort().map((viewer) => ({ slug, version, viewer })),
  );
  for (const rows of chunks(viewerRows)) {
    await trx
      .insertInto('version_viewers')
      .values(rows)
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

const nullableMs = (value: number | string | null): number | null => (value === null ? null : Number(value));

function getDropStats(db: Kysely<Database>): Store['getDropStats'] {
  return (slug) =>
    // Repeatable read: one snapshot for both statements on PostgreSQL (SQLite ignores the setting; a transaction
    // there reads one snapshot anyway).
    db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx): Promise<DropViewStats | undefined> => {
        const drop = await trx
          .selectFrom('drops')
          .leftJoin('drop_views', 'drop_views.slug', 'drops.slug')
          .select(['drops.view_count', 'drop_views.first_viewed_at', 'drop_views.last_viewed_at'])
          .select((eb) =>
            eb
              .selectFrom('drop_viewers')
              .select((s) => s.fn.countAll<number | string | bigint>().as('n'))
              .whereRef('drop_viewers.slug', '=', 'drops.slug')
              .as('unique_viewers'),
          )
          .where('drops.slug', '=', slug)
          .executeTakeFirst();
        if (drop === undefined) return undefined;
        return {
          views: Number(drop.view_count),
          uniqueViewers: Number(drop.unique_viewers ?? 0),
          firstViewedAt: nullableMs(drop.first_viewed_at),
          lastViewedAt: nullableMs(drop.last_viewed_at),
          versions: await listVersionStats(trx, slug),
        };
      });
}

/** Every existing version of a drop with its read receipts, newest first. */
async function listVersionStats(trx: Transaction<Database>, slug: string): Promise<VersionViewStats[]> {
  const rows = await trx
    .selectFrom('versions')
    .leftJoin('version_views', (join) =>
      join.onRef('version_views.slug', '=', 'versions.slug').onRef('version_views.version', '=', 'versions.version'),
    )
    .select([
      'versions.version',
      'version_views.views',
      'version_views.first_viewed_at',
      'version_views.last_viewed_at',
    ])
    .select((eb) =>
      eb
        .selectFrom('version_viewers')
        .select((s) => s.fn.countAll<number | string | bigint>().as('n'))
        .whereRef('version_viewers.slug', '=', 'versions.slug')
        .whereRef('version_viewers.version', '=', 'versions.version')
        .as('unique_viewers'),
    )
    .where('versions.slug', '=', slug)
    .orderBy('versions.version', 'desc')
    .execute();
  return rows.map((row) => ({
    version: Number(row.version),
    views: Number(row.views ?? 0),
    uniqueViewers: Number(row.unique_viewers ?? 0),
    firstViewedAt: nullableMs(row.first_viewed_at),
    lastViewedAt: nullableMs(row.last_viewed_at),
  }));
}
