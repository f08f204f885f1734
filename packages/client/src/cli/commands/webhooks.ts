/**
 * `htmldrop webhooks add|list|rm|deliveries` (docs/api.md, "Webhooks"): endpoints that hear about your drops, signed
 * as Standard Webhooks.
 */
import type { WebhookDelivery, WebhookEventType, WebhookInfo } from '../../types.js';
import { list, positional, str, usage } from '../args.js';
import type { Command, Context } from '../context.js';
import { table, when } from '../format.js';

const EVENT_TYPES: readonly WebhookEventType[] = [
  'drop.created',
  'drop.version_created',
  'drop.deleted',
  'comment.created',
  'comment.resolved',
  'access.refused',
  'drop.viewed',
];

/** `--events a,b --events c`, or `all`. */
function eventsOption(values: Parameters<Command['run']>[1]): WebhookEventType[] {
  const given = list(values, 'events')
    .flatMap((v) => v.split(','))
    .map((v) => v.trim());
  if (given.length === 0) throw usage(`webhooks add: --events is required (${EVENT_TYPES.join(', ')}, or all).`);
  if (given.includes('all')) return [...EVENT_TYPES];
  const unknown = given.filter((e) => !(EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length > 0) throw usage(`webhooks add: unknown event ${unknown.join(', ')} (${EVENT_TYPES.join(', ')}).`);
  return [...new Set(given as WebhookEventType[])];
}

const lastOf = (w: WebhookInfo) =>
  w.last_delivery === undefined ? '-' : `${w.last_delivery.status} ${when(w.last_delivery.at)}`;

function deliveryRow(d: WebhookDelivery): string[] {
  return [
    d.event_id,
    d.type,
    when(d.at),
    d.http_status === null ? d.status : `${d.status} (${d.http_status})`,
    `${d.duration_ms} ms`,
    d.next_retry_at === null ? '-' : when(d.next_retry_at),
    d.error ?? '',
  ];
}

async function add(ctx: Context, values: Parameters<Command['run']>[1], args: string[]) {
  const url = positional(args, 1, 'url', 'webhooks add');
  const events = eventsOption(values);
  const slug = str(values, 'slug');
  const { client } = await ctx.authenticated();
  const made = await client.createWebhook({ url, events, ...(slug === undefined ? {} : { slug }) });
  ctx.out.result(made, () =>
    [
      `Added ${made.id}: ${made.events.join(', ')} from ${made.slug ?? 'every drop of yours'} to ${made.url}.`,
      `Secret (shown this once; verify deliveries with any Standard Webhooks library): ${made.secret}`,
    ].join('\n'),
  );
}

/** `htmldrop webhooks`. */
export const webhooks: Command = {
  usage: 'webhooks (add <url> --events <types> [--slug <slug>] | list | rm <id> | deliveries <id>)',
  summary: 'Add, list and remove webhooks, and see their deliveries',
  help: `Webhooks tell other systems (chat, CI, tickets) what happens to your drops: a signed POST (Standard Webhooks:
webhook-id, webhook-timestamp, webhook-signature) to a public https:// URL, retried for 24 hours.

  add <url> --events <types>  register an endpoint; <types> separated by commas, or all:
                              ${EVENT_TYPES.join(', ')}
    --slug <slug>             only this drop's events (default: every drop of yours)
                              The secret is printed this once.
  list                        your endpoints with their last delivery
  rm <id>                     remove an endpoint (wh_...)
  deliveries <id>             its last 100 delivery attempts, newest first

JSON output is the API's answer.`,
  options: {
    events: { type: 'string', multiple: true },
    slug: { type: 'string' },
  },
  async run(ctx, values, args) {
    const action = args[0];
    if (action === 'add') return add(ctx, values, args);
    if (action === 'list' || action === undefined) {
      if (args.length > 1) throw usage('webhooks list takes no arguments.');
      const { client } = await ctx.authenticated();
      const data = await client.listWebhooks();
      return ctx.out.result({ data }, () =>
        data.length === 0
          ? 'No webhooks. Add one with: htmldrop webhooks add <url> --events <types>'
          : table([
              ['ID', 'URL', 'EVENTS', 'DROP', 'LAST DELIVERY', 'STATE'],
              ...data.map((w) => [
                w.id,
                w.url,
                w.events.join(','),
                w.slug ?? 'all',
                lastOf(w),
                w.disabled_at === null ? 'active' : `disabled ${when(w.disabled_at)}`,
              ]),
            ]),
      );
    }
    if (action === 'rm') {
      const id = positional(args, 1, 'id', 'webhooks rm');
      const { client } = await ctx.authenticated();
      await client.deleteWebhook(id);
      return ctx.out.result({ removed: id }, () => `Removed ${id}.`);
    }
    if (action === 'deliveries') {
      const id = positional(args, 1, 'id', 'webhooks deliveries');
      const { client } = await ctx.authenticated();
      const data = await client.listWebhookDeliveries(id);
      return ctx.out.result({ data }, () =>
        data.length === 0
          ? `No deliveries to ${id} yet.`
          : table([['EVENT', 'TYPE', 'AT', 'STATUS', 'DURATION', 'NEXT RETRY', 'ERROR'], ...data.map(deliveryRow)]),
      );
    }
    throw usage(`webhooks: unknown action "${action}" (add, list, rm, deliveries). See: htmldrop webhooks --help`);
  },
};
