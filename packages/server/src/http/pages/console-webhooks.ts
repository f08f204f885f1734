/**
 * The console's Webhooks page (docs/console.md, "Webhooks"): the account's endpoints with their last delivery, a form
 * to add one (its secret shown once, on the answer to the form), and per endpoint "Send test event" and "Remove".
 */

import { EVENT_TYPES } from '../../domain/events.js';
import type { DeliveryAttempt, WebhookRecord } from '../../domain/store.js';
import type { Who } from './console.js';
import { consoleShell, copyableCommand, csrfField, notice, timeTag } from './console-layout.js';
import { escapeHtml } from './layout.js';

export interface WebhooksPage {
  readonly who: Who;
  readonly nonce: string;
  readonly webhooks: ReadonlyArray<{ readonly webhook: WebhookRecord; readonly last: DeliveryAttempt | undefined }>;
  readonly done?: string;
  readonly error?: string;
  /** Just added: the endpoint's id and its secret, shown this once. */
  readonly created?: { readonly id: string; readonly secret: string };
  /** The add form as typed, after a refusal. */
  readonly form?: { readonly url: string; readonly events: readonly string[]; readonly slug: string };
}

const EVENT_HELP: Readonly<Record<string, string>> = {
  'drop.created': 'a drop is created',
  'drop.version_created': 'a new version is published',
  'drop.deleted': 'a drop is deleted',
  'comment.created': 'someone comments',
  'comment.resolved': 'a comment is resolved',
  'access.refused': 'a visitor is refused (wrong passcode)',
  'drop.viewed': 'a drop is viewed (at most once a minute)',
};

/** This page's own rules, beside the console's (console-layout.ts). */
const STYLE = `.events{display:flex;flex-wrap:wrap;gap:2px;justify-content:flex-end}.endpoint{overflow-wrap:anywhere}
fieldset{border:1px solid var(--line);border-radius:8px;padding:8px 14px 10px}legend{font-weight:600;font-size:.9rem;padding:0 4px}
label.check{display:flex;gap:8px;align-items:baseline;font-weight:400;margin:6px 0}label.check .mono{font-weight:600}
@media (min-width:721px){.events{justify-content:flex-start}}`;

function lastCell(last: DeliveryAttempt | undefined): string {
  if (last === undefined) return '<span class="muted">none yet</span>';
  const code = last.httpStatus === null ? '' : ` (${last.httpStatus})`;
  const badge = last.outcome === 'delivered' ? 'badge' : 'badge warn';
  const error = last.error === null ? '' : `<div class="muted">${escapeHtml(last.error)}</div>`;
  return `<span class="${badge}">${last.outcome}${code}</span> ${timeTag(last.at)}${error}`;
}

function row(page: WebhooksPage, webhook: WebhookRecord, last: DeliveryAttempt | undefined): string {
  const id = encodeURIComponent(webhook.id);
  const state =
    webhook.disabledAt === null ? '' : `<div class="badge warn">disabled ${timeTag(webhook.disabledAt)}</div>`;
  return `<tr data-webhook="${escapeHtml(webhook.id)}"><td class="title-cell"><span class="mono endpoint">${escapeHtml(webhook.url)}</span>${state}
<div class="muted mono">${escapeHtml(webhook.id)}</div></td>
<td data-label="Events"><div class="events">${webhook.events.map((e) => `<span class="chip">${escapeHtml(e)}</span>`).join('')}</div></td>
<td data-label="Drop">${webhook.slug === null ? '<span class="muted">all</span>' : `<a class="mono" href="/console/drops/${encodeURIComponent(webhook.slug)}">${escapeHtml(webhook.slug)}</a>`}</td>
<td data-label="Last delivery">${lastCell(last)}</td>
<td data-label="Actions"><div class="row"><form method="post" action="/console/webhooks/${id}/test">${csrfField(page.who.csrf)}
<button type="submit" aria-label="Send test event to ${escapeHtml(webhook.url)}">Send test event</button></form>
<form method="post" action="/console/webhooks/${id}/remove" data-confirm="Remove this webhook? It gets nothing more.">${csrfField(page.who.csrf)}
<button class="danger" type="submit" aria-label="Remove the webhook to ${escapeHtml(webhook.url)}">Remove</button></form></div></td></tr>`;
}

export function webhooksPage(page: WebhooksPage): string {
  const typed = page.form ?? { url: '', events: [], slug: '' };
  const checks = EVENT_TYPES.map(
    (type) =>
      `<label class="check"><input type="checkbox" name="event-${type}" value="on"${typed.events.includes(type) ? ' checked' : ''}> <span class="mono">${type}</span> <span class="muted">${EVENT_HELP[type] ?? ''}</span></label>`,
  ).join('');
  const created =
    page.created === undefined
      ? ''
      : `<section id="new-secret" aria-labelledby="new-secret-h"><h2 id="new-secret-h">Webhook added: copy its secret now</h2>
<p>This is the only time the secret is shown. Your receiver verifies each delivery's <code>webhook-signature</code> with it,
using any Standard Webhooks library.</p>${copyableCommand('webhook-secret', page.created.secret, 'Signing secret')}</section>`;
  const list =
    page.webhooks.length === 0
      ? '<p class="empty" id="no-webhooks">No webhooks yet. Add one below to tell chat, CI or tickets what happens to your drops.</p>'
      : `<table class="cards" id="webhook-list"><thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">Drop</th><th scope="col">Last delivery</th><th scope="col">Actions</th></tr></thead><tbody>${page.webhooks.map((w) => row(page, w.webhook, w.last)).join('')}</tbody></table>`;
  return consoleShell({
    title: 'Webhooks',
    nonce: page.nonce,
    who: page.who,
    current: 'webhooks',
    body: `<style>${STYLE}</style><h1>Webhooks</h1>${page.done === undefined ? '' : notice('ok', page.done)}${page.error === undefined ? '' : notice('err', page.error)}
<p class="muted">A webhook is a signed POST to your endpoint each time something happens to your drops (Standard Webhooks:
<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>). Failed deliveries are retried for 24
hours; an endpoint that fails for 3 days is disabled.</p>${created}<section aria-labelledby="list-h"><h2 id="list-h">Your webhooks</h2>${list}</section>
<section aria-labelledby="add-h"><h2 id="add-h">Add a webhook</h2><form method="post" action="/console/webhooks" id="add-webhook">${csrfField(page.who.csrf)}
<div class="field"><label for="webhook-url">Endpoint URL</label><input type="text" id="webhook-url" name="url" inputmode="url" required maxlength="2048" placeholder="https://hooks.example.com/htmldrop" value="${escapeHtml(typed.url)}" aria-describedby="webhook-url-help"><p class="muted" id="webhook-url-help">https:// and a public address.</p></div>
<fieldset class="field"><legend>Events</legend>${checks}</fieldset>
<div class="field"><label for="webhook-slug">Only this drop (optional)</label><input type="text" id="webhook-slug" name="slug" maxlength="64" placeholder="slug, or empty for every drop" value="${escapeHtml(typed.slug)}"></div>
<button class="primary" type="submit">Add webhook</button></form></section>`,
  });
}
