/**
 * Version bodies over Kysely (docs/decisions/0027-compressed-deduplicated-bodies.md): each distinct HTML is one row of
 * `bodies`, counted by the versions that use it. Every function here runs inside the caller's transaction, after
 * every other row it locks: the lock order is the drop's row, the account's row, then bodies in hash order (a create
 * locks the account, then its body), so two writers never wait for each other in a cycle.
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
export async function keepBody(trx: Transaction<Database>, body: StoredBody): Promise<void> {
  await upsertBody(trx, { hash: body.hash, codec: body.codec, data: body.data, size: body.sizeBytes });
}

/** The insert-or-count of keepBody, compiled once (kysely/prepared.ts). */
const upsertBody = prepared<{ hash: string; codec: string; data: Buffer; size: number }>((db) =>
  db
    .insertInto('bodies')
    .values({ hash: slot('hash'), codec: slot('codec'), data: slot('data'), size_bytes: slot('size'), refs: 1 })
    .onConflict((oc) => oc.column('hash').doUpdateSet((eb) => ({ refs: eb('bodies.refs', '+', 1) }))),
);

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
 * Deletes the versions of `slug` (all of them, or only `version`) and returns how many of them used each body, for
 * releaseBodies. The caller holds the drop's row, so no version of it can be added meanwhile.
 */
export async function deleteVersionRows(
  trx: Transaction<Database>,
  slug: string,
  version?: number,
): Promise<Map<string, number>> {
  let query = trx.deleteFrom('versions').where('slug', '=', slug);
  if (version !== undefined) query = query.where('version', '=', version);
  const uses = new Map<string, number>();
  for (const row of await query.returning('body_hash').execute()) {
    uses.set(row.body_hash, (uses.get(row.body_hash) ?? 0) + 1);
  }
  return uses;
}

/** The HTML of a stored body, or undefined when no such body exists. */
export async function readBody(db: Kysely<Database>, hash: string): Promise<string | undefined> {
  const row = await db.selectFrom('bodies').select(['codec', 'data']).where('hash', '=', hash).executeTakeFirst();
  return row === undefined ? undefined : decodeBody(row.codec, row.data);
}
