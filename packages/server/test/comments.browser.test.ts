/**
 * The review loop in real Chromium (docs/api.md, "Comments"): a signed-in human comments from the viewer's panel
 * while an agent's waiting GET, started before, receives it within a second; guests on `open` and `signed_in`
 * drops; a locked drop without the capability; a drop's own script against the panel and the comment form; signing
 * in from the viewer comes back to the same drop and version; a flooded drop: the panel pages, the owner still
 * comments at the cap, and the next version shows what it resolved; axe on the panel; screenshots.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, blocking, describeViolations } from './axe.js';
import { launchBrowser, screenshotPath } from './browser.js';
import { page as doc, type Harness } from './helpers.js';
import { serveOnLoopback } from './served.js';

let h: Harness;
let browser: Browser;
let base: string;
let ann: string;

beforeAll(async () => {
  // A small cap, so a flood fills it quickly (the other tests post a few comments per drop).
  ({ h, base } = await serveOnLoopback({ limits: { maxCommentsPerDrop: 60 } }));
  browser = await launchBrowser();
  ann = await h.token('ann');
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function publish(title: string, extra: Record<string, unknown> = {}, html = doc(title)): Promise<string> {
  const reply = await h.call('POST', '/api/drops', { token: ann, body: { title, html, ...extra } });
  expect(reply.status, reply.text).toBe(201);
  return reply.json.slug as string;
}

/** A form post as the viewer page's own form sends it (same origin), without any session or capability. */
const guestPost = async (slug: string, body: string) =>
  (
    await fetch(`${base}/p/${slug}/comments`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', origin: base },
      body,
    })
  ).status;

const commentsOf = async (slug: string) =>
  (await h.call('GET', `/api/drops/${slug}/comments`, { token: ann })).json.data as Array<Record<string, unknown>>;

/** Signs `login` in from the viewer's panel: the sign-in link, the local provider, and back to the same version. */
async function signInFromViewer(context: BrowserContext, slug: string, version: number, login: string): Promise<Page> {
  const p = await context.newPage();
  await p.goto(`${base}/p/${slug}?v=${version}`);
  await p.locator('#comments-toggle').click();
  await Promise.all([p.waitForURL(/\/verify\/local\?state=/), p.locator('#comment-sign-in').click()]);
  await p.locator('#username').fill(login);
  await Promise.all([p.waitForURL(`${base}/p/${slug}?v=${version}#comments`), p.locator('#local-sign-in').click()]);
  return p;
}

describe('a signed-in human and a waiting agent', () => {
  it('the comment posted in the viewer wakes the agent’s waiting GET within a second', async () => {
    const slug = await publish('Q3 report');
    await h.call('PUT', `/api/drops/${slug}`, { token: ann, body: { html: doc('Q3 report v2') } });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const p = await signInFromViewer(context, slug, 1, 'bea');
      expect(await p.locator('#comments-panel').isVisible()).toBe(true);
      expect(await p.locator('#commenting-as').textContent()).toContain('bea');
      const since = Date.now();
      const waiting = h.call('GET', `/api/drops/${slug}/comments?since=${since}&wait=30`, { token: ann });
      await p.locator('#c-body').fill('The revenue chart is missing October.');
      await p.locator('#c-quote').fill('Revenue up 12%');
      const posted = Date.now();
      await Promise.all([p.waitForURL(`${base}/p/${slug}?v=1#comments`), p.locator('#comment-submit').click()]);
      const answer = await waiting;
      expect(Date.now() - posted).toBeLessThan(1500);
      expect(answer.json.data).toEqual([
        expect.objectContaining({
          version: 1,
          body: 'The revenue chart is missing October.',
          quote: 'Revenue up 12%',
          author: { name: 'bea', kind: 'member' },
        }),
      ]);
      // Back on the same version, the panel open, the comment listed and counted.
      expect(await p.locator('#comments-panel').isVisible()).toBe(true);
      expect(await p.locator('#comment-list .c').count()).toBe(1);
      expect(await p.locator('#comment-count').textContent()).toBe('1');
      await p.screenshot({ path: screenshotPath('viewer-comments-desktop') });
      const violations = blocking(await axeViolationsWithoutCsp(context, `${base}/p/${slug}?v=1#comments`));
      expect(violations, describeViolations('viewer comments', violations)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

/** axe needs to inject its script: a page of a context that bypasses the CSP, sharing the cookies. */
async function axeViolationsWithoutCsp(context: BrowserContext, url: string) {
  const state = await context.storageState();
  const bypass = await browser.newContext({
    bypassCSP: true,
    storageState: state,
    viewport: { width: 390, height: 844 },
  });
  try {
    const p = await bypass.newPage();
    await p.goto(url);
    return await axeViolations(p);
  } finally {
    await bypass.close();
  }
}

describe('guests', () => {
  it('comment on an open drop with a typed name; a signed_in drop offers sign-in and refuses a guest post', async () => {
    const open = await publish('Open for comments', { comments: 'open' });
    const closed = await publish('Members only');
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    try {
      const p = await context.newPage();
      await p.goto(`${base}/p/${open}`);
      await p.locator('#comments-toggle').click();
      await p.locator('#c-name').fill('Guest Gil');
      await p.locator('#c-body').fill('Looks good to me');
      await Promise.all([p.waitForURL(`${base}/p/${open}#comments`), p.locator('#comment-submit').click()]);
      expect((await commentsOf(open)).map((c) => c.author)).toEqual([{ name: 'Guest Gil', kind: 'guest' }]);
      await p.screenshot({ path: screenshotPath('viewer-comments-phone') });

      await p.goto(`${base}/p/${closed}`);
      await p.locator('#comments-toggle').click();
      expect(await p.locator('#comment-sign-in').isVisible()).toBe(true);
      expect(await p.locator('#comment-form').count()).toBe(0);
      const status = await guestPost(closed, 'name=Gil&body=sneaky');
      expect(status).toBe(401);
      expect(await commentsOf(closed)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('locked drops', () => {
  it('refuse a visitor without the capability, and take the comment after the passcode', async () => {
    const slug = await publish('Locked', { comments: 'open', passcode: 'open sesame' });
    const context = await browser.newContext();
    try {
      const p = await context.newPage();
      await p.goto(`${base}/p/${slug}`);
      const refused = await guestPost(slug, 'name=Gil&body=no+passcode');
      expect(refused).toBe(401);
      await p.locator('#passcode').fill('open sesame');
      await Promise.all([p.waitForURL(`${base}/p/${slug}`), p.locator('#unlock').click()]);
      await p.locator('#comments-toggle').click();
      await p.locator('#c-name').fill('Gil');
      await p.locator('#c-body').fill('with the passcode');
      await Promise.all([p.waitForURL(`${base}/p/${slug}#comments`), p.locator('#comment-submit').click()]);
      expect((await commentsOf(slug)).map((c) => c.body)).toEqual(['with the passcode']);
    } finally {
      await context.close();
    }
  });
});

describe("a drop's own script", () => {
  it('can neither post a comment nor read the panel, even for a signed-in viewer', async () => {
    const hostile = `<!doctype html><html><body><script>
      (async () => {
        const out = {};
        try { out.panel = parent.document.getElementById('comments-panel').innerHTML; } catch (e) { out.panel = 'blocked'; }
        const slug = ${JSON.stringify('SLUG')};
        // The service's address: on its own origin (docs/api.md, "Each drop on its own origin") a relative URL
        // would only reach the drop's content host.
        for (const target of [${JSON.stringify('BASE')} + '/p/' + slug + '/comments']) {
          try {
            const r = await fetch(target, { method: 'POST', credentials: 'include',
              headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=Evil&body=from+the+drop' });
            out.fetch = r.status;
          } catch (e) { out.fetch = 'error'; }
        }
        const f = document.createElement('form');
        f.method = 'POST'; f.action = ${JSON.stringify('BASE')} + '/p/' + slug + '/comments'; f.target = 'sink';
        f.innerHTML = '<input name="name" value="Evil"><input name="body" value="form from the drop">';
        const sink = document.createElement('iframe'); sink.name = 'sink'; document.body.append(sink, f); f.submit();
        console.log('RESULT ' + JSON.stringify(out));
      })();
    </script></body></html>`;
    const slug = await publish('Hostile', { comments: 'open' }, '<!doctype html><p>placeholder</p>');
    await h.call('PUT', `/api/drops/${slug}`, {
      token: ann,
      body: { html: hostile.replace('"SLUG"', JSON.stringify(slug)).replaceAll('"BASE"', JSON.stringify(base)) },
    });
    const context = await browser.newContext();
    try {
      const p = await context.newPage();
      await p.goto(`${base}/console/login?next=${encodeURIComponent(`/p/${slug}?v=1`)}`);
      await p.locator('#username').fill('bea');
      await Promise.all([p.waitForURL(`${base}/p/${slug}?v=1`), p.locator('#local-sign-in').click()]);
      expect(await p.locator('#commenting-as').count()).toBe(1);
      const result = p.waitForEvent('console', { predicate: (m) => m.text().startsWith('RESULT '), timeout: 10_000 });
      await p.goto(`${base}/p/${slug}`);
      const message = (await result).text().slice('RESULT '.length);
      await p.waitForTimeout(1000);
      const seen = JSON.parse(message) as { panel: string; fetch: unknown };
      expect(seen.panel).toBe('blocked');
      expect(seen.fetch === 'error' || seen.fetch === 403 || seen.fetch === 0).toBe(true);
      expect(await commentsOf(slug)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

/** `count` guest comments on the drop's latest version, straight into the store (a flood, without its 2.9 s). */
async function flood(slug: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const added = await h.store.addComment(
      {
        id: `c_flood${slug.slice(0, 4)}${String(i).padStart(7, '0')}`,
        slug,
        version: undefined,
        body: i % 3 === 0 ? `Spam ${i}: buy now at the shop down the road, best prices in town.` : `Spam ${i}`,
        quote: null,
        authorName: `Guest ${i}`,
        authorKind: 'guest',
        authorAccountId: null,
        now: Date.now(),
      },
      60,
    );
    if (typeof added === 'string') throw new Error(added);
    ids.push(added.id);
  }
  return ids;
}

describe('a flooded drop', () => {
  it('the panel pages 50 at a time, its owner comments at the cap, and v2 lists what it resolved', async () => {
    const slug = await publish('Flooded report', { comments: 'open' });
    const ids = await flood(slug, 60);
    expect(await guestPost(slug, 'name=Gil&body=one+more')).toBe(409);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      // An open drop's panel offers the guest form: its owner signs in to the console, which comes back here.
      const p = await context.newPage();
      await p.goto(`${base}/console/login?next=${encodeURIComponent(`/p/${slug}?v=1#comments`)}`);
      await p.locator('#username').fill('ann');
      await Promise.all([p.waitForURL(`${base}/p/${slug}?v=1#comments`), p.locator('#local-sign-in').click()]);
      expect(await p.locator('#commenting-as').textContent()).toContain('ann');
      expect(await p.locator('#comment-list .c').count()).toBe(50);
      expect(await p.locator('#comment-count').textContent()).toBe('60');
      await p.locator('#c-body').fill('Thanks: the chart is fixed in the next version.');
      await Promise.all([p.waitForURL(`${base}/p/${slug}?v=1#comments`), p.locator('#comment-submit').click()]);
      expect(await p.locator('#comment-count').textContent()).toBe('61');
      expect(await p.locator('#comment-list .c').last().textContent()).toContain('Thanks: the chart is fixed');
      await p.locator('#comment-list .c').last().scrollIntoViewIfNeeded();
      await p.screenshot({ path: screenshotPath('viewer-flood-desktop') });

      await Promise.all([p.waitForURL(/comments_before=\d+#comments$/), p.locator('#older-comments').click()]);
      expect(await p.locator('#comments-panel').isVisible()).toBe(true);
      expect(await p.locator('#comment-list .c').count()).toBe(11);
      expect(await p.locator('#newest-comments').isVisible()).toBe(true);
      expect(await p.locator('#older-comments').count()).toBe(0);

      const resolves = [ids[3], ids[7]];
      await h.call('PUT', `/api/drops/${slug}`, { token: ann, body: { html: doc('Flooded report v2'), resolves } });
      await h.call('POST', `/api/drops/${slug}/comments`, { token: ann, body: { body: 'October is in now.' } });
      await p.goto(`${base}/p/${slug}#comments`);
      expect(await p.locator('#resolved-here .c').count()).toBe(2);
      expect(await p.locator('#resolved-here .c .done').allTextContents()).toEqual([
        'Resolved in this version',
        'Resolved in this version',
      ]);
      expect(await p.locator('#comment-list .c').count()).toBe(1);
      expect(await p.locator('#comment-count').textContent()).toBe('3');
      await p.screenshot({ path: screenshotPath('viewer-resolved-here-desktop') });

      const state = await context.storageState();
      for (const [name, options] of Object.entries({
        phone: { viewport: { width: 390, height: 844 }, isMobile: true },
        dark: { viewport: { width: 1280, height: 800 }, colorScheme: 'dark' as const },
      })) {
        const other = await browser.newContext({ ...options, storageState: state });
        const q = await other.newPage();
        await q.goto(`${base}/p/${slug}?v=1#comments`);
        await q.screenshot({ path: screenshotPath(`viewer-flood-${name}`) });
        await q.goto(`${base}/p/${slug}#comments`);
        await q.screenshot({ path: screenshotPath(`viewer-resolved-here-${name}`) });
        await other.close();
      }
      for (const url of [`${base}/p/${slug}?v=1#comments`, `${base}/p/${slug}#comments`]) {
        const violations = blocking(await axeViolationsWithoutCsp(context, url));
        expect(violations, describeViolations(url, violations)).toEqual([]);
      }
    } finally {
      await context.close();
    }
  });
});
