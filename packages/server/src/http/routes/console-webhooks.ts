/**
 * The console's Webhooks page (docs/console.md, "Webhooks"): GET /console/webhooks; POST /console/webhooks (add, the
 * secret on the answer), POST /console/webhooks/<id>/test and /remove. Origin, session and CSRF are checked by the
 * console kit before anything is done.
 */
import type { FastifyRequest } from 'fastify';
import { EVENT_TYPES } from '../../domain/events.js';
import * as webhooks from '../../domain/webhooks.js';
import { formField } from '../forms.js';
import { webhooksPage } from '../pages/console-webhooks.js';
import type { TypedApp } from '../typed-app.js';
import { type ConsoleKit, type ConsoleRouteDeps, doneOf, type Visit } from './console-kit.js';

/** The page's rows: each endpoint with its newest attempt. */
async function rows(deps: ConsoleRouteDeps, accountId: string) {
  const list = await webhooks.listWebhooks(deps.webhooks, accountId);
  const lasts = await Promise.all(list.map((w) => deps.webhooks.store.listAttempts(w.id, 1)));
  return list.map((webhook, i) => ({ webhook, last: lasts[i]?.[0] }));
}

/** The ticked event checkboxes (one field each, `event-<type>`: a form body keeps one value per name). */
function fieldValues(body: unknown): string[] {
  return EVENT_TYPES.filter((type) => formField(body, `event-${type}`) === 'on');
}

const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

export function registerWebhookPages(app: TypedApp, kit: ConsoleKit, deps: ConsoleRouteDeps): void {
  const hide = { schema: { hide: true } };
  const page = async (v: Visit, extra: Partial<Parameters<typeof webhooksPage>[0]> = {}) =>
    webhooksPage({ who: v.who, nonce: v.nonce, webhooks: await rows(deps, v.session.accountId), ...extra });
  app.get(
    '/console/webhooks',
    hide,
    kit.page(async (v, request, reply) => kit.show(reply, v, await page(v, doneOf(request)))),
  );
  app.post(
    '/console/webhooks',
    hide,
    kit.action({
      write: false,
      async run(session, request, v) {
        const slug = formField(request.body, 'slug').trim();
        const { webhook, secret } = await webhooks.createWebhook(deps.webhooks, session.accountId, {
          url: formField(request.body, 'url').trim(),
          events: fieldValues(request.body),
          ...(slug === '' ? {} : { slug }),
        });
        return { page: await page(v, { created: { id: webhook.id, secret } }) };
      },
      async refused(v, request, message) {
        const form = {
          url: formField(request.body, 'url'),
          events: fieldValues(request.body),
          slug: formField(request.body, 'slug'),
        };
        return page(v, { error: message, form });
      },
    }),
  );
  app.post(
    '/console/webhooks/:id/test',
    hide,
    kit.action({
      write: false,
      async run(session, request) {
        await webhooks.sendTestEvent(deps.webhooks, session.accountId, idOf(request));
        return '/console/webhooks?done=webhook-test';
      },
      refused: (v, _request, message) => page(v, { error: message }),
    }),
  );
  app.post(
    '/console/webhooks/:id/remove',
    hide,
    kit.action({
      write: false,
      async run(session, request) {
        await webhooks.deleteWebhook(deps.webhooks, session.accountId, idOf(request));
        return '/console/webhooks?done=webhook-removed';
      },
      refused: (v, _request, message) => page(v, { error: message }),
    }),
  );
}
