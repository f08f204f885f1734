/**
 * Webhooks (docs/api.md, "Webhooks"): registration and its refusals (public targets only, also after DNS), the
 * Standard Webhooks signature checked with the `standardwebhooks` library's own verifier, every event type, retries
 * while the receiver is down, three instances delivering each event once, the backoff schedule, giving up after 24 h,
 * disabling after 3 days, and secrets the database alone cannot open. Real receivers on loopback
 * (HTMLDROP_WEBHOOK_ALLOW_PRIVATE=1 where they are the target).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { attemptOneDelivery, BACKOFF_MS, type WebhookSender } from '../src/domain/webhooks.js';
import { openMigrated } from './databases.js';
import { createHarness, createTestClock, type Harness, page } from './helpers.js';
import { type Cluster, call, createCluster } from './instances.js';

interface Received {
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A receiver on loopback: records every POST, answers `status()` (503 while "down"). */
async function startReceiver() {
  const received: Received[] = [];
  let answer = 200;
  const waiters = new Set<() => void>();
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(answer).end();
      for (const wake of [...waiters]) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    answer(status: number) {
      answer = status;
    },
    /** Resolves once `predicate` holds for what was received. */
    until(predicate: (all: Received[]) => boolean, ms = 5000): Promise<void> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(received)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: condition not met within ${ms} ms (${received.length} received)`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const ALL_EVENTS = [
  'drop.created',
  'drop.version_created',
  'drop.deleted',
  'comment.created',
  'comment.resolved',
  'access.refused',
  'drop.viewed',
];

const typeOf = (r: Received) => JSON.parse(r.body).type as string;

describe('registering a webhook', () => {
  let cluster: Cluster;
  let ann: string;
  let bob: string;
  // example.test plays a public name; rebind.test moves to loopback after registration.
  const names = new Map<string, string[]>([
    ['hooks.example.test', ['93.184.215.14']],
    ['rebind.example.test', ['93.184.215.14']],
  ]);
  beforeAll(async () => {
    cluster = await createCluster({
      size: 1,
      worker: true,
      services: {
        resolve: async (name) => {
          if (name === 'localhost') return ['127.0.0.1', '::1'];
          const found = names.get(name);
          if (found === undefined) throw new Error('ENOTFOUND');
          return found;
        },
        webhookPollMs: 50,
      },
    });
    ann = await cluster.token('ann');
    bob = await cluster.token('bob');
  });
  afterAll(async () => {
    await cluster.close();
  });
  const api = (method: string, path: string, token = ann, body?: unknown) =>
    call(cluster.at(0), method, path, token, body);

  it('answers 201 with the secret once, lists without it, deletes with 204', async () => {
    const made = await api('POST', '/api/webhooks', ann, {
      url: 'https://hooks.example.test/in',
      events: ['drop.created', 'comment.created'],
    });
    expect(made.status).toBe(201);
    expect(made.json).toEqual({
      id: expect.stringMatching(/^wh_[0-9A-Za-z]{16}$/),
      url: 'https://hooks.example.test/in',
      events: ['drop.created', 'comment.created'],
      slug: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
      created_at: expect.any(Number),
      disabled_at: null,
    });
    const list = await api('GET', '/api/webhooks');
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(1);
    expect(list.json.data[0]).not.toHaveProperty('secret');
    expect(JSON.stringify(list.json)).not.toContain(made.json.secret.slice(6));
    // Another account sees none of it and cannot remove it.
    expect((await api('GET', '/api/webhooks', bob)).json.data).toEqual([]);
    expect((await api('DELETE', `/api/webhooks/${made.json.id}`, bob)).status).toBe(404);
    expect((await api('GET', `/api/webhooks/${made.json.id}/deliveries`, bob)).status).toBe(404);
    expect((await api('DELETE', `/api/webhooks/${made.json.id}`)).status).toBe(204);
    expect((await api('DELETE', `/api/webhooks/${made.json.id}`)).status).toBe(404);
    expect((await api('GET', '/api/webhooks')).json.data).toEqual([]);
  });

  it('stores the secret sealed: not in the database, and not opened with another service secret', async () => {
    const made = await api('POST', '/api/webhooks', ann, {
      url: 'https://hooks.example.test/',
      events: ['drop.viewed'],
    });
    const raw = await openMigrated(cluster.database);
    try {
      const row = await raw
        .selectFrom('webhooks')
        .select('sealed_secret')
        .where('id', '=', made.json.id)
        .executeTakeFirst();
      expect(row?.sealed_secret).toMatch(/^v1\./);
      expect(row?.sealed_secret).not.toContain(made.json.secret.slice(6));
      const { createSealedBox } = await import('../src/keys/sealed-box.js');
      const { signingKeysFromSecret } = await import('../src/keys/signing-keys.js');
      const other = createSealedBox(signingKeysFromSecret('x'.repeat(40)).webhookSecret);
      expect(other.open(row?.sealed_secret ?? '')).toBeUndefined();
      expect(cluster.at(0).services.webhooks.seal.open(row?.sealed_secret ?? '')).toBe(made.json.secret);
    } finally {
      await raw.destroy();
    }
    await api('DELETE', `/api/webhooks/${made.json.id}`);
  });

  it('refuses bad fields with 400 invalid_arg, and a drop of another account with 403', async () => {
    const bad = [
      { url: 'not a url', events: ['drop.created'] },
      { url: 'ftp://hooks.example.test/', events: ['drop.created'] },
      { url: 'https://user:pw@hooks.example.test/', events: ['drop.created'] },
      { url: 'https://hooks.example.test/', events: [] },
      { url: 'https://hooks.example.test/', events: ['drop.exploded'] },
      { url: 'https://hooks.example.test/', events: 'drop.created' },
      { events: ['drop.created'] },
      { url: 'https://nowhere.example.test/', events: ['drop.created'] },
    ];
    for (const body of bad) {
      const refused = await api('POST', '/api/webhooks', ann, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.json.error.code).toBe('invalid_arg');
    }
    const bobs = (await api('POST', '/api/drops', bob, { title: 'b', html: page() })).json.slug;
    const foreign = await api('POST', '/api/webhooks', ann, {
      url: 'https://hooks.example.test/',
      events: ['drop.viewed'],
      slug: bobs,
    });
    expect(foreign.status).toBe(403);
    expect(
      (
        await api('POST', '/api/webhooks', ann, {
          url: 'https://hooks.example.test/',
          events: ['drop.viewed'],
          slug: 'nosuchdrop1',
        })
      ).status,
    ).toBe(404);
  });

  it('refuses loopback, private, link-local, CGNAT, metadata and mapped targets, and a name resolving to 127.0.0.1', async () => {
    const targets = [
      'http://hooks.example.test/',
      'https://127.0.0.1/',
      'https://127.1.2.3:8443/',
      'https://2130706433/',
      'https://0x7f.1/',
      'https://0.0.0.0/',
      'https://10.0.0.8/',
      'https://172.16.5.4/',
      'https://192.168.1.1/',
      'https://100.64.0.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]/',
      'https://[::]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://[fd00:ec2::254]/',
      'https://[fe80::1]/',
      'https://localhost/',
    ];
    for (const url of targets) {
      const refused = await api('POST', '/api/webhooks', ann, { url, events: ['drop.created'] });
      expect(refused.status, url).toBe(400);
      expect(refused.json.error.code).toBe('invalid_arg');
      expect(refused.json.error.details).toEqual({ field: 'url' });
    }
    expect((await api('GET', '/api/webhooks')).json.data).toEqual([]);
  });

  it('checks the address again at delivery: a name that moved to 127.0.0.1 is not reached', async () => {
    const made = await api('POST', '/api/webhooks', ann, {
      url: 'https://rebind.example.test/in',
      events: ['drop.created'],
    });
    expect(made.status).toBe(201);
    names.set('rebind.example.test', ['127.0.0.1']);
    await api('POST', '/api/drops', ann, { title: 'x', html: page() });
    let log: { status: number; json: { data: Array<{ status: string; error: string }> } } = {
      status: 0,
      json: { data: [] },
    };
    for (let i = 0; i < 100 && log.json.data.length === 0; i += 1) {
      await new Promise<void>((resolve) => setTimeout(resolve, 50));
      log = await api('GET', `/api/webhooks/${made.json.id}/deliveries`);
    }
    expect(log.json.data[0]?.status).toBe('retrying');
    expect(log.json.data[0]?.error).toBe('rebind.example.test resolves to 127.0.0.1, which is not a public address');
    await api('DELETE', `/api/webhooks/${made.json.id}`);
  });
});

describe('delivering', () => {
  let cluster: Cluster;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let ann: string;
  beforeAll(async () => {
    receiver = await startReceiver();
    cluster = await createCluster({
      size: 3,
      worker: true,
      env: { HTMLDROP_WEBHOOK_ALLOW_PRIVATE: '1' },
      services: { webhookBackoffMs: [100, 200, 400], webhookPollMs: 50 },
    });
    ann = await cluster.token('ann');
  });
  afterAll(async () => {
    await cluster.close();
    await receiver.close();
  });
  afterEach(async () => {
    receiver.received.length = 0;
    receiver.answer(200);
    for (const w of (await call(cluster.at(0), 'GET', '/api/webhooks', ann)).json.data) {
      await call(cluster.at(0), 'DELETE', `/api/webhooks/${w.id}`, ann);
    }
  });

  it('delivers each event type once, signed as Standard Webhooks (checked with its verifier)', async () => {
    const [a, b, c] = [cluster.at(0), cluster.at(1), cluster.at(2)];
    const made = await call(a, 'POST', '/api/webhooks', ann, { url: receiver.url, events: ALL_EVENTS });
    expect(made.status).toBe(201);
    const drop = (await call(b, 'POST', '/api/drops', ann, { title: 'Report', html: page('one'), comments: 'open' }))
      .json;
    await call(c, 'PUT', `/api/drops/${drop.slug}`, ann, { html: page('two') });
    const comment = (await call(a, 'POST', `/api/drops/${drop.slug}/comments`, ann, { body: 'Check' })).json;
    await call(b, 'POST', `/api/drops/${drop.slug}/comments/${comment.id}/resolve`, ann);
    await call(c, 'POST', `/api/drops/${drop.slug}/passcode`, ann, { passcode: 'open sesame' });
    const wrong = await fetch(`${a.url}/p/${drop.slug}/unlock`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: cluster.config.baseUrl },
      body: 'passcode=guess',
      redirect: 'manual',
    });
    expect(wrong.status).toBe(401);
    await call(a, 'POST', `/api/drops/${drop.slug}/passcode`, ann, { passcode: '' });
    await fetch(`${b.url}/p/${drop.slug}`);
    await fetch(`${b.url}/p/${drop.slug}`);
    await b.services.flushCounters();
    await call(a, 'DELETE', `/api/drops/${drop.slug}`, ann);
    await receiver.until((all) => new Set(all.map(typeOf)).size === ALL_EVENTS.length);
    await new Promise<void>((resolve) => setTimeout(resolve, 300));
    const verifier = new Webhook(made.json.secret);
    const bodies = receiver.received.map((r) => {
      expect(r.headers['content-type']).toBe('application/json');
      const verified = verifier.verify(r.body, {
        'webhook-id': String(r.headers['webhook-id']),
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      }) as { type: string; timestamp: string; data: Record<string, unknown> };
      expect(String(r.headers['webhook-id'])).toMatch(/^msg_[0-9A-Za-z]{22}$/);
      return verified;
    });
    expect(bodies.map((x) => x.type).sort()).toEqual([...ALL_EVENTS].sort());
    const byType = new Map(bodies.map((x) => [x.type, x]));
    expect(byType.get('drop.created')?.data).toEqual({ slug: drop.slug, title: 'Report', version: 1 });
    expect(byType.get('drop.version_created')?.data).toEqual({ slug: drop.slug, version: 2 });
    expect(byType.get('comment.created')?.data).toEqual({ slug: drop.slug, id: comment.id, version: 2 });
    expect(byType.get('comment.resolved')?.data).toEqual({
      slug: drop.slug,
      id: comment.id,
      version: 2,
      resolved_in_version: 2,
    });
    expect(byType.get('access.refused')?.data).toEqual({ slug: drop.slug, reason: 'wrong_passcode' });
    expect(byType.get('drop.viewed')?.data).toEqual({ slug: drop.slug, views: 2, view_count: 2 });
    expect(byType.get('drop.deleted')?.data).toEqual({ slug: drop.slug, reason: 'owner' });
    expect(Date.parse(byType.get('drop.created')?.timestamp ?? '')).toBeGreaterThan(0);
    // A tampered body fails the same verifier.
    const first = receiver.received[0];
    expect(() =>
      verifier.verify(`${first?.body} `, {
        'webhook-id': String(first?.headers['webhook-id']),
        'webhook-timestamp': String(first?.headers['webhook-timestamp']),
        'webhook-signature': String(first?.headers['webhook-signature']),
      }),
    ).toThrow();
  });

  it('tells access.refused for a visitor who may not see the drop, naming who, as the access log does', async () => {
    const a = cluster.at(0);
    const made = await call(a, 'POST', '/api/webhooks', ann, { url: receiver.url, events: ['access.refused'] });
    expect(made.status).toBe(201);
    const drop = (await call(a, 'POST', '/api/drops', ann, { title: 'Inner', html: page('x'), visibility: 'people' }))
      .json;
    expect((await fetch(`${cluster.at(1).url}/p/${drop.slug}/raw`)).status).toBe(401);
    await receiver.until((all) => all.length >= 1);
    expect(JSON.parse(receiver.received[0]?.body ?? '{}').data).toEqual({
      slug: drop.slug,
      reason: 'sign_in_required',
      who_kind: 'anonymous',
      who_name: null,
    });
  });

  it('tells drop.deleted with reason "expired" once for a drop the purge deletes, however many instances purge', async () => {
    const [a, b] = [cluster.at(0), cluster.at(1)];
    const made = await call(a, 'POST', '/api/webhooks', ann, { url: receiver.url, events: ['drop.deleted'] });
    expect(made.status).toBe(201);
    const expires = Date.now() + 120_000;
    const drop = (await call(a, 'POST', '/api/drops', ann, { title: 'Brief', html: page('x'), expires_at: expires }))
      .json;
    const kept = (await call(a, 'POST', '/api/drops', ann, { title: 'Kept', html: page('y') })).json;
    // Past its expiry without waiting for it: the row says so, as the clock will.
    await a.store.updateDrop(drop.slug, { expiresAt: Date.now() - 1 }, Date.now());
    const purged = await Promise.all([a.services.purge(), b.services.purge()]);
    expect(purged[0] + purged[1]).toBe(1);
    await receiver.until((all) => all.length >= 1);
    await new Promise<void>((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.map((r) => JSON.parse(r.body))).toEqual([
      { type: 'drop.deleted', timestamp: expect.any(String), data: { slug: drop.slug, reason: 'expired' } },
    ]);
    expect((await call(a, 'GET', `/api/drops/${kept.slug}`, ann)).status).toBe(200);
  });

  it('keeps retrying while the receiver is down, with the same webhook-id, and every event arrives', async () => {
    const [a, b] = [cluster.at(0), cluster.at(1)];
    const made = await call(a, 'POST', '/api/webhooks', ann, { url: receiver.url, events: ['drop.version_created'] });
    const slug = (await call(a, 'POST', '/api/drops', ann, { title: 'R', html: page() })).json.slug;
    receiver.answer(503);
    for (let i = 0; i < 5; i += 1) await call(b, 'PUT', `/api/drops/${slug}`, ann, { html: page(`v${i + 2}`) });
    await receiver.until((all) => new Set(all.map((r) => r.headers['webhook-id'])).size === 5 && all.length >= 10);
    receiver.answer(200);
    const ids = () => new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
    const okIds = new Set<string>();
    await new Promise<void>((resolve, reject) => {
      const until = Date.now() + 10_000;
      const tick = async () => {
        const log = (await call(a, 'GET', `/api/webhooks/${made.json.id}/deliveries`, ann)).json.data as Array<{
          event_id: string;
          status: string;
        }>;
        for (const entry of log) if (entry.status === 'delivered') okIds.add(entry.event_id);
        if (okIds.size === 5) resolve();
        else if (Date.now() > until) reject(new Error(`delivered ${okIds.size} of 5`));
        else setTimeout(tick, 100);
      };
      tick();
    });
    expect(ids().size).toBe(5);
    const versions = receiver.received.map((r) => JSON.parse(r.body).data.version as number);
    expect(new Set(versions)).toEqual(new Set([2, 3, 4, 5, 6]));
    const log = (await call(a, 'GET', `/api/webhooks/${made.json.id}/deliveries`, ann)).json.data;
    expect(
      log.some(
        (e: { status: string; http_status: number; next_retry_at: number }) =>
          e.status === 'retrying' && e.http_status === 503 && e.next_retry_at > 0,
      ),
    ).toBe(true);
    expect(log.filter((e: { status: string }) => e.status === 'delivered')).toHaveLength(5);
  });

  it('delivers each of 30 events exactly once with three instances polling the outbox', async () => {
    const made = await call(cluster.at(0), 'POST', '/api/webhooks', ann, {
      url: receiver.url,
      events: ['drop.version_created'],
    });
    expect(made.status).toBe(201);
    const slug = (await call(cluster.at(1), 'POST', '/api/drops', ann, { title: 'M', html: page() })).json.slug;
    for (let i = 0; i < 30; i += 1) {
      await call(cluster.at(i % 3), 'PUT', `/api/drops/${slug}`, ann, { html: page(`n${i}`) });
    }
    await receiver.until((all) => all.length >= 30);
    await new Promise<void>((resolve) => setTimeout(resolve, 500));
    const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
  });
});

describe('the retry schedule', () => {
  let h: Harness;
  const clock = createTestClock();
  afterAll(async () => {
    await h?.close();
  });

  it('retries within 10 s, then within a minute of the first failure, gives up after 24 h and disables after 3 days', async () => {
    h = await createHarness({ clock, env: { HTMLDROP_WEBHOOK_ALLOW_PRIVATE: '1' } });
    const ann = await h.token('ann');
    const made = await h.call('POST', '/api/webhooks', {
      token: ann,
      body: { url: 'http://127.0.0.1:9/never', events: ['drop.version_created'] },
    });
    expect(made.status).toBe(201);
    const slug = (await h.call('POST', '/api/drops', { token: ann, body: { title: 't', html: page() } })).json.slug;
    const sent: number[] = [];
    const failing: WebhookSender = {
      async deliver() {
        sent.push(clock.now());
        return { status: 500 };
      },
    };
    const deps = { ...h.services.webhooks, sender: failing };
    await h.call('PUT', `/api/drops/${slug}`, { token: ann, body: { html: page('2') } });
    const firstAt = clock.now();
    // Attempt whatever is due, then jump to the next retry, until the delivery is given up.
    const log = async () => (await h.call('GET', `/api/webhooks/${made.json.id}/deliveries`, { token: ann })).json.data;
    for (let i = 0; i < 100; i += 1) {
      expect(await attemptOneDelivery(deps)).toBe(true);
      const [last] = await log();
      if (last.status === 'failed') break;
      expect(await attemptOneDelivery(deps)).toBe(false);
      clock.set(last.next_retry_at);
    }
    expect(sent[1]).toBeDefined();
    expect((sent[1] ?? 0) - firstAt).toBeLessThanOrEqual(10_000);
    expect((sent[2] ?? 0) - firstAt).toBeLessThanOrEqual(60_000);
    const gaps = sent.slice(1).map((t, i) => t - (sent[i] ?? 0));
    expect(Math.max(...gaps)).toBe(BACKOFF_MS[BACKOFF_MS.length - 1]);
    const last = sent[sent.length - 1] ?? 0;
    expect(last - firstAt).toBeLessThanOrEqual(24 * 3600_000);
    expect(last - firstAt).toBeGreaterThan(23 * 3600_000);
    expect((await log())[0].status).toBe('failed');
    expect((await log()).length).toBeLessThanOrEqual(100);
    expect((await h.call('GET', '/api/webhooks', { token: ann })).json.data[0].disabled_at).toBeNull();

    // Still failing two days later: after 3 days of failures the endpoint is disabled, and nothing more is tried.
    for (const day of [2, 3]) {
      clock.set(firstAt + day * 24 * 3600_000 + 1000);
      await h.call('PUT', `/api/drops/${slug}`, { token: ann, body: { html: page(`day ${day}`) } });
      expect(await attemptOneDelivery(deps)).toBe(true);
    }
    const listed = (await h.call('GET', '/api/webhooks', { token: ann })).json.data[0];
    expect(listed.disabled_at).toBe(clock.now());
    clock.advance(3600_000);
    expect(await attemptOneDelivery(deps)).toBe(false);
    await h.call('PUT', `/api/drops/${slug}`, { token: ann, body: { html: page('ignored') } });
    expect(await attemptOneDelivery(deps)).toBe(false);
  });
});

describe('the delivery worker', () => {
  it('on stop, finishes and records the attempt under way, then claims nothing more', async () => {
    const got: string[] = [];
    let answerNow: () => void = () => undefined;
    const slow = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        got.push(String(request.headers['webhook-id']));
        answerNow = () => response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`;
    const cluster = await createCluster({
      size: 1,
      worker: true,
      env: { HTMLDROP_WEBHOOK_ALLOW_PRIVATE: '1' },
      services: { webhookPollMs: 50 },
    });
    try {
      const only = cluster.at(0);
      const ann = await cluster.token('ann');
      const made = await call(only, 'POST', '/api/webhooks', ann, { url, events: ['drop.created'] });
      await call(only, 'POST', '/api/drops', ann, { title: 'a', html: page() });
      const until = Date.now() + 5000;
      while (got.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(got).toHaveLength(1);
      let stopped = false;
      const stopping = only.services.webhookWorker.stop().then(() => {
        stopped = true;
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(stopped).toBe(false);
      answerNow();
      await stopping;
      const log = (await call(only, 'GET', `/api/webhooks/${made.json.id}/deliveries`, ann)).json.data;
      expect(log[0]).toMatchObject({ status: 'delivered', http_status: 200 });
      await call(only, 'POST', '/api/drops', ann, { title: 'b', html: page() });
      await new Promise((r) => setTimeout(r, 300));
      expect(got).toHaveLength(1);
    } finally {
      await cluster.close();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });
});
