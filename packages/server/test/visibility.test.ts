/**
 * Who can see a drop (docs/api.md, "Who can see a drop"): visibility and allow on the API, every path to a drop's
 * bytes for anonymous, signed-in-not-listed, listed, owner and link visitors, recipient links, the access log, and
 * caches that never answer a visitor who would be refused. Runs on both databases.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { InvalidationBus } from '../src/coordination/bus.js';
import { createPostgresBus } from '../src/coordination/postgres-bus.js';
import { createRedisCoordination } from '../src/coordination/redis.js';
import { ensureAccount, issueToken } from '../src/domain/accounts.js';
import { createTestDatabase, REDIS_URL, TEST_DIALECT } from './databases.js';
import { buildTestApp, createHarness, type Harness, page } from './helpers.js';
import { serveOnLoopback } from './served.js';

const SERVICE = 'http://localhost:8787';
let h: Harness;
let owner: string;

beforeEach(async () => {
  h = await createHarness({ env: { HTMLDROP_BASE_URL: SERVICE } });
  owner = await h.token('olga');
});
afterEach(async () => {
  await h.close();
});

const publish = async (fields: Record<string, unknown> = {}) => {
  const created = await h.call('POST', '/api/drops', {
    token: owner,
    body: { title: 'Quarterly report', html: page('secret numbers'), ...fields },
  });
  expect(created.status).toBe(201);
  return created.json as { slug: string; visibility: string; allow: string[] };
};

describe('visibility and allow on the API', () => {
  it('defaults to public with an empty list, and is set by POST, PUT and PATCH', async () => {
    const plain = await publish();
    expect(plain).toMatchObject({ visibility: 'public', allow: [] });
    const people = await publish({ visibility: 'people', allow: ['Dana@Client.Example', 'eve', '@corp.example'] });
    expect(people).toMatchObject({ visibility: 'people', allow: ['dana@client.example', 'eve', '@corp.example'] });
    const put = await h.call('PUT', `/api/drops/${plain.slug}`, {
      token: owner,
      body: { html: page('v2'), visibility: 'signed_in' },
    });
    expect(put.json).toMatchObject({ visibility: 'signed_in', latest_version: 2, allow: [] });
    const patched = await h.call('PATCH', `/api/drops/${plain.slug}`, {
      token: owner,
      body: { visibility: 'people', allow: ['dana'] },
    });
    expect(patched.json).toMatchObject({ visibility: 'people', allow: ['dana'] });
    const got = await h.call('GET', `/api/drops/${plain.slug}`, { token: owner });
    expect(got.json).toMatchObject({ visibility: 'people', allow: ['dana'] });
    // A PATCH that does not name them keeps them.
    const kept = await h.call('PATCH', `/api/drops/${plain.slug}`, { token: owner, body: { title: 'Renamed' } });
    expect(kept.json).toMatchObject({ visibility: 'people', allow: ['dana'] });
  });

  it.each([
    [{ visibility: 'friends' }, 'visibility'],
    [{ visibility: 'people', allow: 'dana' }, 'allow'],
    [{ visibility: 'people', allow: ['not an entry'] }, 'allow'],
    [{ visibility: 'people', allow: ['@nodot'] }, 'allow'],
    [{ visibility: 'people', allow: ['a@b@c.example'] }, 'allow'],
    [{ visibility: 'people', allow: [''] }, 'allow'],
    [{ visibility: 'people', allow: Array.from({ length: 101 }, (_, i) => `user${i}`) }, 'allow'],
  ])('refuses %j with 400 invalid_arg', async (fields, field) => {
    const created = await h.call('POST', '/api/drops', { token: owner, body: { title: 't', html: page(), ...fields } });
    expect(created.status).toBe(400);
    expect(created.json.error.code).toBe('invalid_arg');
    expect(JSON.stringify(created.json.error)).toContain(field);
    const drop = await publish();
    const patched = await h.call('PATCH', `/api/drops/${drop.slug}`, { token: owner, body: fields });
    expect(patched.status).toBe(400);
    expect(patched.json.error.code).toBe('invalid_arg');
  });
});

const pair = (header: string) => header.split(';')[0] ?? '';
const cookiesOf = (setCookie: string | string[] | undefined) => [setCookie ?? []].flat();

/** Signs `login` in through the local provider (the console's sign-in, which the drop's sign-in page uses). */
async function signIn(login: string, next = '/console'): Promise<{ cookie: string; location: string }> {
  const begin = await h.app.inject({ method: 'GET', url: `/console/login?next=${encodeURIComponent(next)}` });
  const state = new URL(String(begin.headers.location), SERVICE).searchParams.get('state') ?? '';
  const signin = pair(cookiesOf(begin.headers['set-cookie'])[0] ?? '');
  const done = await h.app.inject({
    method: 'POST',
    url: '/verify/callback',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: signin, origin: SERVICE },
    payload: new URLSearchParams({ state, username: login }).toString(),
  });
  expect(done.statusCode).toBe(303);
  const cookie = pair(cookiesOf(done.headers['set-cookie']).find((c) => c.startsWith('hd_web=')) ?? '');
  return { cookie, location: String(done.headers.location) };
}

const get = (url: string, headers: Record<string, string> = {}) => h.call('GET', url, { headers });

/** Every path to a drop's bytes, for one visitor's headers: the status of each. */
async function everyPath(slug: string, contentHost: string, headers: Record<string, string> = {}) {
  const paths = {
    viewer: await get(`/p/${slug}`, headers),
    raw: await get(`/p/${slug}/raw`, headers),
    pinned: await get(`/p/${slug}/raw?v=1`, headers),
    folder: await get(`/p/${slug}/raw/v/1/`, headers),
    file: await get(`/p/${slug}/raw/v/1/data.txt`, headers),
    markdown: await get(`/p/${slug}.md`, headers),
    content: await get('/', { ...headers, host: contentHost }),
    contentFile: await get('/v/1/data.txt', { ...headers, host: contentHost }),
  };
  return paths;
}

const WITH_FILE = { files: { 'data.txt': { content: 'file bytes' } } };

async function access(slug: string) {
  const log = await h.call('GET', `/api/drops/${slug}/access`, { token: owner });
  expect(log.status).toBe(200);
  return log.json.data as Array<{ outcome: string; reason: string | null; who: { kind: string; name: string | null } }>;
}

describe('every path obeys who can see a drop', () => {
  it('refuses an anonymous visitor of a people drop on every path, showing nothing of it, and logs it', async () => {
    const drop = await publish({ visibility: 'people', allow: ['dana'], ...WITH_FILE });
    const host = new URL((drop as unknown as { content_url: string }).content_url).host;
    const paths = await everyPath(drop.slug, host);
    for (const [name, reply] of Object.entries(paths)) {
      expect(reply.status, name).toBe(401);
      expect(reply.text, name).not.toContain('secret numbers');
      expect(reply.text, name).not.toContain('Quarterly report');
      expect(reply.text, name).not.toContain('file bytes');
      expect(String(reply.headers['cache-control']), name).toContain('no-store');
    }
    expect(paths.viewer.text).toContain(`/console/login?next=${encodeURIComponent(`/p/${drop.slug}`)}`);
    const log = await access(drop.slug);
    expect(log.length).toBe(8);
    expect(log.every((e) => e.outcome === 'refused' && e.reason === 'sign_in_required')).toBe(true);
    expect(log[0]?.who).toEqual({ kind: 'anonymous', name: null });
  });

  it('refuses a signed-in person who is not on the list with 403 naming them, and logs not_on_list', async () => {
    const drop = await publish({ visibility: 'people', allow: ['dana', '@client.example'], ...WITH_FILE });
    const eve = await signIn('eve');
    const viewer = await get(`/p/${drop.slug}?v=1`, { cookie: eve.cookie });
    expect(viewer.status).toBe(403);
    expect(viewer.text).toContain('eve');
    expect(viewer.text).toContain('action="/console/logout"');
    expect(viewer.text).toContain(`value="/p/${drop.slug}?v=1"`);
    expect(viewer.text).not.toContain('Quarterly report');
    for (const url of [`/p/${drop.slug}/raw`, `/p/${drop.slug}/raw/v/1/data.txt`, `/p/${drop.slug}.md`]) {
      const reply = await get(url, { cookie: eve.cookie });
      expect(reply.status, url).toBe(403);
      expect(reply.text, url).not.toContain('secret numbers');
    }
    const log = await access(drop.slug);
    expect(log[0]).toMatchObject({ outcome: 'refused', reason: 'not_on_list', who: { kind: 'person', name: 'eve' } });
  });

  it('shows a listed person the drop on the viewer, raw, files and Markdown, and logs the view', async () => {
    const drop = await publish({ visibility: 'people', allow: ['Dana'], ...WITH_FILE });
    const dana = await signIn('dana');
    const viewer = await get(`/p/${drop.slug}`, { cookie: dana.cookie });
    expect(viewer.status).toBe(200);
    expect(viewer.text).toContain('Quarterly report');
    expect(String(viewer.headers['cache-control'])).toContain('no-store');
    for (const url of [`/p/${drop.slug}/raw`, `/p/${drop.slug}/raw/v/1/data.txt`, `/p/${drop.slug}.md`]) {
      const reply = await get(url, { cookie: dana.cookie });
      expect(reply.status, url).toBe(200);
      expect(String(reply.headers['cache-control']), url).toContain('private');
    }
    // The frame carries a view grant: it opens the frame (no cookie reaches a content host) and its files.
    const frame = /<iframe[^>]+src="([^"]+)"/.exec(viewer.text)?.[1] ?? '';
    const frameUrl = new URL(frame.replaceAll('&amp;', '&'));
    expect(frameUrl.pathname).toMatch(/^\/~v\./);
    const framed = await get(frameUrl.pathname, { host: frameUrl.host });
    expect(framed.status).toBe(200);
    expect(framed.text).toContain('secret numbers');
    const framedFile = await get(`${frameUrl.pathname}data.txt`, { host: frameUrl.host });
    expect(framedFile.text).toBe('file bytes');
    // Taken off the list: the grant they hold stops opening the frame at once.
    await h.call('PATCH', `/api/drops/${drop.slug}`, { token: owner, body: { allow: ['someone-else'] } });
    expect((await get(frameUrl.pathname, { host: frameUrl.host })).status).not.toBe(200);
    expect((await get(`/p/${drop.slug}`, { cookie: dana.cookie })).status).toBe(403);
    const log = await access(drop.slug);
    expect(log.find((e) => e.outcome === 'viewed')).toMatchObject({ who: { kind: 'person', name: 'dana' } });
  });

  it('decides the events stream and the preview image as the viewer does, for the person signed in', async () => {
    const drop = await publish({ visibility: 'people', allow: ['dana'] });
    expect((await get(`/p/${drop.slug}/events`)).status).toBe(401);
    const eve = await signIn('eve');
    expect((await get(`/p/${drop.slug}/events`, { cookie: eve.cookie })).status).toBe(403);
    const hidden = await get(`/p/${drop.slug}/preview.png`, { cookie: eve.cookie });
    const dana = await signIn('dana');
    const shown = await get(`/p/${drop.slug}/preview.png`, { cookie: dana.cookie });
    expect([hidden.status, shown.status]).toEqual([200, 200]);
    // Eve gets the protected card every refused visitor gets; Dana the drop's own card.
    expect(hidden.headers.etag).toBe((await get(`/p/${drop.slug}/preview.png`)).headers.etag);
    expect(shown.headers.etag).not.toBe(hidden.headers.etag);
  });

  it('opens for the owner (session or token), and for anyone signed in when visibility is signed_in', async () => {
    const drop = await publish({ visibility: 'people', allow: [] });
    const olga = await signIn('olga');
    expect((await get(`/p/${drop.slug}`, { cookie: olga.cookie })).status).toBe(200);
    const auth = { authorization: `Bearer ${owner}` };
    expect((await get(`/p/${drop.slug}/raw`, auth)).status).toBe(200);
    expect((await get(`/p/${drop.slug}.md`, auth)).status).toBe(200);
    // Another account's token is no one in particular here.
    const stranger = await h.token('mallory');
    expect((await get(`/p/${drop.slug}/raw`, { authorization: `Bearer ${stranger}` })).status).toBe(401);
    expect((await get(`/p/${drop.slug}/raw`, { authorization: 'Bearer hd_malformed' })).status).toBe(401);
    await h.call('PATCH', `/api/drops/${drop.slug}`, { token: owner, body: { visibility: 'signed_in' } });
    const anyone = await signIn('zed');
    expect((await get(`/p/${drop.slug}`, { cookie: anyone.cookie })).status).toBe(200);
    expect((await get(`/p/${drop.slug}`)).status).toBe(401);
    // allow is kept but has no effect unless visibility is people.
    await h.call('PATCH', `/api/drops/${drop.slug}`, { token: owner, body: { visibility: 'public', allow: ['x'] } });
    expect((await get(`/p/${drop.slug}/raw`)).status).toBe(200);
  });

  it('applies a passcode on top for a listed person', async () => {
    const drop = await publish({ visibility: 'people', allow: ['dana'], passcode: 'open sesame' });
    const dana = await signIn('dana');
    const gate = await get(`/p/${drop.slug}`, { cookie: dana.cookie });
    expect(gate.status).toBe(200);
    expect(gate.text).toContain('name="passcode"');
    expect(gate.text).not.toContain('Quarterly report');
    expect((await get(`/p/${drop.slug}`)).status).toBe(401);
  });

  it('comes back to the same drop and version after signing in', async () => {
    const drop = await publish({ visibility: 'people', allow: ['dana'] });
    const refused = await get(`/p/${drop.slug}?v=1`);
    const href = /id="sign-in" href="([^"]+)"/.exec(refused.text)?.[1]?.replaceAll('&amp;', '&') ?? '';
    const next = new URL(href, SERVICE).searchParams.get('next') ?? '';
    expect(next).toBe(`/p/${drop.slug}?v=1`);
    const dana = await signIn('dana', next);
    expect(dana.location).toBe(`/p/${drop.slug}?v=1`);
    expect((await get(dana.location, { cookie: dana.cookie })).status).toBe(200);
  });
});

describe('caches never answer a visitor who would be refused', () => {
  it('stops serving a cached public answer once the drop turns people (real socket, fast path)', async () => {
    await h.close();
    const served = await serveOnLoopback();
    h = served.h;
    owner = await h.token('olga');
    const drop = await publish();
    const raw = `${served.base}/p/${drop.slug}/raw`;
    for (let i = 0; i < 2; i++) expect((await fetch(raw)).status).toBe(200);
    expect(h.services.rawCache.size).toBeGreaterThan(0);
    await h.call('PATCH', `/api/drops/${drop.slug}`, { token: owner, body: { visibility: 'people', allow: ['dana'] } });
    for (let i = 0; i < 2; i++) {
      const again = await fetch(raw);
      expect(again.status).toBe(401);
      expect(await again.text()).not.toContain('secret numbers');
    }
    // A listed person's answer is not kept for anyone else either.
    await h.call('PATCH', `/api/drops/${drop.slug}`, { token: owner, body: { visibility: 'signed_in' } });
    expect((await fetch(raw, { headers: { authorization: `Bearer ${owner}` } })).status).toBe(200);
    expect((await fetch(raw)).status).toBe(401);
  });
});

describe('recipient links', () => {
  const linkOf = async (slug: string, body: Record<string, unknown> = { label: 'Dana' }) => {
    const made = await h.call('POST', `/api/drops/${slug}/links`, { token: owner, body });
    expect(made.status).toBe(201);
    return made.json as { id: string; url: string; label: string; views: number; revoked_at: number | null };
  };
  const pathOf = (url: string) => url.slice(SERVICE.length);

  it('makes a link shown once, stored hashed, that opens a people drop for an anonymous visitor and counts its view', async () => {
    const drop = await publish({ visibility: 'people', allow: ['dana@client.example'], passcode: 'open sesame' });
    const link = await linkOf(drop.slug);
    expect(link).toMatchObject({ label: 'Dana', views: 0, revoked_at: null, expires_at: null, last_viewed_at: null });
    expect(link.id).toMatch(/^l_[A-Za-z0-9]+$/);
    expect(link.url).toMatch(new RegExp(`^${SERVICE}/p/${drop.slug}\\?k=[A-Za-z0-9]{32}$`));
    const secret = new URL(link.url).searchParams.get('k') ?? '';
    const listed = await h.call('GET', `/api/drops/${drop.slug}/links`, { token: owner });
    expect(listed.json.data).toEqual([expect.objectContaining({ id: link.id, label: 'Dana', views: 0 })]);
    expect(listed.text).not.toContain(secret);
    const stored = JSON.stringify(await h.store.listLinks(drop.slug));
    expect(stored).not.toContain(secret);

    // Whatever its visibility and passcode: the viewer opens, and keeps the link for the drop's other paths.
    const viewer = await get(pathOf(link.url));
    expect(viewer.status).toBe(200);
    expect(viewer.text).toContain('Quarterly report');
    const kept = pair(cookiesOf(viewer.headers['set-cookie']).find((c) => c.startsWith('hd_link=')) ?? '');
    expect(kept).toBe(`hd_link=${secret}`);
    expect((await get(`/p/${drop.slug}/raw`, { cookie: kept })).status).toBe(200);
    const frame = /<iframe[^>]+src="([^"]+)"/.exec(viewer.text)?.[1] ?? '';
    const frameUrl = new URL(frame);
    expect((await get(frameUrl.pathname, { host: frameUrl.host })).status).toBe(200);

    const stats = await h.call('GET', `/api/drops/${drop.slug}/stats`, { token: owner });
    expect(stats.json.links).toEqual([{ id: link.id, label: 'Dana', views: 1, last_viewed_at: expect.any(Number) }]);
    const log = await access(drop.slug);
    expect(log[0]).toMatchObject({ outcome: 'viewed', reason: null, who: { kind: 'link', name: 'Dana' } });
  });

  it('stops a revoked link at once, also in a browser that opened it before, and says why', async () => {
    const drop = await publish({ visibility: 'people', allow: [] });
    const link = await linkOf(drop.slug);
    const viewer = await get(pathOf(link.url));
    expect(viewer.status).toBe(200);
    const kept = pair(cookiesOf(viewer.headers['set-cookie']).find((c) => c.startsWith('hd_link=')) ?? '');
    const frame = new URL(/<iframe[^>]+src="([^"]+)"/.exec(viewer.text)?.[1] ?? '');
    expect((await h.call('DELETE', `/api/drops/${drop.slug}/links/${link.id}`, { token: owner })).status).toBe(204);
    const again = await get(pathOf(link.url));
    expect(again.status).toBe(401);
    expect(again.text).toContain('revoked');
    expect(again.text).not.toContain('Quarterly report');
    expect((await get(`/p/${drop.slug}/raw`, { cookie: kept })).status).toBe(401);
    expect((await get(frame.pathname, { host: frame.host })).status).toBe(401);
    const listed = await h.call('GET', `/api/drops/${drop.slug}/links`, { token: owner });
    expect(listed.json.data[0].revoked_at).toEqual(expect.any(Number));
    expect((await access(drop.slug))[0]).toMatchObject({ reason: 'link_revoked', who: { kind: 'link', name: 'Dana' } });
    // A second revoke of the same link, or of none: 204 then 404.
    expect((await h.call('DELETE', `/api/drops/${drop.slug}/links/l_nope`, { token: owner })).status).toBe(404);
  });

  it('stops an expired link', async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    await h.close();
    h = await createHarness({ env: { HTMLDROP_BASE_URL: SERVICE }, clock });
    owner = await h.token('olga');
    const drop = await publish({ visibility: 'signed_in' });
    const link = await linkOf(drop.slug, { label: 'Short', expires_at: clock.t + 60_000 });
    expect((await get(pathOf(link.url))).status).toBe(200);
    clock.t += 60_001;
    const expired = await get(pathOf(link.url));
    expect(expired.status).toBe(401);
    expect(expired.text).toContain('expired');
    expect((await access(drop.slug))[0]).toMatchObject({ reason: 'link_expired' });
  });

  it.each([
    [{}, 'label'],
    [{ label: '' }, 'label'],
    [{ label: 'x'.repeat(101) }, 'label'],
    [{ label: 'Dana', expires_at: 5 }, 'expires_at'],
    [{ label: 'Dana', expires_at: 'soon' }, 'expires_at'],
  ])('refuses %j with 400 invalid_arg', async (body, field) => {
    const drop = await publish();
    const made = await h.call('POST', `/api/drops/${drop.slug}/links`, { token: owner, body });
    expect(made.status).toBe(400);
    expect(made.json.error.code).toBe('invalid_arg');
    expect(JSON.stringify(made.json.error)).toContain(field);
  });
});

describe('the access log', () => {
  it('answers entries since a time, newest first, and the purge deletes those older than 90 days', async () => {
    const clock = { t: Date.now(), now: () => clock.t };
    await h.close();
    h = await createHarness({ env: { HTMLDROP_BASE_URL: SERVICE }, clock });
    owner = await h.token('olga');
    const drop = await publish({ visibility: 'people', allow: ['dana'] });
    expect((await get(`/p/${drop.slug}`)).status).toBe(401);
    const first = clock.t;
    clock.t += 1000;
    const dana = await signIn('dana');
    expect((await get(`/p/${drop.slug}?v=1`, { cookie: dana.cookie })).status).toBe(200);
    const all = await h.call('GET', `/api/drops/${drop.slug}/access`, { token: owner });
    expect(all.json.data).toEqual([
      { at: first + 1000, outcome: 'viewed', reason: null, who: { kind: 'person', name: 'dana' }, version: 1 },
      {
        at: first,
        outcome: 'refused',
        reason: 'sign_in_required',
        who: { kind: 'anonymous', name: null },
        version: null,
      },
    ]);
    const since = await h.call('GET', `/api/drops/${drop.slug}/access?since=${first + 1}`, { token: owner });
    expect(since.json.data).toHaveLength(1);
    expect((await h.call('GET', `/api/drops/${drop.slug}/access?since=x`, { token: owner })).status).toBe(400);
    clock.t = first + 90 * 24 * 60 * 60_000 + 500;
    await h.services.purge();
    const after = await h.call('GET', `/api/drops/${drop.slug}/access`, { token: owner });
    expect(after.json.data.map((e: { outcome: string }) => e.outcome)).toEqual(['viewed']);
  });
});

describe.runIf(TEST_DIALECT === 'postgres')('a revoked link on another instance', () => {
  for (const busKind of ['PostgreSQL LISTEN/NOTIFY', 'Redis'] as const) {
    it(`is refused there within 1 s (${busKind} bus)`, async () => {
      const database = await createTestDatabase('postgres');
      const config = loadConfig({
        HTMLDROP_DATA_DIR: database.dataDir,
        HTMLDROP_DATABASE_URL: database.databaseUrl ?? '',
        HTMLDROP_BASE_URL: SERVICE,
      });
      const closers: Array<() => Promise<unknown>> = [];
      const instance = async () => {
        const store = database.open();
        await store.migrate();
        let bus: InvalidationBus;
        if (busKind === 'Redis') {
          const redis = createRedisCoordination(REDIS_URL, `htmldrop-test-${Math.random().toString(36).slice(2)}:`);
          bus = redis.bus;
          closers.push(() => redis.close());
        } else {
          bus = createPostgresBus(database.databaseUrl ?? '');
          closers.push(() => bus.close());
        }
        const built = await buildTestApp({ config, store, bus });
        closers.unshift(
          () => store.close(),
          () => built.app.close(),
        );
        return built;
      };
      try {
        const a = await instance();
        const b = await instance();
        // The owner's token, minted on the shared database.
        const clock = { now: () => Date.now() };
        const account = await ensureAccount(
          { store: a.services.store, clock },
          { provider: 'local', subject: 'olga', login: 'olga' },
        );
        const olga = (await issueToken(a.services.store, clock, account.id, 'test')).token;
        const call = (app: typeof a.app, method: string, url: string, body?: unknown) =>
          app.inject({
            method: method as 'GET',
            url,
            headers: {
              authorization: `Bearer ${olga}`,
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
          });
        const created = await call(a.app, 'POST', '/api/drops', {
          title: 'Report',
          html: page('secret numbers'),
          visibility: 'people',
        });
        const slug = created.json().slug as string;
        const link = (await call(a.app, 'POST', `/api/drops/${slug}/links`, { label: 'Dana' })).json() as {
          id: string;
          url: string;
        };
        const viewerPath = link.url.slice(SERVICE.length);
        // Instance B opens it (and caches the drop's document), then A revokes it.
        expect((await b.app.inject({ method: 'GET', url: viewerPath })).statusCode).toBe(200);
        expect(
          (await b.app.inject({ method: 'GET', url: `/p/${slug}/raw?k=${new URL(link.url).searchParams.get('k')}` }))
            .statusCode,
        ).toBe(200);
        const revokedAt = Date.now();
        expect((await call(a.app, 'DELETE', `/api/drops/${slug}/links/${link.id}`)).statusCode).toBe(204);
        let status = 0;
        while (Date.now() - revokedAt < 1000) {
          status = (await b.app.inject({ method: 'GET', url: viewerPath })).statusCode;
          if (status === 401) break;
        }
        expect(status).toBe(401);
        expect(Date.now() - revokedAt).toBeLessThan(1000);
        const raw = await b.app.inject({
          method: 'GET',
          url: `/p/${slug}/raw?k=${new URL(link.url).searchParams.get('k')}`,
        });
        expect(raw.statusCode).toBe(401);
        expect(raw.body).not.toContain('secret numbers');
      } finally {
        for (const close of closers) await close().catch(() => undefined);
        await database.drop();
      }
    });
  }
});
