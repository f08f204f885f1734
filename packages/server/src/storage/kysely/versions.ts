/**
 * Versions over Kysely: the one insert of a version row with its body and files, listing, reading one version's
 * details, HTML or files, and deleting one version (docs/api.md, "History and safe writers", "Many files in one
 * drop"). Each method's atomicity is stated on it in domain/store.ts; bodies are kept and released in
 * kysely/bodies.ts.
 */
import type { ExpressionBuilder, Insertable, Kysely, Transaction } from 'kysely';
import { isCompressible } from '../../domain/files.js';
import type { NewFile, NewVersion, Store } from '../../domain/store.js';
import type { DropRecord, VersionFile, VersionInfo } from '../../domain/types.js';
import { decodeBody, decodeBodyBytes, type StoredBody } from '../bodies.js';
import type { BodyEncoder } from '../body-encoder.js';
import type { Database, VersionFilesTable, VersionsTable } from '../schema.js';
import { type BodyUse, deleteVersionRows, keepBodies, keepBody, releaseBodies } from './bodies.js';
import { prepared, slot } from './prepared.js';
import { type Engine, reindexFromStore } from './search.js';
import { DROP_COLUMNS, inTransaction, Rollback, toDrop } from './shared.js';
import { insertWarnings } from './warnings.js';

export type VersionStore = Pick<
  Store,
  'listVersions' | 'getVersion' | 'getVersionContent' | 'listVersionFiles' | 'getVersionFile' | 'deleteVersion'
>;

/** A file about to be inserted: its path, type and body, encoded before the transaction began. */
export interface EncodedFile {
  readonly path: string;
  readonly contentType: string;
  readonly body: StoredBody;
}

/** A version about to be inserted: its details, its body and its files' bodies, encoded before the transaction began. */
export type EncodedVersion = Omit<NewVersion, 'html' | 'files'> & {
  readonly body: StoredBody;
  readonly files: readonly EncodedFile[];
};

type FileRow = Insertable<VersionFilesTable>;

/** A new version's files, hashed and compressed (when that pays) off the event loop, before its transaction. */
export async function encodeFiles(bodies: BodyEncoder, files: readonly NewFile[] | undefined): Promise<EncodedFile[]> {
  if (files === undefined || files.length === 0) return [];
  const stored = await bodies.encodeFiles(
    files.map((file) => ({ bytes: file.bytes, compress: isCompressible(file.contentType) })),
  );
  return files.map((file, i) => ({ path: file.path, contentType: file.contentType, body: stored[i] as StoredBody }));
}

/**
 * The one insert of a version row, with its body and its files' bodies kept (inserted or counted once more): version
 * 1 from createDrop, the number just issued from appendVersion. Runs after the caller locked the drop's (or the
 * account's) row. 'version_not_found' when the version whose files it copies (restore) is gone; nothing was written.
 */
export async function insertVersion(
  trx: Transaction<Database>,
  slug: string,
  version: number,
  content: EncodedVersion,
): Promise<'version_not_found' | undefined> {
  const copied = content.filesOf === undefined ? [] : await fileRowsOf(trx, slug, content.filesOf);
  if (copied === undefined) return 'version_not_found';
  const rows: FileRow[] = [
    ...content.files.map((file) => ({
      slug,
      version,
      path: file.path,
      body_hash: file.body.hash,
      size_bytes: file.body.sizeBytes,
      content_type: file.contentType,
    })),
    ...copied.map((row) => ({ ...row, version })),
  ];
  if (rows.length === 0) {
    await keepBody(trx, content.body);
  } else {
    const uses = new Map<string, BodyUse>();
    const use = (hash: string, body: StoredBody | undefined) => {
      const known = uses.get(hash);
      uses.set(hash, { body: known?.body ?? body, uses: (known?.uses ?? 0) + 1 });
    };
    use(content.body.hash, content.body);
    for (const file of content.files) use(file.body.hash, file.body);
    for (const row of copied) use(row.body_hash, undefined);
    await keepBodies(trx, uses);
  }
  await insertVersionRow(trx, {
    slug,
    version,
    body_hash: content.body.hash,
    size_bytes: content.sizeBytes,
    context: content.context,
    created_at: content.now,
  });
  await insertWarnings(trx, slug, version, content.warnings);
  for (let at = 0; at < rows.length; at += FILE_ROWS_PER_INSERT) {
    await trx
      .insertInto('version_files')
      .values(rows.slice(at, at + FILE_ROWS_PER_INSERT))
      .execute();
  }
  return undefined;
}

/** File rows per insert statement: six parameters each, well under every database's limit per statement. */
const FILE_ROWS_PER_INSERT = 200;

/** The file rows of an existing version, for a copy; undefined when the version does not exist. */
async function fileRowsOf(trx: Transaction<Database>, slug: string, version: number): Promise<FileRow[] | undefined> {
  const exists = await trx
    .selectFrom('versions')
    .select('version')
    .where('slug', '=', slug)
    .where('version', '=', version)
    .executeTakeFirst();
  if (exists === undefined) return undefined;
  return trx
    .selectFrom('version_files')
    .select(['slug', 'version', 'path', 'body_hash', 'size_bytes', 'content_type'])
    .where('slug', '=', slug)
    .where('version', '=', version)
    .execute();
}

const toFile = (row: Pick<VersionFilesTable, 'path' | 'size_bytes' | 'content_type' | 'body_hash'>): VersionFile => ({
  path: row.path,
  sizeBytes: Number(row.size_bytes),
  contentType: row.content_type,
  sha256: row.body_hash,
});

/** Whether the version row in scope has files: one indexed probe of version_files' key. */
const hasFiles = (eb: ExpressionBuilder<Database & { versions: VersionsTable }, 'versions'>) =>
  eb.exists(
    eb
      .selectFrom('version_files')
      .select('version_files.path')
      .whereRef('version_files.slug', '=', 'versions.slug')
      .whereRef('version_files.version', '=', 'versions.version'),
  );

/** Code-point order, the same on every database (a PostgreSQL collation may order paths otherwise). */
const byPath = (a: VersionFile, b: VersionFile) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

const VERSION_COLUMNS = ['slug', 'version', 'body_hash', 'size_bytes', 'context', 'created_at'] as const;

/** The insert of a version row, compiled once (kysely/prepared.ts). */
const insertVersionRow = prepared<Record<(typeof VERSION_COLUMNS)[number], unknown>>((db) =>
  db
    .insertInto('versions')
    .values(Object.fromEntries(VERSION_COLUMNS.map((column) => [column, slot(column)])) as Insertable<VersionsTable>),
);

export function versionStore(db: Kysely<Database>, engine: Engine): VersionStore {
  return {
    listVersions: listVersions(db),
    getVersion: getVersion(db),
    getVersionContent: getVersionContent(db),
    listVersionFiles: listVersionFiles(db),
    getVersionFile: getVersionFile(db),
    deleteVersion: deleteVersion(db, engine),
  };
}

function listVersionFiles(db: Kysely<Database>): Store['listVersionFiles'] {
  return async (slug, version) => {
    let query = db
      .selectFrom('version_files')
      .select(['version', 'path', 'size_bytes', 'content_type', 'body_hash'])
      .where('slug', '=', slug);
    if (version !== undefined) query = query.where('version', '=', version);
    const byVersion = new Map<number, VersionFile[]>();
    for (const row of await query.execute()) {
      const number = Number(row.version);
      const files = byVersion.get(number) ?? [];
      files.push(toFile(row));
      byVersion.set(number, files);
    }
    for (const files of byVersion.values()) files.sort(byPath);
    return byVersion;
  };
}

function getVersionFile(db: Kysely<Database>): Store['getVersionFile'] {
  return async (slug, version, path) => {
    let query = db
      .selectFrom('version_files')
      .innerJoin('bodies', 'bodies.hash', 'version_files.body_hash')
      .select([
        'version_files.version',
        'version_files.path',
        'version_files.size_bytes',
        'version_files.content_type',
        'version_files.body_hash',
        'bodies.codec',
        'bodies.data',
      ])
      .where('version_files.slug', '=', slug)
      .where('version_files.path', '=', path);
    query =
      version === undefined
        ? query.where('version_files.version', '=', (eb) =>
            eb.selectFrom('drops').select('latest_version').where('drops.slug', '=', slug),
          )
        : query.where('version_files.version', '=', version);
    const row = await query.executeTakeFirst();
    if (row === undefined) return undefined;
    return { version: Number(row.version), file: toFile(row), bytes: await decodeBodyBytes(row.codec, row.data) };
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
      .select((eb) => hasFiles(eb).as('has_files'))
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
      hasFiles: Boolean(row.has_files),
    };
  };
}

function getVersionContent(db: Kysely<Database>): Store['getVersionContent'] {
  return async (slug, version) => {
    let query = db
      .selectFrom('versions')
      .innerJoin('bodies', 'bodies.hash', 'versions.body_hash')
      .select(['versions.version', 'versions.created_at', 'bodies.codec', 'bodies.data'])
      .select((eb) => hasFiles(eb).as('has_files'))
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
    return { version: Number(row.version), html, createdAt: Number(row.created_at), hasFiles: Boolean(row.has_files) };
  };
}

function deleteVersion(db: Kysely<Database>, engine: Engine): Store['deleteVersion'] {
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
      // The latest version went: the one before it is what the drop is searched by now.
      if (version > Number(row.latest_version)) await reindexFromStore(trx, engine, slug);
      return toDrop(row);
    });
}
