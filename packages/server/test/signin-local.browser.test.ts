/** Device-code sign-in with the local provider in real Chromium, and what a hostile drop cannot do to it. */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshotPath } from './browser.js';
import { pollFlow, startFlow } from './device-api.js';
import { createHarness, type Harness } from './helpers.js';
import { freePort } from './process.js';

let h: Harness;
let browser: Browser;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  h = await createHarness({ env: { HTMLDROP_BASE_URL: base } });
  await h.app.listen({ port, host: '127.0.0.1' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const start = (label: string) => startFlow(base, label);
const poll = (pollToken: string) => pollFlow(base, pollToken);

/** Opens the verification URL and signs in locally; leaves the page on the approval screen. */
async function signIn(page: Page, verificationUrl: string, username: string): Promise<void> {
  await page.goto(verificationUrl);
  await Promise.all([page.waitForURL(/\/verify\/local/), page.locator('#sign-in').click()]);
  await page.locator('#username').fill(username);
  await Promise.all([page.waitForSelector('#approve'), page.locator('#local-sign-in').click()]);
}

describe('local sign-in in Chromium', () => {
  it('shows the code, signs in, approves, and the next poll returns a working token', async () => {
    const flow = await start('laptop agent');
    const page = await browser.newPage();
    await page.goto(flow.verification_url);
    expect(await page.locator('#user-code').textContent()).toBe(flow.code);
    expect(await page.locator('#request-label').textContent()).toBe('laptop agent');
    expect(await page.locator('#request-time').textContent()).toMatch(/UTC/);
    await page.screenshot({ path: screenshotPath('verify-start') });
    await signIn(page, flow.verification_url, 'hana');
    expect(await page.locator('#signed-in-as').textContent()).toContain('hana');
    expect((await poll(flow.poll_token)).status).toBe('pending');
    await page.screenshot({ path: screenshotPath('verify-approve') });
    await page.locator('#approve').click();
    await expect.poll(() => page.locator('#outcome').getAttribute('data-outcome')).toBe('approved');
    const verified = await poll(flow.poll_token);
    expect(verified.status).toBe('verified');
    const me = await fetch(`${base}/api/me`, { headers: { authorization: `Bearer ${verified.api_token}` } });
    expect(await me.json()).toMatchObject({ user_id: verified.user_id, login: 'hana', provider: 'local' });
    expect((await poll(flow.poll_token)).status).toBe('claimed');
    await page.close();
  });

  it('denies', async () => {
    const flow = await start('to deny');
    const page = await browser.newPage();
    await signIn(page, flow.verification_url, 'ivan');
    await page.locator('#deny').click();
    await expect.poll(() => page.locator('#outcome').getAttribute('data-outcome')).toBe('denied');
    expect((await poll(flow.poll_token)).status).toBe('expired');
    await page.close();
  });
});

describe("one session for the service's pages", () => {
  it('approving a device code at /verify signs the person in on /console: no second sign-in', async () => {
    const flow = await start('one sign-in');
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, flow.verification_url, 'hana');
    await page.locator('#approve').click();
    await expect.poll(() => page.locator('#outcome').getAttribute('data-outcome')).toBe('approved');
    await page.goto(`${base}/console`);
    expect(await page.locator('#console-sign-in').count()).toBe(0);
    expect(await page.locator('#signed-in-as').textContent()).toContain('hana');
    const session = (await context.cookies(base)).find((c) => c.name === 'hd_web');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect((await context.cookies(base)).map((c) => c.name).sort()).toEqual(['hd_web']);
    await context.close();
  });

  it('signing in at /console opens /verify signed in; signing out of the console ends it on /verify', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/console`);
    await Promise.all([page.waitForURL(/\/verify\/local\?state=/), page.locator('#console-sign-in').click()]);
    await page.locator('#username').fill('ivan');
    await Promise.all([page.waitForURL(`${base}/console`), page.locator('#local-sign-in').click()]);
    const flow = await start('after the console');
    await page.goto(flow.verification_url);
    expect(await page.locator('#approve').count()).toBe(1);
    expect(await page.locator('#signed-in-as').textContent()).toContain('ivan');
    await page.goto(`${base}/console`);
    await Promise.all([page.waitForURL(`${base}/console`), page.locator('#sign-out').click()]);
    expect(await page.locator('#console-sign-in').count()).toBe(1);
    await page.goto(flow.verification_url);
    expect(await page.locator('#sign-in').count()).toBe(1);
    expect(await page.locator('#approve').count()).toBe(0);
    expect((await poll(flow.poll_token)).status).toBe('pending');
    await context.close();
  });
});

describe('a hostile drop against /verify', () => {
  let context: BrowserContext;

  beforeAll(async () => {
    context = await browser.newContext();
  });
  afterAll(() => context.close());

  it('cannot approve a request for a signed-in human, by fetch, form post or navigation', async () => {
    const flow = await start('victim');
    const page = await context.newPage();
    await signIn(page, flow.verification_url, 'victim');
    const csrfOnPage = await page.locator('input[name=csrf]').first().getAttribute('value');
    expect(csrfOnPage).toBeTruthy();

    const attacker = await h.token('attacker');
    const html = `<!doctype html><html><head><title>innocent</title></head><body><pre id="out">pending</pre>
<form id="f" method="post" action="${base}/verify/decide" target="sink">
<input name="code" value="${flow.code}"><input name="decision" value="approve"><input name="csrf" value="guess"></form>
<iframe name="sink"></iframe>
<script>
  const out = document.getElementById('out');
  const body = new URLSearchParams({ code: '${flow.code}', decision: 'approve', csrf: 'guess' });
  fetch('${base}/verify/decide', { method: 'POST', body, credentials: 'include', mode: 'no-cors' })
    .then(() => 'sent', (e) => 'blocked:' + e.name)
    .then((r) => { out.textContent = r; document.getElementById('f').submit(); });
  window.open('${base}/verify?code=${flow.code}&decision=approve');
</script></body></html>`;
    const created = await h.call('POST', '/api/drops', { token: attacker, body: { title: 'Innocent', html } });
    await page.goto(`${base}/p/${created.json.slug}`);
    await expect
      .poll(() => page.frameLocator('iframe').first().locator('#out').textContent(), { timeout: 10_000 })
      .not.toBe('pending');
    await page.waitForTimeout(500);
    // Also the raw document opened directly (no viewer iframe): its CSP sandbox gives it an opaque origin too.
    await page.goto(`${base}/p/${created.json.slug}/raw`);
    await page.waitForTimeout(500);
    expect((await poll(flow.poll_token)).status).toBe('pending');
    await page.close();
  });

  it('cannot frame the verification page', async () => {
    const flow = await start('framed');
    const page = await context.newPage();
    // Still signed in from the previous test: the page shows the approval buttons straight away.
    await page.goto(flow.verification_url);
    await page.waitForSelector('#approve');
    const attacker = await h.token('framer');
    const html = `<!doctype html><html><body><iframe id="v" src="${base}/verify?code=${flow.code}" width="600" height="400"></iframe></body></html>`;
    const created = await h.call('POST', '/api/drops', { token: attacker, body: { title: 'Framer', html } });
    await page.goto(`${base}/p/${created.json.slug}/raw`, { waitUntil: 'domcontentloaded' });
    await page.waitForTimeout(1000);
    // A frame refused by frame-ancestors/X-Frame-Options ends on Chromium's error page, never on /verify.
    const urls = page.frames().map((f) => f.url());
    expect(urls).toHaveLength(2);
    expect(urls.some((u) => u.includes('/verify'))).toBe(false);
    const direct = await fetch(flow.verification_url);
    expect(direct.headers.get('x-frame-options')).toBe('DENY');
    expect(direct.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    await page.close();
  });
});
