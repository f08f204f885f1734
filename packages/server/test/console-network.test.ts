/**
 * The console's view of a drop's own origin and its network policy (docs/console.md; docs/api.md, "Each drop on its
 * own origin"): the policy set from the details form as the API then reports it, refusals with what was typed kept,
 * the CSRF and Origin checks and another account's drop, and the own-origin link only where one is configured. The
 * rest of the console is console.test.ts; the page in Chromium is console-network.browser.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { consoleClient } from './console-session.js';
import { createHarness, type Harness, page } from './helpers.js';

let h: Harness;
let origin: string;

async function start(baseUrl = 'http://drops.test') {
  origin = baseUrl;
  h = await createHarness({ env: { HTMLDROP_BASE_URL: baseUrl } });
}
afterEach(async () => {
  await h.close();
});

const { get, post, signIn, as } = consoleClient(() => ({ harness: h, origin }));

async function publish(token: string) {
  const created = await h.call('POST', '/api/drops', { token, body: { title: 'Chart', html: page('Chart') } });
  expect(created.status).toBe(201);
  return created.json.slug as string;
}

/** The details form as the page posts it, with the network control set. */
const details = (network: string, origins = '') => ({
  title: 'Chart',
  description: '',
  tags: '',
  comments: 'signed_in',
  network,
  network_origins: origins,
});

describe('the network control of the details form', () => {
  it('sets none, a list, and open again, as the API then reports it; the page shows the policy', async () => {
    await start();
    const token = await h.token('ann');
    const slug = await publish(token);
    const s = await signIn('ann');
    const base = `/console/drops/${slug}`;
    const network = async () => (await h.call('GET', `/api/drops/${slug}`, { token })).json.network;
    const shown = async () => (await get(base, s.cookie)).text;

    expect(await network()).toBe('open');
    let text = await shown();
    expect(text).toMatch(/id="network-now"><strong>Network:<\/strong> open \(it may load anything/);
    expect(text).toContain('<option value="open" selected>Anything (open)</option>');

    const none = await as(s, `${base}/details`, details('none', 'https://ignored.example'));
    expect(none).toMatchObject({ status: 303, headers: { location: `${base}?done=saved` } });
    expect(await network()).toBe('none');
    text = await shown();
    expect(text).toContain('<strong>Network:</strong> none (it loads nothing from the network');
    expect(text).toContain('<option value="none" selected>Nothing from the network (none)</option>');

    const origins = 'https://cdn.jsdelivr.net\r\n\r\n  https://fonts.example:8443  \r\n';
    expect((await as(s, `${base}/details`, details('list', origins))).status).toBe(303);
    expect(await network()).toEqual(['https://cdn.jsdelivr.net', 'https://fonts.example:8443']);
    text = await shown();
    expect(text).toContain('<option value="list" selected>Only these origins</option>');
    expect(text).toContain(
      'rows="3" placeholder="https://cdn.jsdelivr.net">https://cdn.jsdelivr.net\nhttps://fonts.example:8443</textarea>',
    );
    expect(text).toContain(
      'only <span class="mono">https://cdn.jsdelivr.net</span>, <span class="mono">https://fonts.example:8443</span> (anything else',
    );

    // A form without the control (as before it existed) leaves the policy as it is.
    const { network: _n, network_origins: _o, ...without } = details('open');
    expect((await as(s, `${base}/details`, { ...without, title: 'Renamed' })).status).toBe(303);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json).toMatchObject({
      title: 'Renamed',
      network: ['https://cdn.jsdelivr.net', 'https://fonts.example:8443'],
    });

    expect((await as(s, `${base}/details`, details('open', 'https://cdn.jsdelivr.net'))).status).toBe(303);
    expect(await network()).toBe('open');
  });

  it('refuses a bad origin, an empty list and an unknown choice with the message and the typed values; nothing changes', async () => {
    await start();
    const token = await h.token('ann');
    const slug = await publish(token);
    expect((await h.call('PATCH', `/api/drops/${slug}`, { token, body: { network: 'none' } })).status).toBe(200);
    const s = await signIn('ann');
    const base = `/console/drops/${slug}`;

    const bad = await as(s, `${base}/details`, {
      ...details('list', 'https://cdn.jsdelivr.net\nhttps://cdn.example/lib.js'),
      title: 'Typed title',
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(
      /id="console-error"[^>]*>network: &quot;https:\/\/cdn.example\/lib.js&quot; is not an origin/,
    );
    expect(bad.text).toContain('value="Typed title"');
    expect(bad.text).toContain('<option value="list" selected>');
    expect(bad.text).toContain('>https://cdn.jsdelivr.net\nhttps://cdn.example/lib.js</textarea>');

    const empty = await as(s, `${base}/details`, details('list', ' \n '));
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('Write at least one origin (one per line)');
    const eleven = Array.from({ length: 11 }, (_, i) => `https://cdn${i}.example`).join('\n');
    expect((await as(s, `${base}/details`, details('list', eleven))).status).toBe(400);
    const unknown = await as(s, `${base}/details`, details('everything'));
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('Choose what the drop may load from the list.');

    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json).toMatchObject({
      title: 'Chart',
      network: 'none',
    });
  });

  it("changes nothing without the session's CSRF token, from another Origin, or on another account's drop", async () => {
    await start();
    const token = await h.token('ann');
    const slug = await publish(token);
    const ann = await signIn('ann');
    const bob = await signIn('bob');
    const url = `/console/drops/${slug}/details`;
    const fields = details('list', 'https://evil.example');
    const attempts: Array<[Record<string, string>, Record<string, string>]> = [
      [{}, { cookie: ann.cookie, origin }],
      [{ csrf: 'AAAA' }, { cookie: ann.cookie, origin }],
      [{ csrf: bob.csrf }, { cookie: ann.cookie, origin }],
      [{ csrf: ann.csrf }, { cookie: ann.cookie }],
      [{ csrf: ann.csrf }, { cookie: ann.cookie, origin: 'http://evil.test' }],
    ];
    for (const [extra, headers] of attempts) {
      const refused = await post(url, { ...fields, ...extra }, headers);
      expect(refused.status, `${JSON.stringify(extra)} ${JSON.stringify(headers)}`).toBe(403);
    }
    expect((await as(bob, url, fields)).status).toBe(404);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.network).toBe('open');
  });
});

describe("the drop's own origin on its page", () => {
  it('is a link opening in a new tab when content origins are configured', async () => {
    await start('http://localhost:8787');
    const token = await h.token('ann');
    const slug = await publish(token);
    const contentUrl = (await h.call('GET', `/api/drops/${slug}`, { token })).json.content_url as string;
    expect(contentUrl).toMatch(/^http:\/\/[0-9a-z]{20}\.localhost:8787\/$/);
    const text = (await get(`/console/drops/${slug}`, (await signIn('ann')).cookie)).text;
    expect(text).toContain(
      `<strong>Own origin:</strong> <a href="${contentUrl}" target="_blank" rel="noopener noreferrer" id="own-origin-link"`,
    );
    expect(text).toMatch(/id="own-origin-hint">Opens in a new tab: [^<]*storage/);
  });

  it('is not shown when no content origin is configured (content_url is null)', async () => {
    await start();
    const token = await h.token('ann');
    const slug = await publish(token);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.content_url).toBeNull();
    const text = (await get(`/console/drops/${slug}`, (await signIn('ann')).cookie)).text;
    expect(text).not.toContain('id="own-origin"');
    expect(text).toContain('id="network-now"');
  });
});
