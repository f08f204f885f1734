/**
 * Previews and embeds through inject() (docs/api.md, "Previews and embeds"; docs/decisions/0038-previews-and-embeds.md):
 * the title card without a browser, the protected card of a locked drop, caching, and the stored screenshots' life
 * with their versions. The Chromium screenshots are in previews.browser.test.ts.
 */
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyHash } from '../src/storage/bodies.js';
import { openAtMigration } from './databases.js';
import { createHarness, createTestClock, type Harness, page } from './helpers.js';
import { decodePng, differingShare } from './png.js';

let h: Harness;
let token: string;
const clock = createTestClock();

beforeAll(async () => {
  h = await createHarness({ limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 }, clock });
  token = await h.token('publisher');
});
afterAll(() => h.close());

async function publish(body: Record<string, unknown> = {}) {
  const reply = await h.call('POST', '/api/drops', {
    token,
    body: { title: 'Quarterly report', description: 'Numbers of the quarter', html: page('report'), ...body },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.json as { slug: string; url: string };
}

/** GET of an image: status, headers and the bytes. */
async function image(url: string, headers: Record<string, string> = {}) {
  const response = await h.app.inject({ method: 'GET', url, headers });
  return { status: response.statusCode, headers: response.headers, bytes: response.rawPayload };
}

const cookieOf = (setCookie: unknown) => String(setCookie).split(';')[0] ?? '';

async function unlock(slug: string, passcode: string): Promise<string> {
  const reply = await h.call('POST', `/p/${slug}/unlock`, {
    rawBody: `passcode=${passcode}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://drops.test' },
  });
  expect(reply.status).toBe(303);
  return cookieOf(reply.headers['set-cookie']);
}

describe('GET /p/<slug>/preview.png without a browser', () => {
  it('answers the title card at once: a 1200x630 PNG with an ETag, 304 when held, HEAD alike', async () => {
    const { slug } = await publish();
    const card = await image(`/p/${slug}/preview.png`);
    expect(card.status).toBe(200);
    expect(card.headers['content-type']).toBe('image/png');
    expect(card.headers['x-preview']).toBe('card');
    expect(card.headers['cache-control']).toBe('public, max-age=300');
    const png = decodePng(card.bytes);
    expect([png.width, png.height]).toEqual([1200, 630]);
    const etag = String(card.headers.etag);
    expect(etag).toMatch(/^"card-/);
    const again = await image(`/p/${slug}/preview.png?v=1`, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    const head = await h.app.inject({ method: 'HEAD', url: `/p/${slug}/preview.png` });
    expect(head.statusCode).toBe(200);
    expect(head.headers.etag).toBe(etag);
  });

  it('draws what the card shows: another title or version is another image', async () => {
    const { slug } = await publish();
    const first = await image(`/p/${slug}/preview.png`);
    await h.call('PATCH', `/api/drops/${slug}`, { token, body: { title: 'Another title entirely' } });
    const retitled = await image(`/p/${slug}/preview.png`);
    expect(retitled.headers.etag).not.toBe(first.headers.etag);
    expect(differingShare(decodePng(first.bytes), decodePng(retitled.bytes))).toBeGreaterThan(0.005);
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('second') } });
    const v2 = await image(`/p/${slug}/preview.png`);
    const v1 = await image(`/p/${slug}/preview.png?v=1`);
    expect(v2.headers.etag).not.toBe(v1.headers.etag);
    expect(v1.headers.etag).toBe(retitled.headers.etag);
  });

  it('is 404 for an unknown drop, an unknown or impossible version, a bad slug; 410 once expired', async () => {
    const { slug } = await publish();
    expect((await image(`/p/${slug}/preview.png?v=9`)).status).toBe(404);
    expect((await image(`/p/${slug}/preview.png?v=x`)).status).toBe(404);
    expect((await image('/p/nosuchdrop/preview.png')).status).toBe(404);
    expect((await image('/p/no%20such/preview.png')).status).toBe(404);
    const expiring = await publish({ expires_at: clock.now() + 120_000 });
    const before = await image(`/p/${expiring.slug}/preview.png`);
    // No cache keeps it past the expiry.
    expect(before.headers['cache-control']).toBe('public, max-age=120');
    clock.advance(121_000);
    expect((await image(`/p/${expiring.slug}/preview.png`)).status).toBe(410);
  });
});

describe('a locked drop', () => {
  it('shows visitors without its passcode the generic protected card, the same for every drop, kept privately', async () => {
    const a = await publish({ title: 'Secret plans', passcode: 'letmein' });
    const b = await publish({ title: 'Other secret', description: 'x', passcode: 'letmein' });
    const cardA = await image(`/p/${a.slug}/preview.png`);
    const cardB = await image(`/p/${b.slug}/preview.png?v=7`);
    expect(cardA.status).toBe(200);
    expect(cardA.headers['cache-control']).toBe('private, no-store');
    expect(cardA.headers['x-preview']).toBe('card');
    // Nothing of either drop on it, not even whether version 7 exists.
    expect(cardB.status).toBe(200);
    expect(cardB.bytes.equals(cardA.bytes)).toBe(true);
    expect(cardA.headers.etag).toBe(cardB.headers.etag);
    // With the capability the viewer hands out, its own card.
    const cookie = await unlock(a.slug, 'letmein');
    const opened = await image(`/p/${a.slug}/preview.png`, { cookie });
    expect(opened.headers['cache-control']).toBe('private, no-store');
    expect(opened.headers.etag).not.toBe(cardA.headers.etag);
    expect(differingShare(decodePng(opened.bytes), decodePng(cardA.bytes))).toBeGreaterThan(0.01);
  });
});

describe('stored screenshots', () => {
  let raw: Kysely<Record<string, Record<string, unknown>>>;
  beforeAll(async () => {
    raw = (await openAtMigration(h.database, '0018-version-previews')) as unknown as typeof raw;
  });
  afterAll(() => raw.destroy());

  const refsOf = async (hash: string) =>
    (await raw.selectFrom('bodies').select('refs').where('hash', '=', hash).executeTakeFirst())?.refs;

  it('are served for their version, stored once, and go with their version and their drop', async () => {
    const { slug } = await publish();
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('two') } });
    // Any PNG stands in for a screenshot here: a card of another drop.
    const other = await publish({ title: 'Stand-in' });
    const shot = (await image(`/p/${other.slug}/preview.png`)).bytes;
    const hash = bodyHash(shot);
    expect(await h.store.keepPreview(slug, 1, shot, clock.now())).toBe(true);
    expect(await h.store.keepPreview(slug, 2, shot, clock.now())).toBe(true);
    // One of each version at most; none for a version that does not exist.
    expect(await h.store.keepPreview(slug, 2, shot, clock.now())).toBe(false);
    expect(await h.store.keepPreview(slug, 3, shot, clock.now())).toBe(false);
    expect(await h.store.keepPreview('nosuchdrop', 1, shot, clock.now())).toBe(false);
    expect(Number(await refsOf(hash))).toBe(2);

    const served = await image(`/p/${slug}/preview.png?v=1`);
    expect(served.headers['x-preview']).toBe('screenshot');
    expect(served.bytes.equals(shot)).toBe(true);
    expect(served.headers.etag).toBe(`"shot-${hash.slice(0, 32)}"`);

    await h.call('DELETE', `/api/drops/${slug}/v/1`, { token });
    expect(await h.store.findPreview(slug, 1)).toBeUndefined();
    expect(Number(await refsOf(hash))).toBe(1);
    expect((await image(`/p/${slug}/preview.png?v=2`)).headers['x-preview']).toBe('screenshot');
    await h.call('DELETE', `/api/drops/${slug}`, { token });
    expect(await refsOf(hash)).toBeUndefined();
  });
});
