/** The SDK against the real service (every endpoint, the device flow) and against stand-ins that misbehave. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/test/process.js';
import { createClient, HtmlDropClient, type RetryNotice } from '../src/client.js';
import { failure } from './failure.js';
import { approveDeviceCode } from './human.js';
import { PAGE } from './run.js';
import { useService } from './service.js';

const service = useService();
let client: HtmlDropClient;
beforeAll(async () => {
  client = createClient({ server: service.baseUrl, token: await service.mintToken('sdk-user') });
});

/** A stand-in service: `handler` answers every request; returns its base URL and a stop function. */
async function standIn(handler: http.RequestListener) {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('every endpoint, typed', () => {
  it('creates, reads, lists, versions, patches, locks and deletes a drop', async () => {
    const created = await client.createDrop({
      title: 'SDK',
      html: PAGE('one'),
      description: 'first',
      context: 'why v1',
      metadata: { suite: 'sdk', n: '1' },
    });
    expect(created).toMatchObject({ title: 'SDK', latest_version: 1, locked: false, view_count: 0 });
    const slug = created.slug;
    expect(await client.getDrop(slug)).toEqual(created);
    expect(await client.getRawHtml(slug)).toContain('<p>one</p>');

    const updated = await client.updateDrop(slug, { html: PAGE('two'), metadata: { suite: 'sdk', n: '2' } });
    expect(updated.latest_version).toBe(2);
    expect(await client.getRawHtml(slug, 1)).toContain('<p>one</p>');
    const patched = await client.patchDrop(slug, { title: 'SDK renamed' });
    expect(patched).toMatchObject({ title: 'SDK renamed', latest_version: 2 });

    const page = await client.listDrops({ metadata: { suite: 'sdk', n: '2' }, pageSize: 10, sortBy: 'updated_at' });
    expect(page.data.map((d) => d.slug)).toEqual([slug]);
    expect(page.pagination).toMatchObject({ page: 1, page_size: 10, total_items: 1, sort_by: 'updated_at' });
    expect((await client.listDrops({ metadata: { suite: 'sdk', n: '1' } })).data).toEqual([]);

    const versions = await client.listVersions(slug);
    expect(versions.map((v) => [v.version, v.has_context, v.is_latest])).toEqual([
      [2, false, true],
      [1, true, false],
    ]);
    expect(await client.getVersion(slug, 1)).toMatchObject({ slug, version: 1, context: 'why v1', is_latest: false });
    expect((await client.deleteVersion(slug, 2)).latest_version).toBe(1);
    expect((await failure(client.deleteVersion(slug, 1))).code).toBe('last_version_cannot_be_deleted');

    expect((await client.setPasscode(slug, 'letmein')).locked).toBe(true);
    expect(await failure(client.getRawHtml(slug))).toMatchObject({ code: 'unauthorized', status: 401 });
    expect((await client.removePasscode(slug)).locked).toBe(false);

    await client.deleteDrop(slug);
    const gone = await failure(client.getDrop(slug));
    expect(gone).toMatchObject({ code: 'not_found', status: 404 });
    expect(await failure(client.getRawHtml(slug))).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('pages through every drop with listAllDrops', async () => {
    for (let i = 0; i < 5; i++)
      await client.createDrop({ title: `p${i}`, html: PAGE(String(i)), metadata: { paged: 'yes' } });
    const all = await client.listAllDrops({ metadata: { paged: 'yes' }, pageSize: 2 });
    expect(all.map((d) => d.title)).toEqual(['p4', 'p3', 'p2', 'p1', 'p0']);
    expect(await client.listAllDrops({ metadata: { paged: 'yes' }, pageSize: 2 }, 3)).toHaveLength(3);
  });

  it('reads the account and tokens, and revokes a token', async () => {
    const me = await client.me();
    expect(me).toMatchObject({
      login: 'sdk-user',
      provider: 'local',
      token: { id: expect.stringMatching(/^[0-9a-f]{12}$/) },
    });
    const second = client.withToken(await service.mintToken('sdk-user'));
    const tokens = await second.listTokens();
    expect(tokens.filter((t) => t.current)).toHaveLength(1);
    await client.revokeToken((await second.me()).token.id);
    expect((await failure(second.me())).code).toBe('invalid_token');
  });

  it('serves the onboarding text, as Markdown and as JSON', async () => {
    expect(await client.onboard()).toContain('complete, standalone HTML document');
    expect(await client.onboardJson()).toMatchObject({ instructions: expect.any(String), public_url: service.baseUrl });
  });

  it("surfaces the API's error code, status and details", async () => {
    const bad = await failure(client.createDrop({ title: 'x', html: PAGE('x'), metadata: { '-bad': 'x' } }));
    expect(bad).toMatchObject({ code: 'invalid_arg', status: 400 });
    expect(bad.details).toBeDefined();
    expect((await failure(client.patchDrop('no-such-slug', { title: 'x' }))).code).toBe('not_found');
    expect((await failure(client.getDrop('bad slug!'))).code).toBe('invalid_slug');
    const anonymous = new HtmlDropClient({ server: service.baseUrl });
    expect((await failure(anonymous.me())).code).toBe('no_token');
    expect((await failure(anonymous.withToken('hd_abcdefghijklmnopqrstuvwxyz0123456789AB').me())).code).toBe(
      'invalid_token',
    );
  });
});

describe('comments and read receipts', () => {
  it('comments, lists after since (one drop or all), resolves by id or by a new version, deletes', async () => {
    const drop = await client.createDrop({ title: 'Loop', html: PAGE('v1'), comments: 'open' });
    expect(drop.comments).toBe('open');
    expect((await client.patchDrop(drop.slug, { comments: 'off' })).comments).toBe('off');
    const first = await client.comment(drop.slug, { body: 'Check the totals', quote: 'Revenue up 12%' });
    expect(first).toMatchObject({
      id: expect.stringMatching(/^c_/),
      version: 1,
      quote: 'Revenue up 12%',
      author: { name: 'sdk-user', kind: 'owner' },
      resolved_at: null,
      resolved_in_version: null,
    });
    const second = await client.comment(drop.slug, { body: 'Typo' });
    expect(await client.listComments(drop.slug)).toEqual({ data: [first, second] });
    expect((await client.listComments(drop.slug, { since: first.created_at })).data).toEqual([second]);
    const everywhere = await client.listComments({ all: true }, { since: first.created_at });
    expect(everywhere.data).toEqual([{ ...second, slug: drop.slug }]);

    const updated = await client.updateDrop(drop.slug, { html: PAGE('v2'), resolves: [first.id] });
    expect(updated.latest_version).toBe(2);
    expect((await failure(client.updateDrop(drop.slug, { html: PAGE('v3'), resolves: ['c_nope'] }))).code).toBe(
      'invalid_arg',
    );
    const resolved = await client.resolveComment(drop.slug, second.id);
    expect(resolved).toMatchObject({ id: second.id, resolved_in_version: 2, resolved_at: expect.any(Number) });
    const listed = (await client.collectComments(drop.slug)).map((c) => [c.id, c.resolved_in_version]);
    expect(listed).toEqual([
      [first.id, 2],
      [second.id, 2],
    ]);
    await client.deleteComment(drop.slug, first.id);
    expect((await client.listComments(drop.slug)).data.map((c) => c.id)).toEqual([second.id]);
    expect((await failure(client.deleteComment(drop.slug, first.id))).code).toBe('not_found');
    expect(() => client.listComments(drop.slug, { wait: 61 })).toThrow(/wait is a whole number from 0 to 60/);
  });

  it('a waiting listing outlives the client timeout, and wakes when a comment arrives', async () => {
    const drop = await client.createDrop({ title: 'Wait', html: PAGE('w') });
    const token = await service.mintToken('sdk-user');
    const short = createClient({ server: service.baseUrl, token, timeoutMs: 300 });
    const started = Date.now();
    expect(await short.listComments(drop.slug, { since: Date.now(), wait: 1 })).toEqual({ data: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const since = Date.now();
    const waiting = short.collectComments(drop.slug, { since, waitSeconds: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const posted = Date.now();
    const made = await client.comment(drop.slug, { body: 'now' });
    expect(await waiting).toEqual([made]);
    expect(Date.now() - posted).toBeLessThan(2000);
  });

  it('collectComments pages on with the last created_at until a listing is empty', async () => {
    const all = [1, 2, 3].map((n) => ({ id: `c_${n}`, created_at: n * 10 }));
    const asked: string[] = [];
    const stand = await standIn((request, response) => {
      const url = new URL(request.url ?? '/', 'http://x');
      asked.push(`${url.pathname}?${url.searchParams}`);
      const since = Number(url.searchParams.get('since'));
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ data: all.filter((c) => c.created_at > since).slice(0, 2) }));
    });
    try {
      const sdk = createClient({ server: stand.url, token: 'hd_x' });
      expect((await sdk.collectComments({ all: true }, { waitSeconds: 5 })).map((c) => c.id)).toEqual([
        'c_1',
        'c_2',
        'c_3',
      ]);
      expect(asked).toEqual([
        '/api/comments?since=0&wait=5',
        '/api/comments?since=20&wait=0',
        '/api/comments?since=30&wait=0',
      ]);
    } finally {
      await stand.close();
    }
  });

  it('reads the stats of a drop', async () => {
    const drop = await client.createDrop({ title: 'Stats', html: PAGE('s') });
    expect(await client.stats(drop.slug)).toEqual({
      links: [],
      views: 0,
      unique_viewers: 0,
      first_viewed_at: null,
      last_viewed_at: null,
      versions: [{ version: 1, views: 0, unique_viewers: 0, last_viewed_at: null }],
    });
    expect((await failure(client.stats('no-such-slug'))).code).toBe('not_found');
  });
});

describe('device flow in one call', () => {
  it('shows the code through the callback, and returns the token once approved', async () => {
    const anonymous = new HtmlDropClient({ server: service.baseUrl });
    let shown = '';
    const result = await anonymous.deviceLogin({
      label: 'sdk test',
      onCode: async (prompt) => {
        shown = prompt.code;
        expect(prompt.verificationUrl).toBe(`${service.baseUrl}/verify?code=${prompt.code}`);
        expect(prompt.expiresIn).toBe(600);
        await approveDeviceCode(prompt.verificationUrl, 'sdk-human');
      },
    });
    expect(shown).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(result.userId).toMatch(/^u_/);
    expect(await anonymous.withToken(result.apiToken).me()).toMatchObject({
      login: 'sdk-human',
      token: { label: 'sdk test' },
    });
  });

  it('stops at once when the signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const error = await failure(
      new HtmlDropClient({ server: service.baseUrl }).deviceLogin({
        onCode: () => {
          setTimeout(() => controller.abort(), 100);
        },
        signal: controller.signal,
      }),
    );
    expect(error.code).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('ends with device_flow_expired when the human denies', async () => {
    const error = await failure(
      new HtmlDropClient({ server: service.baseUrl }).deviceLogin({
        onCode: (prompt) => approveDeviceCode(prompt.verificationUrl, 'sdk-denier', 'deny'),
      }),
    );
    expect(error.code).toBe('device_flow_expired');
  });
});

describe('429 retries, bounded', () => {
  it('waits Retry-After and retries, telling onRetry', async () => {
    let calls = 0;
    const stand = await standIn((_request, response) => {
      calls++;
      if (calls <= 2) {
        response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        response.end(
          JSON.stringify({
            error: { code: 'rate_limited', message: 'slow down', details: { retry_after_seconds: 1 } },
          }),
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          data: [],
          pagination: {
            page: 1,
            page_size: 50,
            total_items: 0,
            total_pages: 0,
            sort_by: 'created_at',
            sort_order: 'desc',
          },
        }),
      );
    });
    try {
      const notices: RetryNotice[] = [];
      const started = Date.now();
      const result = await createClient({
        server: stand.url,
        token: 'hd_x',
        onRetry: (n) => notices.push(n),
      }).listDrops();
      expect(result.data).toEqual([]);
      expect(notices).toEqual([
        { attempt: 1, waitSeconds: 1, code: 'rate_limited' },
        { attempt: 2, waitSeconds: 1, code: 'rate_limited' },
      ]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    } finally {
      await stand.close();
    }
  });

  it('gives up after maxRetries, at once beyond maxRetryWaitSeconds, and never retries quota_exceeded', async () => {
    let calls = 0;
    let answer = { code: 'rate_limited', retryAfter: '1' as string | undefined };
    const stand = await standIn((_request, response) => {
      calls++;
      response.writeHead(429, {
        'content-type': 'application/json',
        ...(answer.retryAfter === undefined ? {} : { 'retry-after': answer.retryAfter }),
      });
      response.end(JSON.stringify({ error: { code: answer.code, message: 'no' } }));
    });
    try {
      const noRetry = await failure(createClient({ server: stand.url, token: 'hd_x', maxRetries: 0 }).me());
      expect(noRetry).toMatchObject({ code: 'rate_limited', status: 429, retryAfterSeconds: 1 });
      expect(calls).toBe(1);

      answer = { code: 'daily_quota_exceeded', retryAfter: '3600' };
      calls = 0;
      const tooLong = await failure(createClient({ server: stand.url, token: 'hd_x', maxRetryWaitSeconds: 60 }).me());
      expect(tooLong).toMatchObject({ code: 'daily_quota_exceeded', retryAfterSeconds: 3600 });
      expect(calls).toBe(1);

      answer = { code: 'quota_exceeded', retryAfter: undefined };
      calls = 0;
      expect((await failure(createClient({ server: stand.url, token: 'hd_x' }).me())).code).toBe('quota_exceeded');
      expect(calls).toBe(1);
    } finally {
      await stand.close();
    }
  });
});

describe('transport failures have their own codes', () => {
  it('network_error when nothing listens', async () => {
    const port = await freePort();
    const error = await failure(createClient({ server: `http://127.0.0.1:${port}` }).onboard());
    expect(error.code).toBe('network_error');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('bad_response for non-JSON and for JSON errors that are not the API shape', async () => {
    const stand = await standIn((request, response) => {
      if (request.url === '/api/me') {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end('{"message":"boom"}');
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>proxy login</html>');
    });
    try {
      const c = createClient({ server: stand.url, token: 'hd_x' });
      expect(await failure(c.listDrops())).toMatchObject({ code: 'bad_response', status: 200 });
      expect(await failure(c.me())).toMatchObject({ code: 'bad_response', status: 500 });
    } finally {
      await stand.close();
    }
  });

  it('timeout when the service does not answer in time', async () => {
    const stand = await standIn(() => {
      // never answers
    });
    try {
      const error = await failure(createClient({ server: stand.url, timeoutMs: 200 }).onboard());
      expect(error.code).toBe('timeout');
    } finally {
      await stand.close();
    }
  });

  it('refuses a server address that is not http(s)', () => {
    expect(() => createClient({ server: 'localhost:8787' })).toThrow(/must start with http/);
    expect(createClient({ server: 'http://example.test/base/' }).server).toBe('http://example.test/base');
  });
});
