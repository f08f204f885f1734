/**
 * Idempotency keys over Kysely (docs/api.md, "Idempotency keys"): one row per account and key, claimed by an
 * insert-or-nothing, so that of concurrent requests with one key on any number of instances exactly one runs.
 */
import type { Kysely } from 'kysely';
import type { IdempotencyClaim, Store } from '../../domain/store.js';
import type { Database } from '../schema.js';

export type IdempotencyStore = Pick<
  Store,
  'claimIdempotencyKey' | 'renewIdempotencyKey' | 'completeIdempotencyKey' | 'releaseIdempotencyKey'
>;

export function idempotencyStore(db: Kysely<Database>): IdempotencyStore {
  return {
    claimIdempotencyKey: claim(db),
    async renewIdempotencyKey(ref, fingerprint, leaseUntil) {
      const renewed = await db
        .updateTable('idempotency_keys')
        .set({ locked_until: leaseUntil })
        .where('account_id', '=', ref.accountId)
        .where('key', '=', ref.key)
        .where('status', 'is', null)
        .where('fingerprint', '=', fingerprint)
        .executeTakeFirst();
      return renewed.numUpdatedRows === 1n;
    },
    async completeIdempotencyKey(ref, answer) {
      await db
        .updateTable('idempotency_keys')
        .set({ status: answer.status, body: answer.body, etag: answer.etag })
        .where('account_id', '=', ref.accountId)
        .where('key', '=', ref.key)
        .where('status', 'is', null)
        .execute();
    },
    async releaseIdempotencyKey(ref) {
      await db
        .deleteFrom('idempotency_keys')
        .where('account_id', '=', ref.accountId)
        .where('key', '=', ref.key)
        .where('status', 'is', null)
        .execute();
    },
  };
}

function claim(db: Kysely<Database>): Store['claimIdempotencyKey'] {
  return async (ref, fingerprint, { now, leaseUntil, expiresAt }) => {
    const fresh = {
      fingerprint,
      status: null,
      body: null,
      etag: null,
      locked_until: leaseUntil,
      expires_at: expiresAt,
    };
    // A row can vanish (purged) between the steps below; a second round then inserts it.
    for (let round = 0; round < 3; round += 1) {
      const inserted = await db
        .insertInto('idempotency_keys')
        .values({ account_id: ref.accountId, key: ref.key, ...fresh })
        .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return { kind: 'claimed' };
      // Taken over when the kept answer expired, or the running claim's lease lapsed with the same request.
      const retaken = await db
        .updateTable('idempotency_keys')
        .set(fresh)
        .where('account_id', '=', ref.accountId)
        .where('key', '=', ref.key)
        .where((eb) =>
          eb.or([
            eb('expires_at', '<=', now),
            eb.and([eb('status', 'is', null), eb('locked_until', '<=', now), eb('fingerprint', '=', fingerprint)]),
          ]),
        )
        .executeTakeFirst();
      if (retaken.numUpdatedRows === 1n) return { kind: 'claimed' };
      const row = await db
        .selectFrom('idempotency_keys')
        .select(['fingerprint', 'status', 'body', 'etag', 'locked_until'])
        .where('account_id', '=', ref.accountId)
        .where('key', '=', ref.key)
        .executeTakeFirst();
      if (row === undefined) continue;
      return found(row, fingerprint);
    }
    throw new Error('idempotency key kept vanishing while being claimed');
  };
}

function found(
  row: { fingerprint: string; status: number | null; body: string | null; etag: string | null; locked_until: number },
  fingerprint: string,
): IdempotencyClaim {
  if (row.fingerprint !== fingerprint) return { kind: 'reused' };
  if (row.status === null || row.body === null) return { kind: 'in_progress', leaseUntil: Number(row.locked_until) };
  return { kind: 'replay', answer: { status: Number(row.status), body: row.body, etag: row.etag } };
}
