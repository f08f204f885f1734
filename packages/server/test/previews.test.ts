/**
 * Previews and embeds through inject() (docs/api.md, "Previews and embeds"; docs/decisions/0038-previews-and-embeds.md):
 * the title card without a browser, the protected card of a locked drop, caching, and the stored screenshots' life
 * with their versions. The Chromium screenshots are in previews.browser.test.ts.
 */
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { bodyHash } from '../src/storage/bodies.js';
import { openMigrated } from './databases.js';
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
    raw = (await openMigrated(h.database)) as unknown as typeof raw;
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

const ENTITIES: Record<string, string> = { '&quot;': '"', '&#39;': "'", '&lt;': '<', '&gt;': '>', '&amp;': '&' };
const decodeEntities = (text: string) => text.replace(/&(?:quot|#39|lt|gt|amp);/g, (e) => ENTITIES[e] ?? e);

/** The `<meta>` and `<link>` tags of a page's head, as name (or property, or rel+type) to content (or href). */
function headTags(html: string): Map<string, string> {
  const head = html.slice(0, html.indexOf('</head>'));
  const tags = new Map<string, string>();
  for (const [tag] of head.matchAll(/<(?:meta|link)\b[^>]*>/g)) {
    const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
    const key =
      attr('property') ??
      attr('name') ??
      (attr('rel') === undefined ? undefined : `${attr('rel')} ${attr('type') ?? ''}`.trim());
    const value = attr('content') ?? attr('href');
    if (key !== undefined && value !== undefined) tags.set(key, decodeEntities(value));
  }
  return tags;
}

/**
 * The checks oEmbed 1.0 (https://oembed.com, section 2.3.4) makes of a response: `type` and `version` 1.0; a `rich`
 * answer's `html`, `width` and `height`; a thumbnail's three fields together; and the consumer's bounds.
 */
function oembedProblems(answer: Record<string, unknown>, bounds: { maxwidth?: number; maxheight?: number } = {}) {
  const problems: string[] = [];
  const positive = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v > 0;
  if (answer.version !== '1.0') problems.push('version');
  if (!['photo', 'video', 'link', 'rich'].includes(String(answer.type))) problems.push('type');
  if (answer.type === 'rich' || answer.type === 'video') {
    if (typeof answer.html !== 'string' || answer.html === '') problems.push('html');
    if (!positive(answer.width) || !positive(answer.height)) problems.push('width/height');
  }
  const thumbnail = ['thumbnail_url', 'thumbnail_width', 'thumbnail_height'].filter((k) => k in answer);
  if (thumbnail.length !== 0 && thumbnail.length !== 3) problems.push('thumbnail fields');
  for (const k of ['title', 'author_name', 'author_url', 'provider_name', 'provider_url', 'thumbnail_url']) {
    if (k in answer && typeof answer[k] !== 'string') problems.push(k);
  }
  const { maxwidth, maxheight } = bounds;
  if (maxwidth !== undefined && (Number(answer.width) > maxwidth || Number(answer.thumbnail_width ?? 0) > maxwidth)) {
    problems.push('maxwidth');
  }
  if (
    maxheight !== undefined &&
    (Number(answer.height) > maxheight || Number(answer.thumbnail_height ?? 0) > maxheight)
  ) {
    problems.push('maxheight');
  }
  return problems;
}

describe('link cards on the viewer', () => {
  it('carry Open Graph, a large Twitter card and the oEmbed link, with absolute URLs of this version', async () => {
    const { slug } = await publish({ title: 'Tags & "quotes"', description: 'What it shows' });
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('two') } });
    const tags = headTags((await h.call('GET', `/p/${slug}`)).text);
    expect(tags.get('og:title')).toBe('Tags & "quotes"');
    expect(tags.get('og:description')).toBe('What it shows');
    expect(tags.get('og:url')).toBe(`http://drops.test/p/${slug}`);
    expect(tags.get('og:image')).toBe(`http://drops.test/p/${slug}/preview.png?v=2`);
    expect(tags.get('og:image:width')).toBe('1200');
    expect(tags.get('og:image:height')).toBe('630');
    expect(tags.get('twitter:card')).toBe('summary_large_image');
    const oembed = tags.get('alternate application/json+oembed');
    expect(oembed).toBe(
      `http://drops.test/oembed?url=${encodeURIComponent(`http://drops.test/p/${slug}`)}&format=json`,
    );
    // Each URL answers.
    const imageUrl = new URL(tags.get('og:image') as string);
    expect((await image(imageUrl.pathname + imageUrl.search)).status).toBe(200);
    const answer = await h.call('GET', new URL(oembed as string).pathname + new URL(oembed as string).search);
    expect(answer.status).toBe(200);
    expect(oembedProblems(answer.json)).toEqual([]);
    // An older version's page points at its own image.
    const older = headTags((await h.call('GET', `/p/${slug}?v=1`)).text);
    expect(older.get('og:image')).toBe(`http://drops.test/p/${slug}/preview.png?v=1`);
  });

  it('of a locked drop are the generic protected card: no title, no oEmbed link', async () => {
    const { slug } = await publish({ title: 'Hidden title', description: 'Hidden description', passcode: 'letmein' });
    const gate = (await h.call('GET', `/p/${slug}`)).text;
    const tags = headTags(gate);
    expect(tags.get('og:title')).toBe('Protected drop');
    expect(tags.get('og:image')).toBe(`http://drops.test/p/${slug}/preview.png`);
    expect(tags.get('twitter:card')).toBe('summary_large_image');
    expect(tags.has('alternate application/json+oembed')).toBe(false);
    expect(gate).not.toContain('Hidden');
  });
});

describe('GET /oembed', () => {
  const ask = (params: Record<string, string>) => h.call('GET', `/oembed?${new URLSearchParams(params)}`);

  it('answers oEmbed 1.0 JSON: a rich iframe of the embed, its size, the provider and the thumbnail', async () => {
    const { slug, url } = await publish({ title: 'Embedded <report>' });
    const answer = await ask({ url });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['access-control-allow-origin']).toBe('*');
    expect(oembedProblems(answer.json)).toEqual([]);
    expect(answer.json).toMatchObject({
      version: '1.0',
      type: 'rich',
      title: 'Embedded <report>',
      provider_name: 'htmldrop',
      provider_url: 'http://drops.test/',
      width: 800,
      height: 600,
      thumbnail_url: `http://drops.test/p/${slug}/preview.png?v=1`,
      thumbnail_width: 1200,
      thumbnail_height: 630,
    });
    expect(answer.json.html).toBe(
      `<iframe src="http://drops.test/p/${slug}/embed" width="800" height="600" title="Embedded &lt;report&gt;" style="border:0" loading="lazy" referrerpolicy="no-referrer" allowfullscreen></iframe>`,
    );
    // A pinned version embeds that version; format=json is the same answer.
    const pinned = await ask({ url: `${url}?v=1`, format: 'json' });
    expect(pinned.json.html).toContain(`/p/${slug}/embed?v=1"`);
  });

  it('honours maxwidth and maxheight, leaving out a thumbnail that would not fit', async () => {
    const { url } = await publish();
    const small = await ask({ url, maxwidth: '400', maxheight: '300' });
    expect(oembedProblems(small.json, { maxwidth: 400, maxheight: 300 })).toEqual([]);
    expect(small.json).toMatchObject({ width: 400, height: 300 });
    expect(small.json.html).toContain('width="400" height="300"');
    expect('thumbnail_url' in small.json).toBe(false);
    const large = await ask({ url, maxwidth: '2000', maxheight: '1000' });
    expect(oembedProblems(large.json, { maxwidth: 2000, maxheight: 1000 })).toEqual([]);
    expect(large.json).toMatchObject({ width: 800, height: 600, thumbnail_width: 1200 });
    expect((await ask({ url, maxwidth: 'wide' })).json.error.code).toBe('invalid_arg');
    expect((await ask({ url, maxheight: '0' })).status).toBe(400);
  });

  it('refuses as the viewer would: unknown 404, locked 401, expired 410; xml 501; no url 400', async () => {
    const { slug, url } = await publish();
    const refusal = async (params: Record<string, string>) => {
      const reply = await ask(params);
      return [reply.status, reply.json?.error?.code];
    };
    expect(await refusal({ url: 'http://drops.test/p/nosuchdrop' })).toEqual([404, 'not_found']);
    expect(await refusal({ url: `${url}?v=9` })).toEqual([404, 'version_not_found']);
    expect(await refusal({ url: `http://elsewhere.test/p/${slug}` })).toEqual([404, 'not_found']);
    expect(await refusal({ url: `http://drops.test/console/drops/${slug}` })).toEqual([404, 'not_found']);
    expect(await refusal({ url: 'not a url' })).toEqual([404, 'not_found']);
    expect(await refusal({ url, format: 'xml' })).toEqual([501, 'unsupported_format']);
    expect(await refusal({})).toEqual([400, 'invalid_arg']);
    const locked = await publish({ passcode: 'letmein', title: 'Hidden title' });
    const lockedAnswer = await ask({ url: locked.url });
    expect([lockedAnswer.status, lockedAnswer.json.error.code]).toEqual([401, 'locked']);
    expect(lockedAnswer.text).not.toContain('Hidden title');
    const expiring = await publish({ expires_at: clock.now() + 60_000 });
    clock.advance(61_000);
    expect(await refusal({ url: expiring.url })).toEqual([410, 'expired']);
  });
});

describe('GET /p/<slug>/embed', () => {
  it('is the drop in a sandboxed frame with a link to the viewer, framed only where the viewer may be', async () => {
    const { slug } = await publish({ title: 'Framed' });
    const embed = await h.call('GET', `/p/${slug}/embed`);
    expect(embed.status).toBe(200);
    expect(embed.headers['content-security-policy']).toContain("frame-ancestors 'self'");
    expect(embed.headers['content-security-policy']).not.toContain('*');
    expect(embed.text).toMatch(
      new RegExp(
        `<iframe class="frame" id="drop-frame" src="/p/${slug}/raw/v/1/" title="Framed" sandbox="allow-scripts`,
      ),
    );
    expect(embed.text).not.toContain('allow-same-origin');
    expect(embed.text).toContain(`href="http://drops.test/p/${slug}" target="_blank"`);
    expect((await h.call('GET', `/p/${slug}/embed?v=4`)).status).toBe(404);
    expect((await h.call('GET', '/p/nosuchdrop/embed')).status).toBe(404);
  });

  it('of a locked drop shows nothing of it, only a link to open it', async () => {
    const { slug } = await publish({ title: 'Hidden title', passcode: 'letmein' });
    const embed = await h.call('GET', `/p/${slug}/embed`);
    expect(embed.status).toBe(200);
    expect(embed.headers['cache-control']).toBe('private, no-store');
    expect(embed.text).toContain('Protected drop');
    expect(embed.text).not.toContain('Hidden title');
    expect(embed.text).not.toContain('/raw');
  });
});

describe('HTMLDROP_CHROMIUM', () => {
  it('is an absolute path, or unset', () => {
    expect(loadConfig({}).chromium).toBeUndefined();
    expect(loadConfig({ HTMLDROP_CHROMIUM: ' /usr/bin/chromium ' }).chromium).toBe('/usr/bin/chromium');
    expect(() => loadConfig({ HTMLDROP_CHROMIUM: 'chromium' })).toThrow(/HTMLDROP_CHROMIUM/);
  });

  it('unset, no screenshot queue: the title card is the preview', () => {
    expect(h.services.screenshots).toBeUndefined();
  });
});

describe('console thumbnails', () => {
  const ORIGIN = 'http://drops.test';
  const pair = (header: string) => header.split(';')[0] ?? '';

  /** Signs `login` in through the local provider, as a browser does; returns the session cookie. */
  async function signIn(login: string): Promise<string> {
    const start = await h.app.inject({ method: 'GET', url: '/console/login?next=/console' });
    const signin = pair([start.headers['set-cookie'] ?? []].flat()[0] ?? '');
    const state = new URL(String(start.headers.location), ORIGIN).searchParams.get('state') ?? '';
    const done = await h.app.inject({
      method: 'POST',
      url: '/verify/callback',
      headers: { cookie: signin, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ state, username: login }).toString(),
    });
    return pair([done.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('hd_web=')) ?? '');
  }

  it('list each drop with its sized, lazy thumbnail, and the drop page with its preview', async () => {
    const { slug } = await publish({ title: 'Listed' });
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('second') } });
    const cookie = await signIn('publisher');
    const list = await h.call('GET', '/console', { headers: { cookie } });
    expect(list.text).toContain(
      `<img class="thumb" src="/console/drops/${slug}/preview.png?v=2" width="160" height="84" loading="lazy" decoding="async" alt="">`,
    );
    const dropPage = await h.call('GET', `/console/drops/${slug}`, { headers: { cookie } });
    expect(dropPage.text).toMatch(
      new RegExp(
        `<img class="preview" id="drop-preview" src="/console/drops/${slug}/preview.png\\?v=2" width="480" height="252" loading="lazy"`,
      ),
    );
  });

  it('are their owner’s image, locked drops too; refused signed out, with a bad or expired session, and to others', async () => {
    const { slug } = await publish({ title: 'Owner sees it', passcode: 'letmein' });
    const url = `/console/drops/${slug}/preview.png`;
    const owner = await signIn('publisher');
    const mine = await image(url, { cookie: owner });
    expect(mine.status).toBe(200);
    expect(mine.headers['content-type']).toBe('image/png');
    expect(mine.headers['cache-control']).toBe('private, no-cache');
    // Not the protected card a visitor gets: the version's own.
    expect(mine.headers.etag).not.toBe((await image(`/p/${slug}/preview.png`)).headers.etag);
    expect((await image(`${url}?v=1`, { cookie: owner })).status).toBe(200);
    expect((await image(`${url}?v=2`, { cookie: owner })).status).toBe(404);
    expect((await image(`${url}?v=x`, { cookie: owner })).status).toBe(404);
    expect((await image('/console/drops/nosuchdrop/preview.png', { cookie: owner })).status).toBe(404);

    expect((await image(url)).status).toBe(401);
    for (const cookie of ['hd_web=garbage', 'hd_web=e30.AAAA']) expect((await image(url, { cookie })).status).toBe(401);
    const other = await signIn('someone-else');
    const foreign = await image(url, { cookie: other });
    expect(foreign.status).toBe(404);
    expect(foreign.headers['content-type']).toContain('text/html');
    clock.advance(7 * 24 * 3600_000 + 60_000);
    expect((await image(url, { cookie: owner })).status).toBe(401);
  });
});
