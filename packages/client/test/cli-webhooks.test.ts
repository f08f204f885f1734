/**
 * `htmldrop webhooks add|list|rm|deliveries` and the SDK's webhook methods (docs/api.md, "Webhooks"), spawned as a
 * user runs them against the real service, delivering to a receiver on loopback
 * (HTMLDROP_WEBHOOK_ALLOW_PRIVATE=1), whose signature is checked with the `standardwebhooks` verifier.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HtmlDropClient } from '../src/index.js';
import type { CreatedWebhook, WebhookDelivery, WebhookInfo } from '../src/types.js';
import { PAGE, run, runJson, type Sandbox, write } from './run.js';
import { useService } from './service.js';

const service = useService({ HTMLDROP_WEBHOOK_ALLOW_PRIVATE: '1', HTMLDROP_MAX_WRITES_PER_MINUTE: '1000' });

let box: Sandbox & { token: string };
const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
const receiver = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    received.push({ headers: request.headers, body });
    response.writeHead(204).end();
  });
});
let hookUrl: string;

beforeAll(async () => {
  box = await service.signedIn('hooker');
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

describe('htmldrop webhooks', () => {
  it('adds (printing the secret once), lists, shows deliveries and removes', async () => {
    const added = await runJson<CreatedWebhook>(box, [
      'webhooks',
      'add',
      hookUrl,
      '--events',
      'drop.created,drop.deleted',
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.json).toMatchObject({ url: hookUrl, events: ['drop.created', 'drop.deleted'], slug: null });
    expect(added.json.secret).toMatch(/^whsec_/);

    const file = write(box.cwd, 'page.html', PAGE('hooked'));
    const published = await runJson<{ drop: { slug: string } }>(box, ['publish', file, '--title', 'Hooked']);
    expect(published.code, published.stderr).toBe(0);
    const until = Date.now() + 10_000;
    while (received.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const [first] = received;
    const verified = new Webhook(added.json.secret).verify(first?.body ?? '', {
      'webhook-id': String(first?.headers['webhook-id']),
      'webhook-timestamp': String(first?.headers['webhook-timestamp']),
      'webhook-signature': String(first?.headers['webhook-signature']),
    });
    expect(verified).toMatchObject({ type: 'drop.created', data: { slug: published.json.drop.slug } });

    let deliveries: WebhookDelivery[] = [];
    while (deliveries.length === 0 && Date.now() < until) {
      deliveries = (await runJson<{ data: WebhookDelivery[] }>(box, ['webhooks', 'deliveries', added.json.id])).json
        .data;
    }
    expect(deliveries[0]).toMatchObject({ type: 'drop.created', status: 'delivered', http_status: 204 });
    const human = await run(box, ['webhooks', 'deliveries', added.json.id, '--human']);
    expect(human.stdout).toMatch(/^EVENT\s+TYPE\s+AT\s+STATUS/);
    expect(human.stdout).toContain('delivered (204)');

    const listed = await runJson<{ data: WebhookInfo[] }>(box, ['webhooks', 'list']);
    expect(listed.json.data).toHaveLength(1);
    expect(listed.json.data[0]).not.toHaveProperty('secret');
    expect(listed.json.data[0]?.last_delivery?.status).toBe('delivered');
    const table = await run(box, ['webhooks', 'list', '--human']);
    expect(table.stdout).toContain(added.json.id);
    expect(table.stdout).toContain('active');

    const removed = await run(box, ['webhooks', 'rm', added.json.id]);
    expect(removed.code, removed.stderr).toBe(0);
    expect((await runJson<{ data: WebhookInfo[] }>(box, ['webhooks', 'list'])).json.data).toEqual([]);
  });

  it('explains bad usage with exit code 2, and a refused target with the service message', async () => {
    expect((await run(box, ['webhooks', 'add', hookUrl])).code).toBe(2);
    expect((await run(box, ['webhooks', 'add', hookUrl, '--events', 'drop.exploded'])).code).toBe(2);
    expect((await run(box, ['webhooks', 'frobnicate'])).code).toBe(2);
    const refused = await run(box, ['webhooks', 'add', 'ftp://example.com/', '--events', 'all']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('https://');
  });

  it('the SDK creates, lists, reads deliveries of and deletes an endpoint', async () => {
    const client = new HtmlDropClient({ server: service.baseUrl, token: box.token });
    const made = await client.createWebhook({ url: hookUrl, events: ['drop.viewed'] });
    expect(made.secret).toMatch(/^whsec_/);
    expect((await client.listWebhooks()).map((w) => w.id)).toEqual([made.id]);
    expect(await client.listWebhookDeliveries(made.id)).toEqual([]);
    await client.deleteWebhook(made.id);
    expect(await client.listWebhooks()).toEqual([]);
    await expect(client.deleteWebhook(made.id)).rejects.toMatchObject({ code: 'not_found' });
  });
});
