/**
 * Webhook endpoints, their outbox and their log (migration 0016; domain/webhooks.ts). The outbox is claimed one row
 * at a time by a single UPDATE whose condition is checked again on the row it changes (a lease that is not held), so
 * of concurrent claims on any instance only one gets a row: on PostgreSQL the second update waits for the first and
 * then finds the lease held; on SQLite writes are serialised.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { EventType } from '../../domain/events.js';
import type { DeliveryAttempt, Store, WebhookRecord } from '../../domain/store.js';
import type { Database, WebhookAttemptsTable, WebhooksTable } from '../schema.js';

export type WebhookStorePart = Pick<
  Store,
  | 'createWebhook'
  | 'listWebhooks'
  | 'deleteWebhook'
  | 'findWebhook'
  | 'enqueueDeliveries'
  | 'claimDelivery'
  | 'recordAttempt'
  | 'listAttempts'
  | 'purgeDeliveries'
>;

const nullableNumber = (value: unknown) => (value === null || value === undefined ? null : Number(value));

function toWebhook(row: Selectable<WebhooksTable>): WebhookRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    events: JSON.parse(row.events) as EventType[],
    slug: row.slug,
    sealedSecret: row.sealed_secret,
    createdAt: Number(row.created_at),
    disabledAt: nullableNumber(row.disabled_at),
    failingSince: nullableNumber(row.failing_since),
  };
}

function toAttempt(row: Selectable<WebhookAttemptsTable>): DeliveryAttempt {
  return {
    eventId: row.delivery_id,
    type: row.type,
    at: Number(row.at),
    outcome: row.outcome,
    httpStatus: nullableNumber(row.http_status),
    error: row.error,
    durationMs: Number(row.duration_ms),
    nextRetryAt: nullableNumber(row.next_retry_at),
  };
}

export function webhookStore(db: Kysely<Database>): WebhookStorePart {
  return {
    async createWebhook(webhook) {
      await db
        .insertInto('webhooks')
        .values({
          id: webhook.id,
          account_id: webhook.accountId,
          url: webhook.url,
          events: JSON.stringify(webhook.events),
          slug: webhook.slug,
          sealed_secret: webhook.sealedSecret,
          created_at: webhook.createdAt,
          disabled_at: webhook.disabledAt,
          failing_since: webhook.failingSince,
        })
        .execute();
    },

    async listWebhooks(accountId) {
      const rows = await db
        .selectFrom('webhooks')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toWebhook);
    },

    async deleteWebhook(accountId, id) {
      return db.transaction().execute(async (trx) => {
        // Explicitly, not only by the foreign keys' cascade: SQLite enforces them only when asked to.
        const owned = await trx
          .selectFrom('webhooks')
          .select('id')
          .where('id', '=', id)
          .where('account_id', '=', accountId)
          .executeTakeFirst();
        if (owned === undefined) return false;
        await trx.deleteFrom('webhook_attempts').where('webhook_id', '=', id).execute();
        await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
        await trx.deleteFrom('webhooks').where('id', '=', id).execute();
        return true;
      });
    },

    async findWebhook(id) {
      const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : toWebhook(row);
    },

    async enqueueDeliveries(deliveries) {
      if (deliveries.length === 0) return;
      await db
        .insertInto('webhook_deliveries')
        .values(
          deliveries.map((d) => ({
            id: d.id,
            webhook_id: d.webhookId,
            type: d.type,
            body: d.body,
            created_at: d.createdAt,
            state: 'pending' as const,
            attempts: 0,
            next_attempt_at: d.createdAt,
            lease_until: null,
          })),
        )
        .execute();
    },

    async claimDelivery(now, leaseUntil) {
      const due = db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
        .select('d.id')
        .where('d.state', '=', 'pending')
        .where('d.next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<=', now)]))
        .where('w.disabled_at', 'is', null)
        .orderBy('d.next_attempt_at')
        .limit(1);
      const claimed = await db
        .updateTable('webhook_deliveries')
        .set((eb) => ({ lease_until: leaseUntil, attempts: eb('attempts', '+', 1) }))
        .where('id', '=', due)
        .where('state', '=', 'pending')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
        .returning(['id', 'webhook_id', 'type', 'body', 'created_at', 'attempts'])
        .executeTakeFirst();
      if (claimed === undefined) return undefined;
      const webhook = await db
        .selectFrom('webhooks')
        .select(['url', 'sealed_secret'])
        .where('id', '=', claimed.webhook_id)
        .executeTakeFirst();
      if (webhook === undefined) return undefined;
      return {
        id: claimed.id,
        webhookId: claimed.webhook_id,
        type: claimed.type as EventType | 'webhook.test',
        body: claimed.body,
        createdAt: Number(claimed.created_at),
        attempts: Number(claimed.attempts),
        url: webhook.url,
        sealedSecret: webhook.sealed_secret,
      };
    },

    async recordAttempt(deliveryId, attempt) {
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('webhook_attempts')
          .values({
            id: randomBytes(12).toString('base64url'),
            webhook_id: attempt.webhookId,
            delivery_id: deliveryId,
            type: attempt.type,
            at: attempt.at,
            outcome: attempt.outcome,
            http_status: attempt.httpStatus,
            error: attempt.error,
            duration_ms: attempt.durationMs,
            next_retry_at: attempt.nextRetryAt,
          })
          .execute();
        await trx
          .updateTable('webhook_deliveries')
          .set({
            state: attempt.outcome === 'retrying' ? 'pending' : attempt.outcome,
            next_attempt_at: attempt.nextRetryAt ?? attempt.at,
            lease_until: null,
          })
          .where('id', '=', deliveryId)
          .execute();
        if (attempt.outcome === 'delivered') {
          await trx.updateTable('webhooks').set({ failing_since: null }).where('id', '=', attempt.webhookId).execute();
        } else {
          await trx
            .updateTable('webhooks')
            .set((eb) => ({
              failing_since: eb.fn.coalesce('failing_since', eb.val(attempt.at)),
              disabled_at: eb
                .case()
                .when(
                  eb.and([
                    eb('disabled_at', 'is', null),
                    eb('failing_since', '<=', attempt.at - attempt.disableAfterMs),
                  ]),
                )
                .then(eb.val(attempt.at))
                .else(eb.ref('disabled_at'))
                .end(),
            }))
            .where('id', '=', attempt.webhookId)
            .execute();
        }
        // The log keeps the newest `keep` attempts of the endpoint.
        const cut = await trx
          .selectFrom('webhook_attempts')
          .select('at')
          .where('webhook_id', '=', attempt.webhookId)
          .orderBy('at', 'desc')
          .offset(attempt.keep - 1)
          .limit(1)
          .executeTakeFirst();
        if (cut !== undefined) {
          await trx
            .deleteFrom('webhook_attempts')
            .where('webhook_id', '=', attempt.webhookId)
            .where('at', '<', Number(cut.at))
            .execute();
        }
      });
    },

    async listAttempts(webhookId, limit) {
      const rows = await db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('webhook_id', '=', webhookId)
        .orderBy('at', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toAttempt);
    },

    async purgeDeliveries(before) {
      await db
        .deleteFrom('webhook_deliveries')
        .where('state', '<>', 'pending')
        .where('created_at', '<', before)
        .execute();
    },
  };
}
