/**
 * What the look before publishing found in each version (migration 0014; domain/scan.ts): kept in the transaction
 * that inserts the version, so a version and its findings exist together, and deleted with it (a foreign key that
 * cascades). Only masked findings reach this module.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Finding } from '../../domain/scan.js';
import type { Store } from '../../domain/store.js';
import type { Database } from '../schema.js';

export type WarningStorePart = Pick<Store, 'listVersionWarnings'>;

/** Keeps the findings of a version just inserted in this transaction; nothing for a clean version. */
export async function insertWarnings(
  trx: Transaction<Database>,
  slug: string,
  version: number,
  warnings: readonly Finding[] | undefined,
): Promise<void> {
  if (warnings === undefined || warnings.length === 0) return;
  await trx
    .insertInto('version_warnings')
    .values({ slug, version, findings: JSON.stringify(warnings) })
    .execute();
}

export function warningStore(db: Kysely<Database>): WarningStorePart {
  return {
    async listVersionWarnings(slug) {
      const rows = await db
        .selectFrom('version_warnings')
        .select(['version', 'findings'])
        .where('slug', '=', slug)
        .execute();
      return new Map(rows.map((row) => [Number(row.version), JSON.parse(row.findings) as Finding[]]));
    },
  };
}
