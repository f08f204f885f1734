/**
 * The console's Webhooks page (docs/console.md, "Webhooks"): add (the secret shown on the answer only), list with the
 * last delivery, "Send test event", remove; refusals with what was typed kept; the CSRF and Origin checks; another
 * account's endpoint. The page in Chromium is console-webhooks.browser.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attemptOneDelivery, type WebhookSender } from '../src/domain/webhooks.js';
import { consoleClient } from './console-session.js';
import { createHarness, type Harness } from './helpers.js';

const ORIGIN = 'http://drops.test';
let h: Harness;

beforeEach(async () => {
  h = await createHarness({ env: { HTMLDROP_WEBHOOK_ALLOW_PRIVATE: '1' } });
});
afterEach(async () => {
  await h.close();
});

const { get, post, signIn, as } = consoleClient(() => ({ harness: h, origin: ORIGIN }));

const ADD: Array<[string, string]> = [
  ['url', 'http://127.0.0.1:9/hook'],
  ['event-drop.created', 'on'],
  ['event-comment.created', 'on'],
  ['slug', ''],
];

describe('the Webhooks page', () => {
  it('adds an endpoint, shows its secret once, lists it with its events, and removes it', async () => {
    const s = await signIn('ann');
    const empty = await get('/console/webhooks', s.cookie);
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('id="no-webhooks"');
    expect(empty.text).toContain('aria-current="page">Webhooks</a>');
    const added = await as(s, '/console/webhooks', ADD);
    expect(added.status).toBe(200);
    const secret = /id="webhook-secret"[^>]*>(whsec_[^<]+)</.exec(added.text)?.[1];
    expect(secret).toMatch(/^whsec_/);
    const listed = await get('/console/webhooks', s.cookie);
    expect(listed.text).not.toContain(secret);
    expect(listed.text).toContain('http://127.0.0.1:9/hook');
    expect(listed.text).toContain('<span class="chip">comment.created</span>');
    const id = /data-webhook="(wh_[0-9A-Za-z]+)"/.exec(listed.text)?.[1] ?? '';
    const ann = await h.token('ann');
    expect((await h.call('GET', '/api/webhooks', { token: ann })).json.data[0].events).toEqual([
      'drop.created',
      'comment.created',
    ]);
    const removed = await as(s, `/console/webhooks/${id}/remove`);
    expect(removed.status).toBe(303);
    expect(removed.headers.location).toBe('/console/webhooks?done=webhook-removed');
    expect((await get('/console/webhooks?done=webhook-removed', s.cookie)).text).toContain('Webhook removed');
    expect((await h.call('GET', '/api/webhooks', { token: ann })).json.data).toEqual([]);
  });

  it('sends a test event, delivered like any other, and shows it as the last delivery', async () => {
    const s = await signIn('ann');
    const listed = await (await as(s, '/console/webhooks', ADD)).text;
    const id = /data-webhook="(wh_[0-9A-Za-z]+)"/.exec(listed)?.[1] ?? '';
    const queued = await as(s, `/console/webhooks/${id}/test`);
    expect(queued.status).toBe(303);
    expect(queued.headers.location).toBe('/console/webhooks?done=webhook-test');
    const bodies: string[] = [];
    const sender: WebhookSender = {
      async deliver(request) {
        bodies.push(request.body);
        return { status: 204 };
      },
    };
    expect(await attemptOneDelivery({ ...h.services.webhooks, sender })).toBe(true);
    expect(JSON.parse(bodies[0] ?? '{}')).toMatchObject({ type: 'webhook.test', data: { webhook_id: id } });
    const page = await get('/console/webhooks?done=webhook-test', s.cookie);
    expect(page.text).toContain('Test event queued');
    expect(page.text).toContain('<span class="badge">delivered (204)</span>');
  });

  it('refuses a private target without the setting, keeping what was typed', async () => {
    await h.close();
    h = await createHarness();
    const s = await signIn('ann');
    const refused = await as(s, '/console/webhooks', [
      ['url', 'https://10.0.0.8/hook'],
      ['event-drop.deleted', 'on'],
    ]);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('id="console-error"');
    expect(refused.text).toContain('Webhook targets must be public');
    expect(refused.text).toContain('value="https://10.0.0.8/hook"');
    expect(refused.text).toMatch(/name="event-drop.deleted" value="on" checked/);
    const none = await as(s, '/console/webhooks', [['url', 'http://127.0.0.1/']]);
    expect(none.status).toBe(400);
  });

  it('refuses a form from another origin or without the CSRF token, and another account’s endpoint', async () => {
    const s = await signIn('ann');
    const foreign = await post('/console/webhooks', [['csrf', s.csrf], ...ADD], {
      cookie: s.cookie,
      origin: 'http://evil.test',
    });
    expect(foreign.status).toBe(403);
    const noCsrf = await post('/console/webhooks', new URLSearchParams(ADD), { cookie: s.cookie, origin: ORIGIN });
    expect(noCsrf.status).toBe(403);
    const ann = await h.token('ann');
    expect((await h.call('GET', '/api/webhooks', { token: ann })).json.data).toEqual([]);
    await as(s, '/console/webhooks', ADD);
    const id = (await h.call('GET', '/api/webhooks', { token: ann })).json.data[0].id;
    const bob = await signIn('bob');
    expect((await as(bob, `/console/webhooks/${id}/remove`)).status).toBe(404);
    expect((await as(bob, `/console/webhooks/${id}/test`)).status).toBe(404);
    expect((await h.call('GET', '/api/webhooks', { token: ann })).json.data).toHaveLength(1);
  });
});
