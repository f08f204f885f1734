/**
 * Moving a single-machine deployment to PostgreSQL: `htmldrop-server migrate-data --from <sqlite> --to <postgres>`.
 * Copies every table in one target transaction (all or nothing), then verifies row counts and a content hash of
 * every table on both sides. The search index is rebuilt on the target in that transaction, from the copied drops.
 * The source is only read.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Kysely } from 'kysely';
import { bodyHash, decodeBodyBytes } from './bodies.js';
import { indexUnindexedDrops } from './kysely/search.js';
import { createKyselyStore } from './kysely-store.js';
import { openPostgres } from './postgres.js';
import type { Database } from './schema.js';
import { openSqliteFile } from './sqlite.js';

/** Tables in dependency order, each with the key that orders it for paging and hashing. */
const TABLES = [
  { name: 'settings', key: ['key'] },
  { name: 'accounts', key: ['id'] },
  { name: 'tokens', key: ['id'] },
  { name: 'drops', key: ['slug'] },
  { name: 'imported_drops', key: ['account_id', 'source'] },
  { name: 'bodies', key: ['hash'] },
  { name: 'versions', key: ['slug', 'version'] },
  { name: 'version_warnings', key: ['slug', 'version'] },
  { name: 'version_files', key: ['slug', 'version', 'path'] },
  { name: 'version_previews', key: ['slug', 'version'] },
  { name: 'drop_views', key: ['slug'] },
  { name: 'drop_viewers', key: ['slug', 'viewer'] },
  { name: 'version_views', key: ['slug', 'version'] },
  { name: 'version_viewers', key: ['slug', 'version', 'viewer'] },
  { name: 'comments', key: ['id'] },
  { name: 'device_requests', key: ['id'] },
  { name: 'rate_windows', key: ['key'] },
  { name: 'idempotency_keys', key: ['account_id', 'key'] },
  { name: 'oauth_clients', key: ['id'] },
  { name: 'oauth_codes', key: ['hash'] },
  { name: 'recipient_links', key: ['id'] },
  { name: 'access_log', key: ['id'] },
  { name: 'webhooks', key: ['id'] },
  { name: 'webhook_deliveries', key: ['id'] },
  { name: 'webhook_attempts', key: ['id'] },
] as const satisfies ReadonlyArray<{ name: keyof Database; key: readonly string[] }>;

type TableName = (typeof TABLES)[number]['name'];
type Row = Record<string, unknown>;

/** Rows per batch; bodies carry up to 2 MiB of (compressed) HTML each, so they move in smaller batches. */
const batchSize = (table: TableName) => (table === 'bodies' ? 20 : 500);

export interface TableReport {
  readonly table: TableName;
  readonly rows: number;
  readonly sha256: string;
}

/** Normalises a value so both databases hash alike (PostgreSQL returns bigint as text). */
function canonical(value: unknown): string {
  if (value === null || value === undefined) return '\u0000null';
  // Stored bodies (bytes on both sides): compared exactly; their hash column names the content they must hold.
  if (value instanceof Uint8Array) return `\u0000bytes:${Buffer.from(value).toString('base64')}`;
  if (typeof value === 'bigint' || typeof value === 'number') return String(Number(value));
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (/^-?\d+$/.test(String(value))) return String(Number(value));
  return String(value);
}

/** Reads a table in key order, batch by batch (never the whole table in memory). */
async function* readTable(db: Kysely<Database>, table: TableName): AsyncGenerator<Row[]> {
  const spec = TABLES.find((t) => t.name === table);
  const key = spec?.key ?? [];
  const loose = db as unknown as Kysely<Record<string, Row>>;
  for (let offset = 0; ; offset += batchSize(table)) {
    let query = loose.selectFrom(table).selectAll();
    for (const column of key) query = query.orderBy(column);
    const rows = (await query.limit(batchSize(table)).offset(offset).execute()) as Row[];
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < batchSize(table)) return;
  }
}

async function summarize(db: Kysely<Database>, table: TableName): Promise<TableReport> {
  const hash = createHash('sha256');
  let rows = 0;
  for await (const batch of readTable(db, table)) {
    for (const row of batch) {
      rows++;
      for (const column of Object.keys(row).sort()) hash.update(`${column}=${canonical(row[column])}\u0001`);
      hash.update('\u0002');
    }
  }
  return { table, rows, sha256: hash.digest('hex') };
}

/** Every stored body of `db` decompresses to the content its hash names; throws naming the first that does not. */
async function verifyBodies(db: Kysely<Database>): Promise<number> {
  let checked = 0;
  for await (const batch of readTable(db, 'bodies')) {
    for (const row of batch) {
      const bytes = await decodeBodyBytes(String(row.codec), row.data as Uint8Array);
      if (bodyHash(bytes) !== row.hash)
        throw new MigrateDataError(`the body ${String(row.hash)} does not match its hash`);
      checked++;
    }
  }
  return checked;
}

export class MigrateDataError extends Error {
  override readonly name = 'MigrateDataError';
}

/**
 * Copies `fromFile` (SQLite) into `toUrl` (PostgreSQL), which must hold no htmldrop data yet.
 * Returns the per-table report after verifying that counts and hashes match.
 */
export async function migrateData(
  fromFile: string,
  toUrl: string,
  log: (line: string) => void,
): Promise<TableReport[]> {
  if (!fs.existsSync(fromFile)) throw new MigrateDataError(`no SQLite database at ${fromFile}`);
  const sourceDialect = openSqliteFile(fromFile);
  const targetDialect = openPostgres(toUrl);
  const source = createKyselyStore(sourceDialect);
  const target = createKyselyStore(targetDialect);
  try {
    // Bring both to the same schema version first.
    await source.migrate();
    await target.migrate();
    const existing = await targetDialect.db.selectFrom('accounts').select('id').limit(1).execute();
    if (existing.length > 0)
      throw new MigrateDataError('the target database already holds htmldrop data; use an empty one');

    await targetDialect.db.transaction().execute(async (trx) => {
      const loose = trx as unknown as Kysely<Record<string, Row>>;
      // Settings may exist already (the target's own migration run can create none, but be safe): replace them.
      await loose.deleteFrom('settings').execute();
      for (const { name } of TABLES) {
        let copied = 0;
        for await (const batch of readTable(sourceDialect.db, name)) {
          await loose.insertInto(name).values(batch).execute();
          copied += batch.length;
        }
        log(`copied ${copied} ${name}`);
      }
      // The search index is made from what was copied, not copied (docs/decisions/0037): an FTS5 table is not a
      // PostgreSQL table. In the same transaction: all or nothing.
      log(`indexed ${await indexUnindexedDrops(trx, 'postgres')} drops for search`);
    });

    const reports: TableReport[] = [];
    for (const { name } of TABLES) {
      const [before, after] = await Promise.all([summarize(sourceDialect.db, name), summarize(targetDialect.db, name)]);
      if (before.rows !== after.rows || before.sha256 !== after.sha256) {
        throw new MigrateDataError(
          `verification failed for ${name}: ${before.rows} rows (${before.sha256.slice(0, 12)}) in the source, ${after.rows} rows (${after.sha256.slice(0, 12)}) in the target`,
        );
      }
      log(`verified ${name}: ${after.rows} rows, sha256 ${after.sha256.slice(0, 16)}`);
      reports.push(after);
    }
    log(`verified ${await verifyBodies(targetDialect.db)} bodies against their content hashes`);
    return reports;
  } finally {
    await Promise.all([source.close(), target.close()]);
  }
}
