/** Browser-facing paths outside the API (docs/api.md, "Browser paths"): HTML where a person looks, JSON for clients. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptQuality, preferredType, prefersHtml } from '../src/http/accept.js';
import { createHarness, type Harness, page } from './helpers.js';

/** What Chromium sends when it navigates to a page. */
const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';

let h: Harness;
let token: string;

beforeAll(async () => {
  h = await createHarness();
  token = await h.token('alice');
});
afterAll(() => h.close());

describe('Accept negotiation', () => {
  it.each([
    [BROWSER_ACCEPT, true],
    ['text/html', true],
    ['*/*', false],
    [undefined, false],
    ['', false],
    ['application/json', false],
    ['application/json, text/html;q=0.5', false],
    ['text/html;q=0, */*', false],
    ['text/*;q=0.9, application/json;q=0.5', true],
    // A tie in quality goes to the more specific range (as the negotiator package of Express and Koa decides).
    ['text/html,*/*', true],
    ['*/*, text/html', true],
    ['application/json, text/html', false],
    ['text/html, application/json', true],
    ['text/*, application/json', false],
  ])('Accept %j prefers HTML: %s', (accept, expected) => {
    expect(prefersHtml(accept)).toBe(expected);
  });

  it('picks among offers by quality, then specificity, then position', () => {
    expect(preferredType('text/html,*/*', ['application/json', 'text/html'])).toBe('text/html');
    expect(preferredType('*/*', ['application/json', 'text/html'])).toBe('application/json');
    expect(preferredType('image/png', ['application/json', 'text/html'])).toBeUndefined();
    expect(preferredType(undefined, ['text/markdown', 'text/html'])).toBe('text/markdown');
  });

  it('takes the quality of the most specific range', () => {
    expect(acceptQuality('text/*;q=0.3, text/html;q=0.7, */*;q=0.1', 'text/html')).toBe(0.7);
    expect(acceptQuality('text/*;q=0.3, */*;q=0.1', 'text/plain')).toBe(0.3);
    expect(acceptQuality('image/png', 'text/html')).toBe(0);
  });
});

describe('unmatched paths', () => {
  it.each([
    ['/nope', BROWSER_ACCEPT],
    ['/favicon.png', BROWSER_ACCEPT],
    ['/p', BROWSER_ACCEPT],
    ['/console/nothing', BROWSER_ACCEPT],
    ['/nope', 'text/html,*/*'],
  ])('%s in a browser (Accept %j) is an HTML 404 page linking home', async (url, accept) => {
    const reply = await h.call('GET', url, { headers: { accept } });
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toMatch(/^text\/html/);
    expect(reply.text).toContain('Page not found');
    expect(reply.text).toContain('href="/"');
  });

  it('the same path from curl or a client without Accept is JSON', async () => {
    const variants: Record<string, string>[] = [{ accept: '*/*' }, {}];
    for (const headers of variants) {
      const reply = await h.call('GET', '/nope', { headers });
      expect(reply.status).toBe(404);
      expect(reply.json.error.code).toBe('not_found');
    }
  });

  it('/api/ is always JSON, also for a browser', async () => {
    const reply = await h.call('GET', '/api/nothing', { headers: { accept: BROWSER_ACCEPT } });
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(reply.json.error.code).toBe('not_found');
  });
});

describe('service files', () => {
  it('/favicon.ico is a 32x32 icon', async () => {
    const reply = await h.app.inject({ method: 'GET', url: '/favicon.ico' });
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-type']).toBe('image/x-icon');
    const bytes = reply.rawPayload;
    expect(bytes.readUInt16LE(0)).toBe(0); // reserved
    expect(bytes.readUInt16LE(2)).toBe(1); // icon
    expect(bytes.readUInt16LE(4)).toBe(1); // one image
    expect([bytes[6], bytes[7]]).toEqual([32, 32]);
    expect(bytes.readUInt32LE(18) + bytes.readUInt32LE(14)).toBe(bytes.length);
  });

  it('/robots.txt keeps crawlers off drops', async () => {
    const reply = await h.call('GET', '/robots.txt');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/plain/);
    expect(reply.text).toMatch(/^User-agent: \*$/m);
    expect(reply.text).toMatch(/^Disallow: \/$/m);
  });

  it('the landing page has a title of its own', async () => {
    const reply = await h.call('GET', '/', { headers: { accept: BROWSER_ACCEPT } });
    expect(reply.text).toContain('<title>htmldrop: hosting for self-contained HTML</title>');
  });
});

describe('the viewer with an unknown version', () => {
  let slug: string;
  beforeAll(async () => {
    const created = await h.call('POST', '/api/drops', { token, body: { title: 'Report', html: page('one') } });
    slug = created.json.slug;
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('two') } });
  });

  it.each(['7', '0', 'abc', '99999999999'])(
    '?v=%s says that version does not exist and links the latest',
    async (v) => {
      const reply = await h.call('GET', `/p/${slug}?v=${v}`);
      expect(reply.status).toBe(404);
      expect(reply.headers['content-type']).toMatch(/^text\/html/);
      expect(reply.text).toContain('Version not found');
      expect(reply.text).toContain(`Version ${v} of this drop does not exist`);
      expect(reply.text).toContain(`href="/p/${slug}"`);
      expect(reply.text).toContain('version 2');
      expect(reply.text).not.toContain('was deleted. Check the link');
    },
  );

  it('an unknown drop still says the drop does not exist', async () => {
    const reply = await h.call('GET', '/p/NoSuchDrop1?v=1');
    expect(reply.status).toBe(404);
    expect(reply.text).toContain('This drop does not exist');
  });

  it('a locked drop shows its gate before saying anything about versions', async () => {
    const created = await h.call('POST', '/api/drops', {
      token,
      body: { title: 'Secret', html: page('s'), passcode: 'open-sesame' },
    });
    const reply = await h.call('GET', `/p/${created.json.slug}?v=9`);
    expect(reply.status).toBe(200);
    expect(reply.text).not.toContain('Version not found');
    expect(reply.text).toContain('passcode');
  });
});
