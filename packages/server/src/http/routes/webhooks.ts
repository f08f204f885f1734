/**
 * The owner's webhook endpoints (docs/api.md, "Webhooks"): register (the secret in this answer only), list with the
 * last attempt, remove, and the log of the last 100 attempts. Deliveries themselves are the worker's
 * (webhooks/worker.ts).
 */
import { Type } from '@sinclair/typebox';
import { EVENT_TYPES } from '../../domain/events.js';
import type { DeliveryAttempt, WebhookRecord } from '../../domain/store.js';
import * as webhooks from '../../domain/webhooks.js';
import { callerOf } from '../caller.js';
import type { TypedApp } from '../typed-app.js';

export interface WebhookRouteDeps {
  readonly webhooks: webhooks.WebhookDeps;
}

const OWNER = { auth: 'owner' } as const;
const errors = { '4XX': { $ref: 'Error#' } };

export function presentAttempt(attempt: DeliveryAttempt) {
  return {
    event_id: attempt.eventId,
    type: attempt.type,
    at: attempt.at,
    status: attempt.outcome,
    http_status: attempt.httpStatus,
    error: attempt.error,
    duration_ms: attempt.durationMs,
    next_retry_at: attempt.nextRetryAt,
  };
}

export function presentWebhook(webhook: WebhookRecord, last?: DeliveryAttempt) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: [...webhook.events],
    slug: webhook.slug,
    created_at: webhook.createdAt,
    disabled_at: webhook.disabledAt,
    ...(last === undefined ? {} : { last_delivery: presentAttempt(last) }),
  };
}

const EventTypeSchema = Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)));

const Attempt = Type.Object({
  event_id: Type.String({ description: 'The `webhook-id` of the delivery, the same on every retry' }),
  type: Type.String(),
  at: Type.Integer(),
  status: Type.Union([Type.Literal('delivered'), Type.Literal('retrying'), Type.Literal('failed')]),
  http_status: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
  next_retry_at: Type.Union([Type.Integer(), Type.Null()]),
});

const Webhook = Type.Object({
  id: Type.String({ description: 'wh_ and 16 base62 characters' }),
  url: Type.String(),
  events: Type.Array(EventTypeSchema),
  slug: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.Integer(),
  disabled_at: Type.Union([Type.Integer(), Type.Null()]),
  last_delivery: Type.Optional(Attempt),
});

const CreateBody = Type.Object({
  url: Type.String({ maxLength: 2048, description: 'https:// and a public address' }),
  events: Type.Array(EventTypeSchema, { minItems: 1, maxItems: EVENT_TYPES.length * 2 }),
  slug: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
});

const IdParams = Type.Object({ id: Type.String({ maxLength: 40 }) });

export async function webhookRoutes(app: TypedApp, deps: WebhookRouteDeps): Promise<void> {
  app.post(
    '/api/webhooks',
    {
      config: OWNER,
      schema: {
        summary: 'Register a webhook endpoint; the signing secret is in this answer only',
        tags: ['webhooks'],
        body: CreateBody,
        response: { 201: Type.Composite([Webhook, Type.Object({ secret: Type.String() })]), ...errors },
      },
    },
    async (request, reply) => {
      const accountId = callerOf(request).account.id;
      const { webhook, secret } = await webhooks.createWebhook(deps.webhooks, accountId, request.body);
      return reply.code(201).send({ ...presentWebhook(webhook), secret });
    },
  );

  app.get(
    '/api/webhooks',
    {
      config: OWNER,
      schema: {
        summary: 'Your webhook endpoints, oldest first, each with its last delivery attempt',
        tags: ['webhooks'],
        response: { 200: Type.Object({ data: Type.Array(Webhook) }), ...errors },
      },
    },
    async (request) => {
      const accountId = callerOf(request).account.id;
      const list = await webhooks.listWebhooks(deps.webhooks, accountId);
      const lasts = await Promise.all(list.map((w) => deps.webhooks.store.listAttempts(w.id, 1)));
      return { data: list.map((w, i) => presentWebhook(w, lasts[i]?.[0])) };
    },
  );

  app.delete(
    '/api/webhooks/:id',
    {
      config: OWNER,
      schema: { summary: 'Remove a webhook endpoint', tags: ['webhooks'], params: IdParams, response: errors },
    },
    async (request, reply) => {
      await webhooks.deleteWebhook(deps.webhooks, callerOf(request).account.id, request.params.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/webhooks/:id/deliveries',
    {
      config: OWNER,
      schema: {
        summary: "The endpoint's last 100 delivery attempts, newest first",
        tags: ['webhooks'],
        params: IdParams,
        response: { 200: Type.Object({ data: Type.Array(Attempt) }), ...errors },
      },
    },
    async (request) => {
      const found = await webhooks.listDeliveries(deps.webhooks, callerOf(request).account.id, request.params.id);
      return { data: found.map(presentAttempt) };
    },
  );
}
