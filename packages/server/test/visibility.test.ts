/**
 * Who can see a drop (docs/api.md, "Who can see a drop"): visibility and allow on the API, every path to a drop's
 * bytes for anonymous, signed-in-not-listed, listed, owner and link visitors, recipient links, the access log, and
 * caches that never answer a visitor who would be refused. Runs on both databases.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, page } from './helpers.js';
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
