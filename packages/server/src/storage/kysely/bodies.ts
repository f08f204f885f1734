/**
 * Stored bodies over Kysely (docs/decisions/0027-compressed-deduplicated-bodies.md, 0033-many-files-in-one-drop.md):
 * each distinct content (a version's HTML, a file) is one row of `bodies`, counted by the rows that use it (versions
 * and version files). Every function here runs inside the caller's transaction, after every other row it locks: the
 * lock order is the drop's row, the account's row, then bodies in hash order (a create locks the account, then its
 * bodies), so two writers never wait for each other in a cycle.
 */
import type { Kysely, Transaction } from 'kysely';
import { decodeBody, type StoredBody } from '../bodies.js';
import type { Database } from '../schema.js';
import { prepared, slot } from './prepared.js';

/**
 * Counts one more version using `body`, inserting it when no version uses it yet. One statement (insert, or on
 * conflict increment), atomic on both databases: of concurrent writers of the same bytes one inserts, the others
 * increment, and a writer racing the delete of the last user waits for it and then inserts afresh.
 */
export async function keepBody(trx: Transaction<Database>, body: StoredBody, uses = 1): Promise<void> {
  await upsertBody(trx, { hash: body.hash, codec: body.codec, data: body.data, size: body.sizeBytes, uses });
}

/** The insert-or-count of keepBody, compiled once (kysely/prepared.ts). */
const upsertBody = prepared<{ hash: string; codec: string; data: Buffer; size: number; uses: number }>((db) =>
  db
    .insertInto('bodies')
    .values({
      hash: slot('hash'),
      codec: slot('codec'),
      data: slot('data'),
      size_bytes: slot('size'),
      refs: slot('uses'),
    })
    .onConflict((oc) =>
      oc.column('hash').doUpdateSet((eb) => ({ refs: eb('bodies.refs', '+', slot<number>('uses')) })),
    ),
);

/** Counts `uses` more users of a stored body; how many rows it changed (0: no such body). Compiled once. */
const countBody = prepared<{ hash: string; uses: number }>((db) =>
  db
    .updateTable('bodies')
    .set((eb) => ({ refs: eb('refs', '+', slot<number>('uses')) }))
    .where('hash', '=', slot<string>('hash')),
);

/**
 * Above this size a file's body is first only counted, and its bytes sent to the database only when it is not
 * stored yet: republishing a folder with one file changed then moves that file's bytes alone.
 */
const COUNT_FIRST_BYTES = 65_536;

/** How a new version uses a body: `uses` rows of it; `body` when it was encoded now, absent when copied (restore). */
export interface BodyUse {
  readonly body: StoredBody | undefined;
  readonly uses: number;
}

/**
 * Keeps every body a new version uses, in hash order (the lock order above): an encoded one is inserted or counted,
 * a copied one (whose rows the caller's drop lock keeps alive) counted. Atomic per body as keepBody.
 */
export async function keepBodies(trx: Transaction<Database>, uses: ReadonlyMap<string, BodyUse>): Promise<void> {
  for (const hash of [...uses.keys()].sort()) {
    const { body, uses: count } = uses.get(hash) as BodyUse;
    if (body === undefined || body.data.length > COUNT_FIRST_BYTES) {
      const counted = await countBody(trx, { hash, uses: count });
      if (counted.numAffectedRows !== 0n) continue;
      if (body === undefined) throw new Error(`the stored body ${hash} of a copied file is gone`);
    }
    await keepBody(trx, body, count);
  }
}

/**
 * Counts `uses` fewer versions of each body, and deletes the bodies nothing uses any more. Each decrement locks its
 * row until the transaction ends, so no writer can start using a body between its last release and its delete.
 */
export async function releaseBodies(trx: Transaction<Database>, uses: ReadonlyMap<string, number>): Promise<void> {
  for (const hash of [...uses.keys()].sort()) {
    const count = uses.get(hash) ?? 0;
    const row = await trx
      .updateTable('bodies')
      .set((eb) => ({ refs: eb('refs', '-', count) }))
      .where('hash', '=', hash)
      .returning('refs')
      .executeTakeFirst();
    if (row !== undefined && Number(row.refs) <= 0) await trx.deleteFrom('bodies').where('hash', '=', hash).execute();
  }
}

/**
 * Deletes the versions of `slug` (all of them, or only `version`) with their files and previews, and returns how many of those
 * rows used each body, for releaseBodies. The caller holds the drop's row, so no version of it can be added meanwhile.
 */
export async function deleteVersionRows(
  trx: Transaction<Database>,
  slug: string,
  version?: number,
): Promise<Map<string, number>> {
  // The files and previews first: the foreign keys would otherwise delete them with their version, uncounted.
  let files = trx.deleteFrom('version_files').where('slug', '=', slug);
  let previews = trx.deleteFrom('version_previews').where('slug', '=', slug);
  let versions = trx.deleteFrom('versions').where('slug', '=', slug);
  if (version !== undefined) {
    files = files.where('version', '=', version);
    previews = previews.where('version', '=', version);
    versions = versions.where('version', '=', version);
  }
  const uses = new Map<string, number>();
  const count = (hash: string) => uses.set(hash, (uses.get(hash) ?? 0) + 1);
  for (const row of await files.returning('body_hash').execute()) count(row.body_hash);
  for (const row of await previews.returning('body_hash').execute()) count(row.body_hash);
  const deleted = await versions.returning('body_hash').execute();
  for (const row of deleted) count(row.body_hash);
  // No version deleted: nothing is (its files could not exist without it).
  return deleted.length === 0 ? new Map() : uses;
}

/** The HTML of a stored body, or undefined when no such body exists. */
export async function readBody(db: Kysely<Database>, hash: string): Promise<string | undefined> {
  const row = await db.selectFrom('bodies').select(['codec', 'data']).where('hash', '=', hash).executeTakeFirst();
  return row === undefined ? undefined : decodeBody(row.codec, row.data);
}
