/**
 * Who can see a drop, in real Chromium with a real OpenID Connect provider on loopback (docs/api.md, "Who can see a
 * drop"): a visitor signs in from the drop's 401 page and comes back to the same drop and version; a verified email
 * at an `@domain` on the list lets Dana in; Eve, not on the list, gets the 403 page naming her and the log says
 * `not_on_list` with her name; an unverified email does not count. axe-core and screenshots of both pages on desktop,
 * phone and dark.
 */
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, blocking, describeViolations } from './axe.js';
import { launchBrowser, screenshotPath } from './browser.js';
import { createHarness, page as doc, type Harness } from './helpers.js';
import { type OidcTestProvider, startOidcProvider } from './oidc-provider.js';
import { freePort } from './process.js';

let h: Harness;
let op: OidcTestProvider;
let browser: Browser;
let base: string;
let owner: string;

const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };
const LOOKS: Record<string, BrowserContextOptions> = {
  desktop: DESKTOP,
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  dark: { ...DESKTOP, colorScheme: 'dark' },
};

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  op = await startOidcProvider({
    redirectUris: [`${base}/verify/callback`],
    host: 'localhost',
    users: [
      { sub: 'dana-1', preferredUsername: 'dana', email: 'Dana@Client.Example' },
      { sub: 'eve-1', preferredUsername: 'eve', email: 'eve@elsewhere.example' },
      { sub: 'mal-1', preferredUsername: 'mal', email: 'mal@client.example', emailVerified: false },
    ],
  });
  h = await createHarness({
    env: {
      HTMLDROP_BASE_URL: base,
      HTMLDROP_AUTH_PROVIDER: 'oidc',
      HTMLDROP_OIDC_ISSUER: op.issuer,
      HTMLDROP_OIDC_CLIENT_ID: op.clientId,
      HTMLDROP_OIDC_CLIENT_SECRET: op.clientSecret,
      HTMLDROP_OIDC_SCOPES: 'openid profile email',
    },
  });
  await h.app.listen({ port, host: '127.0.0.1' });
  browser = await launchBrowser();
  owner = await h.token('olga');
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
  await op?.close();
});

async function publish(fields: Record<string, unknown>) {
  const created = await h.call('POST', '/api/drops', {
    token: owner,
    body: { title: 'Client report', html: doc('Revenue by region'), ...fields },
  });
  expect(created.status).toBe(201);
  const slug = created.json.slug as string;
  expect((await h.call('PUT', `/api/drops/${slug}`, { token: owner, body: { html: doc('Revenue v2') } })).status).toBe(
    200,
  );
  return slug;
}

/** From the drop's 401 page through the provider's login (and consent) back to the drop. */
async function signInAt(p: Page, username: string, back: string) {
  expect(await p.locator('h1').textContent()).toBe('Sign in to see this drop');
  await Promise.all([p.waitForURL(`${op.issuer}/interaction/**`), p.locator('#sign-in').click()]);
  await p.locator('#username').fill(username);
  await p.locator('#provider-login').click();
  const allow = p.locator('#provider-allow');
  await Promise.race([
    allow.waitFor({ timeout: 10_000 }).catch(() => undefined),
    p.waitForURL(back, { timeout: 10_000 }),
  ]);
  if (await allow.isVisible()) await allow.click();
  await p.waitForURL(back, { timeout: 10_000 });
}

async function access(slug: string) {
  return (await h.call('GET', `/api/drops/${slug}/access`, { token: owner })).json.data as Array<{
    outcome: string;
    reason: string | null;
    who: { kind: string; name: string | null };
    version: number | null;
  }>;
}

describe('who can see a drop, in Chromium with a real OIDC provider', () => {
  it('lets a verified email at an @domain on the list in, back at the same version', async () => {
    const slug = await publish({ visibility: 'people', allow: ['@client.example'] });
    const context = await browser.newContext();
    const p = await context.newPage();
    const back = `${base}/p/${slug}?v=1`;
    const refused = await p.goto(back);
    expect(refused?.status()).toBe(401);
    expect(await p.content()).not.toContain('Client report');
    await signInAt(p, 'dana', back);
    expect(await p.title()).toContain('Client report');
    const frame = p.frameLocator('iframe');
    await expect.poll(() => frame.locator('body').textContent()).toContain('Revenue by region');
    expect((await access(slug))[0]).toMatchObject({
      outcome: 'viewed',
      who: { kind: 'person', name: 'dana' },
      version: 1,
    });
    await context.close();
  });

  it('shows Eve, not on the list, the 403 page naming her, logs it, and signs her out back to the sign-in page', async () => {
    const slug = await publish({ visibility: 'people', allow: ['dana@client.example'] });
    const context = await browser.newContext();
    const p = await context.newPage();
    const back = `${base}/p/${slug}`;
    await p.goto(back);
    await signInAt(p, 'eve', back);
    expect(await p.locator('h1').textContent()).toBe('You are not on the list');
    expect(await p.locator('.who').textContent()).toBe('eve');
    expect(await p.content()).not.toContain('Client report');
    expect((await access(slug))[0]).toMatchObject({
      outcome: 'refused',
      reason: 'not_on_list',
      who: { kind: 'person', name: 'eve' },
    });
    await Promise.all([p.waitForURL(back), p.locator('#sign-out').click()]);
    expect(await p.locator('h1').textContent()).toBe('Sign in to see this drop');
    await context.close();
  });

  it('does not count an email the provider has not verified', async () => {
    const slug = await publish({ visibility: 'people', allow: ['@client.example'] });
    const context = await browser.newContext();
    const p = await context.newPage();
    const back = `${base}/p/${slug}`;
    await p.goto(back);
    await signInAt(p, 'mal', back);
    expect(await p.locator('h1').textContent()).toBe('You are not on the list');
    await context.close();
  });

  it('has accessible 401 and 403 pages on desktop, phone and dark (screenshots)', async () => {
    const slug = await publish({ visibility: 'people', allow: ['dana@client.example'] });
    const signedIn = await browser.newContext();
    const sp = await signedIn.newPage();
    await sp.goto(`${base}/p/${slug}`);
    await signInAt(sp, 'eve', `${base}/p/${slug}`);
    const state = await signedIn.storageState();
    await signedIn.close();
    for (const [look, options] of Object.entries(LOOKS)) {
      for (const [kind, storageState] of [
        ['sign-in', undefined],
        ['not-on-list', state],
      ] as const) {
        const context = await browser.newContext({
          ...options,
          bypassCSP: true,
          ...(storageState ? { storageState } : {}),
        });
        const p = await context.newPage();
        await p.goto(`${base}/p/${slug}`);
        await p.screenshot({ path: screenshotPath(`visibility-${kind}-${look}`), fullPage: true });
        const violations = blocking(await axeViolations(p));
        expect(violations, describeViolations(`${kind} ${look}`, violations)).toEqual([]);
        await context.close();
      }
    }
  });
});
