/**
 * Three service processes on loopback sharing one PostgreSQL schema and one Redis: they must behave as one.
 * (A load balancer stand-in: requests are spread round-robin over the three.)
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, REDIS_URL, type TestDatabase } from '../databases.js';
import { page } from '../helpers.js';
import { approveAsHuman } from '../human.js';
import { freePort, type RunningServer, runCli, startServer } from '../process.js';

const PER_MINUTE = 60;

for (const mode of ['with Redis', 'without Redis (PostgreSQL counters and LISTEN/NOTIFY)'] as const) {
  describe(`three instances on one PostgreSQL, ${mode}`, () => {
    let database: TestDatabase;
    let instances: RunningServer[] = [];
    let env: Record<string, string>;
    let lbUrl: string;

    beforeAll(async () => {
      database = await createTestDatabase('postgres');
      const ports = [await freePort(), await freePort(), await freePort()];
      lbUrl = `http://127.0.0.1:${ports[0]}`;
      env = {
        HTMLDROP_DATABASE_URL: database.databaseUrl ?? '',
        ...(mode === 'with Redis'
          ? { HTMLDROP_REDIS_URL: REDIS_URL, HTMLDROP_REDIS_PREFIX: `htmldrop-test-${randomBytes(4).toString('hex')}:` }
          : {}),
        HTMLDROP_DATA_DIR: database.dataDir,
        HTMLDROP_MAX_DROPS_PER_ACCOUNT: '5',
        HTMLDROP_MAX_WRITES_PER_MINUTE: String(PER_MINUTE),
        // The load balancer's address: what the service puts in URLs and checks Origin against.
        HTMLDROP_BASE_URL: lbUrl,
      };
      // All three start at once: migrations must take their lock.
      instances = await Promise.all(ports.map((port) => startServer({ ...env, PORT: String(port) })));
    }, 60_000);

    afterAll(async () => {
      await Promise.all(instances.map((i) => i.stop()));
      await database?.drop();
    });

    let next = 0;
    /** Round-robin over the instances, as a load balancer would. */
    function url(path: string): string {
      const instance = instances[next++ % instances.length];
      return `${instance?.baseUrl}${path}`;
    }

    async function token(user: string): Promise<string> {
      const result = await runCli(['token', 'create', '--user', user], env);
      expect(result.code, result.stderr).toBe(0);
      return result.stdout.trim();
    }

    function api(tokenValue: string, method: string, path: string, body?: unknown, target = url(path)) {
      return fetch(target, {
        method,
        headers: { authorization: `Bearer ${tokenValue}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    }

    /** Waits until at least `seconds` remain in the current UTC minute, so a burst stays in one window. */
    async function awayFromMinuteEnd(seconds: number): Promise<void> {
      const left = 60_000 - (Date.now() % 60_000);
      if (left < seconds * 1000) await new Promise((r) => setTimeout(r, left + 200));
    }
    it('give exactly the per-minute limit of successes to 100 concurrent writes of one account', async () => {
      const t = await token('burst');
      const slug = (
        (await (await api(t, 'POST', '/api/drops', { title: 't', html: page() })).json()) as { slug: string }
      ).slug;
      await awayFromMinuteEnd(15);
      const statuses = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          api(t, 'PATCH', `/api/drops/${slug}`, { title: `t${i}` }).then((r) => r.status),
        ),
      );
      // The create above was the first write of this minute (or of the previous one, which only makes room).
      const ok = statuses.filter((s) => s === 200).length;
      expect([PER_MINUTE - 1, PER_MINUTE]).toContain(ok);
      expect(statuses.filter((s) => s === 429)).toHaveLength(100 - ok);
    });

    it('leave exactly 5 drops after 50 concurrent creates against a quota of 5', async () => {
      const t = await token('quota');
      const statuses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          api(t, 'POST', '/api/drops', { title: `q${i}`, html: page() }).then((r) => r.status),
        ),
      );
      expect(statuses.filter((s) => s === 201)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(45);
      for (const instance of instances) {
        const me = (await (await api(t, 'GET', '/api/me', undefined, `${instance.baseUrl}/api/me`)).json()) as {
          drop_count: number;
        };
        expect(me.drop_count).toBe(5);
      }
    });

    it('let exactly one of 12 writers with the same If-Match win, spread over the three', async () => {
      const t = await token('ifmatch');
      const created = (await (await api(t, 'POST', '/api/drops', { title: 't', html: page() })).json()) as {
        slug: string;
      };
      const statuses = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          fetch(url(`/api/drops/${created.slug}`), {
            method: 'PUT',
            headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json', 'if-match': '"1"' },
            body: JSON.stringify({ html: page(`writer ${i}`) }),
          }).then((r) => r.status),
        ),
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 412)).toHaveLength(11);
      const versions = (await (await api(t, 'GET', `/api/drops/${created.slug}/versions`)).json()) as unknown[];
      expect(versions).toHaveLength(2);
    });

    it('create one drop from 20 concurrent retries of one idempotent create, spread over the three', async () => {
      const t = await token('idempotent');
      const body = JSON.stringify({ title: 'once', html: page('once') });
      const replies = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(url('/api/drops'), {
            method: 'POST',
            headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json', 'idempotency-key': 'run-1' },
            body,
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as { slug?: string } })),
        ),
      );
      for (const reply of replies) expect([201, 409]).toContain(reply.status);
      expect(new Set(replies.filter((r) => r.status === 201).map((r) => r.body.slug)).size).toBe(1);
      const me = (await (await api(t, 'GET', '/api/me')).json()) as { drop_count: number };
      expect(me.drop_count).toBe(1);
    });

    it('reveal the token to exactly one of 20 concurrent polls after approval', async () => {
      const start = (await (await fetch(url('/api/auth/start'), { method: 'POST' })).json()) as {
        verification_url: string;
        poll_token: string;
      };
      await approveAsHuman(start.verification_url, 'poller', { baseUrl: instances[1]?.baseUrl ?? '' });
      const polls = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(url(`/api/auth/poll?token=${encodeURIComponent(start.poll_token)}`)).then(
            (r) => r.json() as Promise<{ status: string }>,
          ),
        ),
      );
      expect(polls.filter((p) => p.status === 'verified')).toHaveLength(1);
      expect(polls.filter((p) => p.status === 'claimed')).toHaveLength(19);
    });

    it("serve a PUT through instance A on instance B's raw path immediately", async () => {
      const [a, b] = instances;
      const t = await token('cache');
      const created = (await (
        await api(t, 'POST', '/api/drops', { title: 't', html: page('first') }, `${a?.baseUrl}/api/drops`)
      ).json()) as { slug: string };
      const raw = `${b?.baseUrl}/p/${created.slug}/raw`;
      for (let i = 0; i < 3; i++) expect(await (await fetch(raw)).text()).toContain('first');
      for (let round = 0; round < 5; round++) {
        const put = await api(
          t,
          'PUT',
          `/api/drops/${created.slug}`,
          { html: page(`round ${round}`) },
          `${a?.baseUrl}/api/drops/${created.slug}`,
        );
        expect(put.status).toBe(200);
        if (mode === 'with Redis') {
          // Acknowledged invalidation: the very next read on B already sees the new version.
          const seen = await (await fetch(raw)).text();
          expect(seen).toContain(`round ${round}`);
        } else {
          // LISTEN/NOTIFY is not acknowledged: B follows within milliseconds (documented).
          await expect
            .poll(async () => (await fetch(raw)).text(), { timeout: 2000, interval: 5 })
            .toContain(`round ${round}`);
        }
      }
      // A passcode set on A locks the document on B at once.
      await api(
        t,
        'POST',
        `/api/drops/${created.slug}/passcode`,
        { passcode: 'abcd' },
        `${a?.baseUrl}/api/drops/${created.slug}/passcode`,
      );
      await expect.poll(async () => (await fetch(raw)).status, { timeout: 2000, interval: 5 }).toBe(401);
    });

    it('refuse on B a token revoked on A', async () => {
      const [a, b] = instances;
      const t = await token('revoker');
      const me = (await (await api(t, 'GET', '/api/me', undefined, `${b?.baseUrl}/api/me`)).json()) as {
        token: { id: string };
      };
      expect(
        (await api(t, 'DELETE', `/api/tokens/${me.token.id}`, undefined, `${a?.baseUrl}/api/tokens/${me.token.id}`))
          .status,
      ).toBe(204);
      expect((await api(t, 'GET', '/api/me', undefined, `${b?.baseUrl}/api/me`)).status).toBe(401);
    });

    it('count views on every instance without losing any', async () => {
      const t = await token('views');
      const created = (await (await api(t, 'POST', '/api/drops', { title: 't', html: page() })).json()) as {
        slug: string;
      };
      await Promise.all(Array.from({ length: 30 }, () => fetch(url(`/p/${created.slug}`)).then((r) => r.text())));
      await expect
        .poll(
          async () =>
            ((await (await api(t, 'GET', `/api/drops/${created.slug}`)).json()) as { view_count: number }).view_count,
          { timeout: 15_000, interval: 500 },
        )
        .toBe(30);
    });

    it('wake a comment wait on A within a second of a comment taken by B', async () => {
      const [a, b] = instances;
      const t = await token('feedback');
      const created = (await (await api(t, 'POST', '/api/drops', { title: 't', html: page() })).json()) as {
        slug: string;
      };
      const since = Date.now();
      const waiting = api(t, 'GET', '', undefined, `${a?.baseUrl}/api/comments?since=${since}&wait=30`).then(
        async (r) => (await r.json()) as { data: Array<{ body: string; slug: string }> },
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const posted = Date.now();
      const made = await api(t, 'POST', '', { body: 'from B' }, `${b?.baseUrl}/api/drops/${created.slug}/comments`);
      expect(made.status).toBe(201);
      const answer = await waiting;
      expect(Date.now() - posted).toBeLessThan(1000);
      expect(answer.data).toEqual([expect.objectContaining({ slug: created.slug, body: 'from B' })]);
    });
  });
}
