/**
 * The owner console in real headless Chromium against a real service on loopback (docs/console.md): sign-in through
 * the local and OIDC providers, the owner's drops only, search, every action as the API then reports it, readable
 * refusals, CSRF and Origin, a drop's script against the console, axe-core in light, dark and at phone width, the
 * keyboard, and screenshots. The HTTP-only rules are console.test.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, blocking, describeViolations } from './axe.js';
import { launchBrowser, screenshotPath } from './browser.js';
import { createHarness, page as doc, type Harness } from './helpers.js';
import { DEFAULT_OIDC_USER, startOidcProvider } from './oidc-provider.js';
import { freePort } from './process.js';
import { serveOnLoopback } from './served.js';

let h: Harness;
let browser: Browser;
let base: string;

beforeAll(async () => {
  ({ h, base } = await serveOnLoopback({ limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 } }));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };
const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const DARK: BrowserContextOptions = { ...DESKTOP, colorScheme: 'dark' };

async function publish(token: string, title: string, extra: Record<string, unknown> = {}): Promise<string> {
  const reply = await h.call('POST', '/api/drops', { token, body: { title, html: doc(title), ...extra } });
  expect(reply.status, reply.text).toBe(201);
  return reply.json.slug as string;
}

/** A page with a price table, for the diff page's screenshots. */
const PRICING = `<!doctype html>
<html lang="en">
<head><title>Pricing</title></head>
<body>
<h1>Pricing</h1>
<table>
{rows}
</table>
<p>Prices include VAT.</p>
</body>
</html>
`;
const PRICE_ROWS = ['Free', 'Starter', 'Pro', 'Business', 'Enterprise'].map(
  (plan, i) => `<tr><td>${plan}</td><td>${i === 1 ? '€9' : `€${i * 20}`}</td></tr>`,
);

const dropOf = (token: string, slug: string) => h.call('GET', `/api/drops/${slug}`, { token });

/** `count` guest comments on the drop, straight into the store, as a flood of guests leaves them. */
async function flood(slug: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const added = await h.store.addComment(
      {
        id: `c_f${slug.slice(0, 6)}${String(i).padStart(7, '0')}`,
        slug,
        version: undefined,
        body: i % 4 === 0 ? `Visit my shop ${i}: the best prices in town, every day, all year round.` : `Spam ${i}`,
        quote: i % 5 === 0 ? 'Revenue up 12%' : null,
        authorName: `Guest ${i}`,
        authorKind: 'guest',
        authorAccountId: null,
        now: Date.now(),
      },
      1000,
    );
    if (typeof added === 'string') throw new Error(added);
  }
}

/** From the signed-out /console through the local provider's form, back on /console signed in. */
async function signIn(context: BrowserContext, login: string): Promise<Page> {
  const p = await context.newPage();
  await p.goto(`${base}/console`);
  await Promise.all([p.waitForURL(/\/verify\/local\?state=/), p.locator('#console-sign-in').click()]);
  await p.locator('#username').fill(login);
  await Promise.all([p.waitForURL(`${base}/console`), p.locator('#local-sign-in').click()]);
  expect(await p.locator('#signed-in-as').textContent()).toContain(login);
  return p;
}

/** Clicks and waits for the page the browser lands on, and the status of the POST's own answer. */
async function submit(p: Page, selector: string, lands: RegExp): Promise<number> {
  const [answer] = await Promise.all([
    p.waitForResponse((r) => r.request().method() === 'POST'),
    p.waitForURL(lands),
    p.locator(selector).click(),
  ]);
  return answer.status();
}

async function rows(p: Page, selector: string, attribute: string): Promise<(string | null)[]> {
  return Promise.all((await p.locator(selector).all()).map((row) => row.getAttribute(attribute)));
}
const listed = (p: Page) => rows(p, '#drop-list tr[data-slug]', 'data-slug');

describe('signing in to the console', () => {
  it('signs in with the local provider, sets hd_web HttpOnly/Lax/path=/, and signs out', async () => {
    const context = await browser.newContext();
    const p = await context.newPage();
    await p.goto(`${base}/console`);
    expect(await p.locator('#console-sign-in').getAttribute('href')).toBe('/console/login?next=%2Fconsole');
    await p.close();
    const signedIn = await signIn(context, 'carol');
    expect(await signedIn.locator('#signed-in-as').textContent()).toContain('(local)');
    const cookies = await context.cookies(base);
    expect(cookies.find((c) => c.name === 'hd_signin')).toBeUndefined();
    expect(cookies.find((c) => c.name === 'hd_web')).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    await Promise.all([signedIn.waitForURL(`${base}/console`), signedIn.locator('#sign-out').click()]);
    await signedIn.locator('#console-sign-in').waitFor();
    expect(await signedIn.locator('#signed-in-as').count()).toBe(0);
    expect((await context.cookies(base)).find((c) => c.name === 'hd_web')).toBeUndefined();
    await signedIn.goto(`${base}/console/tokens`);
    expect(await signedIn.locator('#console-sign-in').isVisible()).toBe(true);
    await context.close();
  });

  it('signs in through an OpenID Connect provider on another site and lands on /console', async () => {
    const port = await freePort();
    const oidcBase = `http://127.0.0.1:${port}`;
    const op = await startOidcProvider({ redirectUris: [`${oidcBase}/verify/callback`], host: 'localhost' });
    const h2 = await createHarness({
      env: {
        HTMLDROP_BASE_URL: oidcBase,
        HTMLDROP_AUTH_PROVIDER: 'oidc',
        HTMLDROP_OIDC_ISSUER: op.issuer,
        HTMLDROP_OIDC_CLIENT_ID: op.clientId,
        HTMLDROP_OIDC_CLIENT_SECRET: op.clientSecret,
      },
    });
    const context = await browser.newContext();
    try {
      await h2.app.listen({ port, host: '127.0.0.1' });
      const p = await context.newPage();
      await p.goto(`${oidcBase}/console`);
      await Promise.all([p.waitForURL(`${op.issuer}/interaction/**`), p.locator('#console-sign-in').click()]);
      await p.locator('#username').fill(DEFAULT_OIDC_USER.preferredUsername);
      await p.locator('#provider-login').click();
      await p.locator('#provider-allow, #signed-in-as, #outcome').first().waitFor({ timeout: 10_000 });
      if (await p.locator('#provider-allow').isVisible()) await p.locator('#provider-allow').click();
      await p.waitForURL(`${oidcBase}/console`, { timeout: 10_000 });
      const who = await p.locator('#signed-in-as').textContent();
      expect(who).toContain(DEFAULT_OIDC_USER.preferredUsername);
      expect(who).toContain('(oidc)');
      expect(op.errors).toEqual([]);
      expect((await context.cookies(oidcBase)).find((c) => c.name === 'hd_web')?.httpOnly).toBe(true);
    } finally {
      await context.close();
      await h2.close();
      await op.close();
    }
  });
});

describe('the drop list', () => {
  it("lists only one's own drops; another account's drop is a 404 that does not name it", async () => {
    const [ann, ben] = [await h.token('ann'), await h.token('ben')];
    const mine = [await publish(ann, 'Ann alpha'), await publish(ann, 'Ann beta')];
    const theirs = await publish(ben, 'Ben secret plan');
    const context = await browser.newContext();
    const p = await signIn(context, 'ann');
    expect((await listed(p)).sort()).toEqual([...mine].sort());
    expect(await p.content()).not.toContain('Ben secret plan');
    for (const path of [`/console/drops/${theirs}`, `/console/drops/${theirs}/delete`]) {
      const response = await p.goto(`${base}${path}`);
      expect(response?.status()).toBe(404);
      expect(await p.locator('h1').textContent()).toBe('Drop not found');
      expect(await p.content()).not.toContain('Ben secret plan');
    }
    await context.close();
  });

  it('searches titles case-insensitively, filters by tags, and filters by a clicked tag chip', async () => {
    const t = await h.token('sue');
    const quarterly = await publish(t, 'Acme Quarterly Report', { metadata: { project: 'acme' } });
    const roadmap = await publish(t, 'Roadmap', { metadata: { project: 'acme', team: 'red' } });
    const notes = await publish(t, 'ACME notes', { metadata: { project: 'zeta' } });
    const context = await browser.newContext();
    const p = await signIn(context, 'sue');
    expect((await listed(p)).sort()).toEqual([quarterly, roadmap, notes].sort());
    const find = async (q: string, tags: string) => {
      await p.locator('#q').fill(q);
      await p.locator('#tags').fill(tags);
      await Promise.all([p.waitForURL(/\/console\?/), p.locator('#tags').press('Enter')]);
      return (await listed(p)).sort();
    };
    expect(await find('acme', '')).toEqual([quarterly, notes].sort());
    expect(await find('', 'project=acme')).toEqual([quarterly, roadmap].sort());
    expect(await find('aCmE', 'project=acme')).toEqual([quarterly]);
    expect(await find('nothing like it', '')).toEqual([]);
    await find('', '');
    await Promise.all([p.waitForURL(/tags=team%3Dred/), p.locator(`tr[data-slug="${roadmap}"] a.chip`).last().click()]);
    expect(await listed(p)).toEqual([roadmap]);
    expect(await p.locator('#tags').inputValue()).toBe('team=red');
    await find('', 'nonsense');
    expect(await p.locator('#console-error').textContent()).toContain('"nonsense" is not a tag filter');
    await context.close();
  });
});

describe('actions on a drop', () => {
  it('edits, locks, unlocks, restores, deletes a version, revokes a token and deletes the drop, as the API then says', async () => {
    const token = await h.token('olga', 'laptop');
    const spare = await h.token('olga', 'old agent');
    const slug = await publish(token, 'Draft', { html: doc('version one') });
    expect((await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: doc('version two') } })).status).toBe(200);
    const context = await browser.newContext();
    const p = await signIn(context, 'olga');
    const dialogs: string[] = [];
    p.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.accept();
    });
    await p.goto(`${base}/console/drops/${slug}`);

    await p.locator('#title').fill('Final report');
    await p.locator('#description').fill('For the board');
    await p.locator('#tags').fill('project=acme\nowner=olga');
    expect(await submit(p, '#save-details', /done=saved/)).toBe(303);
    expect(await p.locator('#console-done').textContent()).toBe('Details saved.');
    expect((await dropOf(token, slug)).json).toMatchObject({
      title: 'Final report',
      description: 'For the board',
      metadata: { project: 'acme', owner: 'olga' },
    });

    await p.locator('#passcode').fill('open sesame');
    await submit(p, '#set-passcode', /done=locked/);
    expect((await dropOf(token, slug)).json.locked).toBe(true);
    const visitor = await browser.newContext();
    const gate = await visitor.newPage();
    await gate.goto(`${base}/p/${slug}`);
    expect(await gate.locator('#passcode').isVisible()).toBe(true);
    expect(await gate.locator('iframe').count()).toBe(0);
    await visitor.close();
    await submit(p, '#remove-passcode', /done=unlocked/);
    expect((await dropOf(token, slug)).json.locked).toBe(false);

    await submit(p, 'button[aria-label="Restore version 1"]', /done=restored/);
    expect((await dropOf(token, slug)).json.latest_version).toBe(3);
    expect(await (await fetch(`${base}/p/${slug}/raw?v=3`)).text()).toContain('version one');
    await submit(p, 'button[aria-label="Delete version 2"]', /done=version-deleted/);
    expect(dialogs).toEqual(['Delete version 2? This cannot be undone.']);
    const versions = await h.call('GET', `/api/drops/${slug}/versions`, { token });
    expect(versions.json.map((v: { version: number }) => v.version)).toEqual([3, 1]);
    expect(await rows(p, '#version-list tr[data-version]', 'data-version')).toEqual(['3', '1']);

    const spareId = (await h.call('GET', '/api/tokens', { token: spare })).json.find(
      (k: { current: boolean }) => k.current,
    ).id as string;
    await p.goto(`${base}/console/tokens`);
    await submit(p, `tr[data-token="${spareId}"] button`, /done=revoked/);
    expect(dialogs).toHaveLength(2);
    expect((await h.call('GET', '/api/me', { token: spare })).status).toBe(401);
    expect(await rows(p, '#token-list tr[data-token]', 'data-token')).not.toContain(spareId);

    await p.goto(`${base}/console/drops/${slug}`);
    await Promise.all([p.waitForURL(/\/delete$/), p.locator('#delete-drop').click()]);
    expect(await p.locator('h1').textContent()).toBe('Delete “Final report”?');
    await submit(p, '#confirm-delete', /\/console\?done=deleted$/);
    expect(await p.locator('#console-done').textContent()).toBe('The drop was deleted.');
    expect((await dropOf(token, slug)).status).toBe(404);
    await context.close();
  });

  it('ends a flood from the comments section: the ticked ones, only signed-in people from now on, every guest one', async () => {
    const token = await h.token('flo');
    const slug = await publish(token, 'Open feedback', { comments: 'open' });
    await flood(slug, 8);
    await h.call('POST', `/api/drops/${slug}/comments`, { token, body: { body: 'Thanks, reading these now.' } });
    const context = await browser.newContext();
    const p = await signIn(context, 'flo');
    const dialogs: string[] = [];
    p.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.accept();
    });
    await p.goto(`${base}/console/drops/${slug}#comments`);
    const ids = await rows(p, '#comment-list li[data-comment]', 'data-comment');
    expect(ids).toHaveLength(9);
    // The newest is the owner's; tick two guests' with the keyboard (Space), as a person would.
    for (const id of ids.slice(1, 3)) {
      await p.locator(`li[data-comment="${id}"] input.pick`).focus();
      await p.keyboard.press('Space');
    }
    expect(await submit(p, '#delete-selected', /done=comments-deleted#comments$/)).toBe(303);
    expect(dialogs).toEqual(['Delete the ticked comments? This cannot be undone.']);
    expect(await rows(p, '#comment-list li[data-comment]', 'data-comment')).toEqual([ids[0], ...ids.slice(3)]);

    expect(await submit(p, '#comments-signed-in', /done=comments-signed_in#comments$/)).toBe(303);
    expect((await dropOf(token, slug)).json.comments).toBe('signed_in');
    expect(await p.locator('#console-done').textContent()).toBe('Only people signed in can comment on this drop now.');
    expect(await p.locator('#delete-guest-comments').textContent()).toBe('Delete all 6 guest comments');
    expect(await submit(p, '#delete-guest-comments', /done=guest-comments-deleted#comments$/)).toBe(303);
    expect(dialogs[1]).toBe('Delete all 6 guest comments of this drop? This cannot be undone.');
    expect(await rows(p, '#comment-list li[data-comment]', 'data-comment')).toEqual([ids[0]]);
    const left = await h.call('GET', `/api/drops/${slug}/comments`, { token });
    expect(left.json.data.map((c: { author: { kind: string } }) => c.author.kind)).toEqual(['owner']);
    await context.close();
  });

  it('shows refusals on the page and changes nothing: a too-short passcode, a tag line without "="', async () => {
    const token = await h.token('rita');
    const slug = await publish(token, 'Kept as is', { metadata: { project: 'acme' } });
    const before = (await dropOf(token, slug)).json;
    const context = await browser.newContext();
    const p = await signIn(context, 'rita');
    await p.goto(`${base}/console/drops/${slug}`);
    await p.locator('#passcode').fill('abc');
    expect(await submit(p, '#set-passcode', /\/passcode$/)).toBe(400);
    expect(await p.locator('#console-error').textContent()).toBe('passcode must be at least 4 characters.');
    expect(await p.locator('#console-error').getAttribute('role')).toBe('alert');
    await p.locator('#title').fill('Changed title');
    await p.locator('#tags').fill('project=acme\nnot a tag');
    expect(await submit(p, '#save-details', /\/details$/)).toBe(400);
    expect(await p.locator('#console-error').textContent()).toBe('Tag line 2 is not key=value.');
    expect(await p.locator('#title').inputValue()).toBe('Changed title');
    expect(await p.locator('#tags').inputValue()).toBe('project=acme\nnot a tag');
    expect((await dropOf(token, slug)).json).toEqual(before);
    await context.close();
  });
});

describe('what another page cannot do to the console', () => {
  it('refuses cross-origin form posts (browser) and posts without the right csrf or Origin (fetch)', async () => {
    const token = await h.token('vic', 'laptop');
    const [slug, control] = [await publish(token, 'Victim drop'), await publish(token, 'Control drop')];
    const tokenId = (await h.call('GET', '/api/tokens', { token })).json[0].id as string;
    const context = await browser.newContext();
    const p = await signIn(context, 'vic');
    const csrf = (await p.locator('input[name=csrf]').first().getAttribute('value')) ?? '';
    const cookie = (await context.cookies(base)).find((c) => c.name === 'hd_web')?.value ?? '';
    expect(csrf).not.toBe('');
    // Even with the session's real CSRF token (as if leaked), a form on another origin is refused.
    const attack = `<!doctype html><html><body>
<form id="a" method="post" action="${base}/console/drops/${slug}/delete" target="s1"><input name="csrf" value="${csrf}"></form>
<form id="b" method="post" action="${base}/console/tokens/${tokenId}/revoke" target="s2"><input name="csrf" value="${csrf}"></form>
<iframe name="s1"></iframe><iframe name="s2"></iframe>
<script>document.getElementById('a').submit(); document.getElementById('b').submit();</script></body></html>`;
    const attacker = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(attack));
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    const attackerPort = (attacker.address() as AddressInfo).port;
    try {
      // 127.0.0.1 on another port is same-site (the Lax cookie goes along); localhost is another site.
      for (const host of ['127.0.0.1', 'localhost']) {
        const answers = ['/delete', '/revoke'].map((end) =>
          p.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(end)),
        );
        await p.goto(`http://${host}:${attackerPort}/`);
        for (const answer of await Promise.all(answers)) {
          expect(answer.status()).toBe(403);
          if (host === '127.0.0.1') expect(await answer.request().headerValue('cookie')).toContain('hd_web=');
        }
      }
    } finally {
      attacker.close();
    }
    expect((await dropOf(token, slug)).status).toBe(200);
    expect((await h.call('GET', '/api/me', { token })).status).toBe(200);

    const post = async (path: string, fields: Record<string, string>, origin?: string) => {
      const headers: Record<string, string> = {
        cookie: `hd_web=${cookie}`,
        'content-type': 'application/x-www-form-urlencoded',
      };
      if (origin !== undefined) headers.origin = origin;
      const body = new URLSearchParams(fields).toString();
      return (await fetch(`${base}${path}`, { method: 'POST', headers, body, redirect: 'manual' })).status;
    };
    for (const path of [`/console/drops/${slug}/delete`, `/console/tokens/${tokenId}/revoke`]) {
      expect(await post(path, {}, base), 'no csrf').toBe(403);
      expect(await post(path, { csrf: `${csrf}x` }, base), 'wrong csrf').toBe(403);
      expect(await post(path, { csrf }), 'no Origin').toBe(403);
      expect(await post(path, { csrf }, 'http://evil.test'), 'wrong Origin').toBe(403);
      expect(await post(path, { csrf }, 'null'), 'Origin null').toBe(403);
      expect(await post(path, { csrf }, `${base}/`), 'Origin with a path').toBe(403);
    }
    expect((await dropOf(token, slug)).status).toBe(200);
    expect((await h.call('GET', '/api/me', { token })).status).toBe(200);
    // The same request with the right csrf and Origin is taken: the refusals above were the checks.
    expect(await post(`/console/drops/${control}/delete`, { csrf }, base)).toBe(303);
    expect((await dropOf(token, control)).status).toBe(404);
    await context.close();
  });

  it("a drop's script, viewed by its signed-in owner, can neither read the console nor act on it", async () => {
    const token = await h.token('dora');
    const hostile = `<!doctype html><html><head><title>hostile</title></head><body><p>hostile</p>
<form id="f1" method="post" target="s1"><input name="csrf" value="guess"></form>
<form id="f2" method="post" action="BASE/console/logout" target="s2"><input name="csrf" value="guess"></form>
<iframe name="s1"></iframe><iframe name="s2"></iframe>
<script>
  // The service's own address: the drop runs on its own origin in the viewer (docs/api.md, "Each drop on its own
  // origin") and in an opaque one on the raw path; either way the console is another site's.
  const service = 'BASE';
  const slug = 'SLUG';
  const say = (m) => parent.postMessage(String(m), '*');
  const post = (path) => fetch(service + path, { method: 'POST', credentials: 'include', body: new URLSearchParams({ csrf: 'guess' }) })
    .then((r) => 'posted:' + r.status + ':' + path, (e) => 'post-failed:' + e.name);
  Promise.all([
    fetch(service + '/console', { credentials: 'include' }).then((r) => r.text()).then((t) => 'read:' + t, (e) => 'read-failed:' + e.name),
    fetch(service + '/console', { credentials: 'include', mode: 'no-cors' }).then((r) => r.text()).then((t) => 'opaque:' + t, (e) => 'opaque-failed:' + e.name),
    post('/console/drops/' + slug + '/delete'),
    post('/console/logout'),
  ]).then((results) => {
    results.forEach(say);
    document.getElementById('f1').action = service + '/console/drops/' + slug + '/delete';
    document.getElementById('f1').submit();
    document.getElementById('f2').submit();
    say('done');
  });
</script></body></html>`;
    const slug = await publish(token, 'Innocent chart', { html: '<!doctype html><p>placeholder</p>' });
    await h.call('PUT', `/api/drops/${slug}`, {
      token,
      body: { html: hostile.replaceAll('BASE', base).replace("'SLUG'", `'${slug}'`) },
    });
    const context = await browser.newContext();
    await (await signIn(context, 'dora')).close();
    await context.addInitScript(
      'if (window === window.top) { window.__seen = []; addEventListener("message", (e) => window.__seen.push(String(e.data))); }',
    );
    const posts: { url: string; status: number }[] = [];
    context.on('response', (r) => {
      if (r.request().method() === 'POST' && r.request().resourceType() === 'document') {
        posts.push({ url: r.url(), status: r.status() });
      }
    });
    for (const path of [`/p/${slug}`, `/p/${slug}/raw`]) {
      posts.length = 0;
      const p = await context.newPage();
      await p.goto(`${base}${path}`);
      await expect.poll(() => p.evaluate<string[]>('window.__seen'), { timeout: 10_000 }).toContain('done');
      await expect.poll(() => posts.length, { timeout: 10_000 }).toBe(2);
      const seen = await p.evaluate<string[]>('window.__seen');
      expect(seen.filter((m) => m.startsWith('read') || m.startsWith('post'))).toEqual([
        'read-failed:TypeError',
        'post-failed:TypeError',
        'post-failed:TypeError',
      ]);
      expect(seen.join('\n')).not.toMatch(/dora|Signed in as|csrf/);
      expect(posts.map((r) => r.status)).toEqual([403, 403]);
      await p.close();
    }
    expect((await dropOf(token, slug)).status).toBe(200);
    const p = await context.newPage();
    await p.goto(`${base}/console`);
    expect(await p.locator('#signed-in-as').textContent()).toContain('dora');
    expect(await listed(p)).toEqual([slug]);
    await context.close();
  });
});

// Each of these drives pages in three modes (desktop, phone, dark) with screenshots or axe: 20-28 s alone, and over
// the default 30 s when another suite shares the two cores (as npm test runs two files at a time).
describe('accessibility and looks', { timeout: 90_000 }, () => {
  let state: Awaited<ReturnType<BrowserContext['storageState']>>;
  let empty: typeof state;
  let locked: string;
  let compared: string;
  let flooded: string;
  /** A drop whose versions carry files (docs/api.md, "Many files in one drop"). */
  let folder: string;

  beforeAll(async () => {
    const token = await h.token('ada', 'laptop agent');
    await h.token('ada', 'ci');
    locked = await publish(token, 'Quarterly numbers', {
      passcode: 'open sesame',
      description: 'Q3, first cut',
      metadata: { project: 'acme', team: 'red' },
      context: 'Why a table.',
    });
    await h.call('PUT', `/api/drops/${locked}`, { token, body: { html: doc('second') } });
    await publish(token, 'A drop with a rather long title that has to wrap on a phone screen', {
      metadata: { project: 'zeta' },
    });
    await publish(token, 'Open notes');
    compared = await publish(token, 'Pricing page', { html: PRICING.replace('{rows}', PRICE_ROWS.join('\n')) });
    const changed = [
      ...PRICE_ROWS.map((r) => r.replace('€9', '€12')).toSpliced(3, 1, '<tr><td>Team</td><td>€49</td></tr>'),
      '<tr><td>Custom</td><td>Ask us</td></tr>',
    ];
    await h.call('PUT', `/api/drops/${compared}`, {
      token,
      body: { html: PRICING.replace('{rows}', changed.join('\n')) },
    });
    const png = (bytes: number) => ({ content: Buffer.alloc(bytes, 9).toString('base64'), encoding: 'base64' });
    folder = await publish(token, 'Quarterly report with charts', {
      files: {
        'img/revenue-by-region-and-quarter.png': png(48_000),
        'img/margin.png': png(21_000),
        'css/report.css': { content: 'body{font:16px system-ui}' },
        'data/regions.json': { content: '[]' },
      },
    });
    await h.call('PUT', `/api/drops/${folder}`, {
      token,
      body: {
        html: doc('Quarterly report with charts'),
        files: {
          'img/revenue-by-region-and-quarter.png': png(52_000),
          'css/report.css': { content: 'body{font:16px system-ui}' },
          'data/regions.json': { content: '[1]' },
          'fonts/inter-variable.woff2': png(90_000),
        },
      },
    });
    await publish(token, 'Retention review', {
      html: `<!doctype html><html><head><title>x</title><style>.cohort{}</style></head><body><h1>Retention</h1><p>${'Numbers by month and region. '.repeat(6)}The March cohort kept 82% of its accounts after ninety days, well above the Café Lumière pilot.</p></body></html>`,
      context: 'Cohorts from the billing export.',
    });
    flooded = await publish(token, 'Open feedback', { comments: 'open' });
    await flood(flooded, 56);
    await h.call('POST', `/api/drops/${flooded}/comments`, { token, body: { body: 'Thanks, reading these now.' } });
    for (const login of ['ada', 'newcomer']) {
      const context = await browser.newContext();
      await signIn(context, login);
      if (login === 'ada') state = await context.storageState();
      else empty = await context.storageState();
      await context.close();
    }
  });

  const signedInPages = () => [
    '/console',
    '/console?tags=nonsense',
    `/console/drops/${locked}`,
    `/console/drops/${locked}?done=locked`,
    `/console/drops/${locked}/delete`,
    '/console/tokens',
    '/console/drops/NoSuchDrop1',
    `/console/drops/${compared}/diff`,
    `/console/drops/${compared}/diff?from=1&to=9`,
    `/console/drops/${flooded}`,
  ];

  it('has no serious or critical axe violation in light, dark and at phone width', async () => {
    const failures: string[] = [];
    const minor: string[] = [];
    for (const [name, options] of Object.entries({ light: DESKTOP, dark: DARK, phone: PHONE })) {
      const context = await browser.newContext({ ...options, bypassCSP: true });
      const p = await context.newPage();
      const check = async (path: string) => {
        await p.goto(`${base}${path}`);
        const violations = await axeViolations(p);
        const serious = blocking(violations);
        if (serious.length > 0) failures.push(describeViolations(`${name} ${path}`, serious));
        const rest = violations.filter((v) => !serious.includes(v));
        if (rest.length > 0) minor.push(describeViolations(`${name} ${path}`, rest));
      };
      await check('/');
      await check('/console');
      await context.addCookies(state.cookies);
      for (const path of signedInPages()) await check(path);
      await context.clearCookies();
      await context.addCookies(empty.cookies);
      await check('/console');
      await context.close();
    }
    if (minor.length > 0) console.log(`axe, moderate and minor (not failing):\n${minor.join('\n')}`);
    expect(failures.join('\n'), failures.join('\n')).toBe('');
  });

  it('reaches "Save details" with Tab from the top of the drop page, with a visible focus ring, and Enter saves', async () => {
    const context = await browser.newContext({ ...DESKTOP, storageState: state });
    const p = await context.newPage();
    await p.goto(`${base}/console/drops/${locked}`);
    let focused = '';
    for (let i = 0; i < 80 && focused !== 'save-details'; i++) {
      await p.keyboard.press('Tab');
      focused = await p.evaluate<string>('document.activeElement?.id ?? ""');
    }
    expect(focused).toBe('save-details');
    const ring = await p.evaluate<string>(
      'getComputedStyle(document.activeElement).outlineStyle + " " + getComputedStyle(document.activeElement).outlineWidth',
    );
    expect(ring).toBe('solid 3px');
    await Promise.all([p.waitForURL(/done=saved/), p.keyboard.press('Enter')]);
    expect(await p.locator('#console-done').textContent()).toBe('Details saved.');
    await context.close();
  });

  it('compares two versions from the drop page with the keyboard alone', async () => {
    const context = await browser.newContext({ ...DESKTOP, storageState: state });
    const p = await context.newPage();
    await p.goto(`${base}/console/drops/${compared}`);
    await p.locator('#compare-to').focus();
    await p.keyboard.press('Tab');
    expect(await p.evaluate<string>('document.activeElement?.id ?? ""')).toBe('compare');
    await Promise.all([p.waitForURL(/\/diff\?from=1&to=2$/), p.keyboard.press('Enter')]);
    expect(await p.locator('#diff-counts').textContent()).toBe('+3 lines added, −2 removed.');
    expect(await p.locator('#diff tr.add').count()).toBe(3);
    expect(await p.locator('#open-to').getAttribute('href')).toBe(`/p/${compared}?v=2`);
    await context.close();
  });

  it('lists a folder drop’s files by version and the files a comparison changed; screenshots on desktop, phone and dark', async () => {
    for (const [name, options] of Object.entries({ desktop: DESKTOP, phone: PHONE, dark: DARK })) {
      // bypassCSP lets axe-core in, as in the axe test above.
      const context = await browser.newContext({ ...options, storageState: state, bypassCSP: true });
      const p = await context.newPage();
      const errors: string[] = [];
      p.on('pageerror', (e) => errors.push(e.message));
      await p.goto(`${base}/console/drops/${folder}`);
      await p.locator('#files-v2 summary').click();
      expect(describeViolations(`${name} drop`, blocking(await axeViolations(p)))).toBe('');
      await p.reload();
      expect(await p.locator('#files-v2 summary').textContent()).toMatch(/^4 files · 138\.[0-9] KB in all$/);
      await p.locator('#files-v2 summary').click();
      expect(await p.locator('#files-v2 li').allTextContents()).toEqual([
        'css/report.css 25 B · text/css',
        'data/regions.json 3 B · application/json',
        'fonts/inter-variable.woff2 87.9 KB · font/woff2',
        'img/revenue-by-region-and-quarter.png 50.8 KB · image/png',
      ]);
      await p.locator('#versions-h').scrollIntoViewIfNeeded();
      await p.locator('#version-list').screenshot({ path: screenshotPath(`console-files-${name}`) });
      let overflow = await p.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, `${name} files scroll sideways by ${overflow}px`).toBeLessThanOrEqual(0);
      await p.goto(`${base}/console/drops/${folder}/diff`);
      expect(await p.locator('#files-counts').textContent()).toBe('1 file added, 1 removed, 2 changed.');
      expect(await p.locator('#files-removed li').allTextContents()).toEqual(['img/margin.png']);
      expect(describeViolations(`${name} diff`, blocking(await axeViolations(p)))).toBe('');
      await p.screenshot({ path: screenshotPath(`console-files-diff-${name}`), fullPage: true });
      overflow = await p.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, `${name} files diff scrolls sideways by ${overflow}px`).toBeLessThanOrEqual(0);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it('searches the text from the search box and shows the snippet with the words marked; screenshots on desktop, phone and dark', async () => {
    for (const [name, options] of Object.entries({ desktop: DESKTOP, phone: PHONE, dark: DARK })) {
      const context = await browser.newContext({ ...options, storageState: state, bypassCSP: true });
      const p = await context.newPage();
      await p.goto(`${base}/console`);
      await p.locator('#q').fill('COHORT lumière');
      await Promise.all([p.waitForURL(/\/console\?q=COHORT/), p.locator('#q').press('Enter')]);
      expect(await p.locator('#drop-list tbody tr').count()).toBe(1);
      expect(await p.locator('.snippet mark').allTextContents()).toEqual(['cohort', 'Lumière']);
      expect(await p.locator('.found-in').textContent()).toBe('Found in text');
      expect(await p.locator('#sort option:checked').textContent()).toBe('Best match');
      expect(describeViolations(`${name} search`, blocking(await axeViolations(p)))).toBe('');
      await p.screenshot({ path: screenshotPath(`console-search-${name}`), fullPage: true });
      const overflow = await p.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, `${name} search scrolls sideways by ${overflow}px`).toBeLessThanOrEqual(0);
      await context.close();
    }
  });

  it('takes screenshots of the list, a drop, the tokens and the empty list on desktop, phone and dark, with no sideways scrolling', async () => {
    for (const [name, options] of Object.entries({ desktop: DESKTOP, phone: PHONE, dark: DARK })) {
      const context = await browser.newContext({ ...options, storageState: state });
      const p = await context.newPage();
      // Under the real CSP: no blocked style or script, no script error.
      const errors: string[] = [];
      p.on('console', (m) => (m.type() === 'error' ? errors.push(m.text()) : undefined));
      p.on('pageerror', (e) => errors.push(e.message));
      for (const [shot, path] of [
        ['list', '/console'],
        ['drop', `/console/drops/${locked}`],
        ['tokens', '/console/tokens'],
        ['compare', `/console/drops/${compared}`],
        ['diff', `/console/drops/${compared}/diff`],
      ] as const) {
        await p.goto(`${base}${path}`);
        await p.screenshot({ path: screenshotPath(`console-${shot}-${name}`), fullPage: true });
        const overflow = await p.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
        expect(overflow, `${name} ${path} scrolls sideways by ${overflow}px`).toBeLessThanOrEqual(0);
      }
      // The comments section of a flooded drop, with its moderation tools and pages (an element: the page is long).
      await p.goto(`${base}/console/drops/${flooded}#comments`);
      await p.locator('#comments').screenshot({ path: screenshotPath(`console-comments-${name}`) });
      const overflow = await p.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, `${name} comments scroll sideways by ${overflow}px`).toBeLessThanOrEqual(0);
      await context.clearCookies();
      await context.addCookies(empty.cookies);
      await p.goto(`${base}/console`);
      await p.screenshot({ path: screenshotPath(`console-empty-${name}`), fullPage: true });
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});
