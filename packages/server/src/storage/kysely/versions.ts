/**
 * Versions over Kysely: the one insert of a version row with its body, listing, reading one version's details or
 * HTML, and deleting one version (docs/api.md, "History and safe writers"). Each method's atomicity is stated on it
 * in domain/store.ts; bodies are kept and released in kysely/bodies.ts.
 */
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { NewVersion, Store } from '../../domain/store.js';
import type { DropRecord, VersionInfo } from '../../domain/types.js';
import { decodeBody, type StoredBody } from '../bodies.js';
import type { Database, VersionsTable } from '../schema.js';
import { deleteVersionRows, keepBody, releaseBodies } from './bodies.js';
import { prepared, slot } from './prepared.js';
import { DROP_COLUMNS, inTransaction, Rollback, toDrop } from './shared.js';
import { insertWarnings } from './warnings.js';

export type VersionStore = Pick<Store, 'listVersions' | 'getVersion' | 'getVersionContent' | 'deleteVersion'>;

/** A version about to be inserted: its details and its body, encoded before the transaction began. */
export type EncodedVersion = Omit<NewVersion, 'html'> & { readonly body: StoredBody };

/**
 * The one insert of a version row, with its body kept (inserted or counted once more): version 1 from createDrop,
 * the number just issued from appendVersion. Runs after the caller locked the drop's (or the account's) row.
 */
export async function insertVersion(
  trx: Transaction<Database>,
  slug: string,
  version: number,
  content: EncodedVersion,
): Promise<void> {
  await keepBody(trx, content.body);
  await insertVersionRow(trx, {
    slug,
    version,
    body_hash: content.body.hash,
    size_bytes: content.sizeBytes,
    context: content.context,
    created_at: content.now,
  });
  await insertWarnings(trx, slug, version, content.warnings);
}

const VERSION_COLUMNS = ['slug', 'version', 'body_hash', 'size_bytes', 'context', 'created_at'] as const;

/** The insert of a version row, compiled once (kysely/prepared.ts). */
const insertVersionRow = prepared<Record<(typeof VERSION_COLUMNS)[number], unknown>>((db) =>
  db
    .insertInto('versions')
    .values(Object.fromEntries(VERSION_COLUMNS.map((column) => [column, slot(column)])) as Insertable<VersionsTable>),
);

export function versionStore(db: Kysely<Database>): VersionStore {
  return {
    listVersions: listVersions(db),
    getVersion: getVersion(db),
    getVersionContent: getVersionContent(db),
    deleteVersion: deleteVersion(db),
  };
}

function listVersions(db: Kysely<Database>): Store['listVersions'] {
  return async (slug) => {
    const rows = await db
      .selectFrom('versions')
      .select(['slug', 'version', 'size_bytes', 'created_at'])
      .select((eb) => eb('context', 'is not', null).as('has_context'))
      .where('slug', '=', slug)
      .orderBy('version', 'desc')
      .execute();
    return rows.map(
      (row): VersionInfo => ({
        slug: row.slug,
        version: Number(row.version),
        sizeBytes: Number(row.size_bytes),
        hasContext: Boolean(row.has_context),
        createdAt: Number(row.created_at),
      }),
    );
  };
}

function getVersion(db: Kysely<Database>): Store['getVersion'] {
  return async (slug, version) => {
    const row = await db
      .selectFrom('versions')
      .select(['slug', 'version', 'size_bytes', 'context', 'created_at'])
      .where('slug', '=', slug)
      .where('version', '=', version)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      slug: row.slug,
      version: Number(row.version),
      sizeBytes: Number(row.size_bytes),
      hasContext: row.context !== null,
      context: row.context,
      createdAt: Number(row.created_at),
    };
  };
}

function getVersionContent(db: Kysely<Database>): Store['getVersionContent'] {
  return async (slug, version) => {
    let query = db
      .selectFrom('versions')
      .innerJoin('bodies', 'bodies.hash', 'versions.body_hash')
      .select(['versions.version', 'versions.created_at', 'bodies.codec', 'bodies.data'])
      .where('versions.slug', '=', slug);
    query =
      version === undefined
        ? query.where('versions.version', '=', (eb) =>
            eb.selectFrom('drops').select('latest_version').where('drops.slug', '=', slug),
          )
        : query.where('versions.version', '=', version);
    const row = await query.executeTakeFirst();
    if (row === undefined) return undefined;
    const html = await decodeBody(row.codec, row.data);
    return { version: Number(row.version), html, createdAt: Number(row.created_at) };
  };
}

function deleteVersion(db: Kysely<Database>): Store['deleteVersion'] {
  type Result = DropRecord | 'not_found' | 'version_not_found' | 'last_version';
  return (slug, version, now) =>
    inTransaction<Result, Result>(db, async (trx) => {
      // The conditional decrement takes the drop's row lock first, so concurrent deletes serialize on it.
      const kept = await trx
        .updateTable('drops')
        .set((eb) => ({ version_count: eb('version_count', '-', 1), updated_at: now }))
        .where('slug', '=', slug)
        .where('version_count', '>', 1)
        .executeTakeFirst();
      if (kept.numUpdatedRows === 0n) {
        const drop = await trx.selectFrom('drops').select('slug').where('slug', '=', slug).executeTakeFirst();
        if (drop === undefined) return 'not_found';
        const exists = await trx
          .selectFrom('versions')
          .select('version')
          .where('slug', '=', slug)
          .where('version', '=', version)
          .executeTakeFirst();
        return exists === undefined ? 'version_not_found' : 'last_version';
      }
      const uses = await deleteVersionRows(trx, slug, version);
      if (uses.size === 0) throw new Rollback<Result>('version_not_found');
      await releaseBodies(trx, uses);
      const row = await trx
        .updateTable('drops')
        .set((eb) => ({
          latest_version: eb
            .selectFrom('versions')
            .select((v) => v.fn.max('version').as('m'))
            .where('versions.slug', '=', slug),
        }))
        .where('slug', '=', slug)
        .returning(DROP_COLUMNS)
        .executeTakeFirstOrThrow();
      return toDrop(row);
    });
}
