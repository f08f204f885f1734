/**
 * The console's Sharing panel (docs/console.md, "Sharing"; docs/api.md, "Who can see a drop"): who can see the drop
 * set from the form as the API then reports it, a refusal with what was typed kept, recipient links made (the URL
 * shown once, on the POST's own answer) and revoked, the log shown, the CSRF and Origin checks, and another account's
 * drop. The page in Chromium is console-sharing.browser.test.ts.
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

describe('the Sharing panel', () => {
  it('sets who can see the drop and the list, as the API then reports it; a bad entry is refused, kept in the form', async () => {
    await start();
    const token = await h.token('ann');
    const slug = await publish(token);
    const s = await signIn('ann');
    const base = `/console/drops/${slug}`;
    const text = (await get(base, s.cookie)).text;
    expect(text).toContain('<option value="public" selected>');
    const saved = await as(s, `${base}/sharing`, {
      visibility: 'people',
      allow: 'dana@client.example\r\n@corp.example\r\n\r\n eve ',
    });
    expect(saved).toMatchObject({ status: 303, headers: { location: `${base}?done=sharing#sharing` } });
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json).toMatchObject({
      visibility: 'people',
      allow: ['dana@client.example', '@corp.example', 'eve'],
    });
    expect((await get(`${base}?done=sharing`, s.cookie)).text).toContain('<option value="people" selected>');

    const bad = await as(s, `${base}/sharing`, { visibility: 'people', allow: 'dana@client.example\nnot valid!' });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/id="console-error"[^>]*>allow: &quot;valid!&quot; is not a username/);
    expect(bad.text).toContain('value="Chart"');
    expect(bad.text).toContain('>dana@client.example\nnot valid!</textarea>');
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.allow).toHaveLength(3);
  });

  it('makes a link whose URL is shown once, counts its view, shows the log, and revokes it', async () => {
    await start();
    const token = await h.token('ann');
    const slug = await publish(token);
    await h.call('PATCH', `/api/drops/${slug}`, { token, body: { visibility: 'people' } });
    const s = await signIn('ann');
    const base = `/console/drops/${slug}`;
    const made = await as(s, `${base}/links`, { label: 'Dana' });
    expect(made.status).toBe(200);
    expect(made.headers['cache-control']).toBe('no-store');
    const url = /id="new-link"[^>]*>([^<]+)</.exec(made.text)?.[1] ?? '';
    expect(url).toMatch(new RegExp(`^${origin}/p/${slug}\\?k=[A-Za-z0-9]{32}$`));
    const viewer = await h.app.inject({ method: 'GET', url: url.slice(origin.length) });
    expect(viewer.statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: `/p/${slug}` })).statusCode).toBe(401);

    const shown = (await get(base, s.cookie)).text;
    expect(shown).not.toContain(url);
    expect(shown).toMatch(
      /<td data-label="For">Dana<\/td><td data-label="State">active<\/td><td data-label="Views" class="num">1<\/td>/,
    );
    expect(shown).toContain('link “Dana”');
    expect(shown).toContain('refused: sign_in_required');

    const id = (await h.call('GET', `/api/drops/${slug}/links`, { token })).json.data[0].id as string;
    const revoked = await as(s, `${base}/links/${id}/revoke`, {});
    expect(revoked).toMatchObject({ status: 303, headers: { location: `${base}?done=link-revoked#sharing` } });
    expect((await h.app.inject({ method: 'GET', url: url.slice(origin.length) })).statusCode).toBe(401);
    expect((await get(base, s.cookie)).text).toContain('<td data-label="State">revoked</td>');

    const empty = await as(s, `${base}/links`, { label: '' });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('label is 1 to 100 characters');
  });

  it('refuses every form without the CSRF token or from another Origin, and on another account’s drop; nothing changes', async () => {
    await start();
    const token = await h.token('ann');
    const slug = await publish(token);
    const s = await signIn('ann');
    const base = `/console/drops/${slug}`;
    for (const [path, fields] of [
      [`${base}/sharing`, { visibility: 'people', allow: 'x' }],
      [`${base}/links`, { label: 'Dana' }],
    ] as const) {
      const noCsrf = await post(path, fields, { cookie: s.cookie, origin });
      expect(noCsrf.status, path).toBe(403);
      const foreign = await post(
        path,
        { csrf: s.csrf, ...fields },
        { cookie: s.cookie, origin: 'https://evil.example' },
      );
      expect(foreign.status, path).toBe(403);
      const signedOut = await post(path, { csrf: s.csrf, ...fields }, { origin });
      expect(signedOut.status, path).toBe(403);
    }
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.visibility).toBe('public');
    expect((await h.call('GET', `/api/drops/${slug}/links`, { token })).json.data).toEqual([]);
    const bob = await signIn('bob');
    expect((await as(bob, `${base}/sharing`, { visibility: 'people', allow: '' })).status).toBe(404);
    expect((await as(bob, `${base}/links`, { label: 'Dana' })).status).toBe(404);
    expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.visibility).toBe('public');
  });
});
