/**
 * Sign-in through a real OpenID Connect provider (oidc-provider on loopback), driven in real headless Chromium:
 * the agent's start, /verify, the provider's login and consent, the callback, approval, and the token it yields.
 * The provider is at `localhost`, the service at `127.0.0.1`: two different sites, as in production, so the
 * SameSite cookies of /verify are exercised across a cross-site redirect; the session it sets opens the console too.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshotPath } from './browser.js';
import { expectTokenOnce, pollFlow, type StartedFlow, startFlow } from './device-api.js';
import type { Harness } from './helpers.js';
import { consentAndReturn, DEFAULT_OIDC_USER, type OidcTestProvider } from './oidc-provider.js';
import { serveWithOidcProvider } from './served.js';

let h: Harness;
let op: OidcTestProvider;
let browser: Browser;
let base: string;

beforeAll(async () => {
  ({ h, base, op } = await serveWithOidcProvider());
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
  await op?.close();
});

type Started = StartedFlow;

const start = (label: string) => startFlow(base, label);
const poll = async (started: Started): Promise<Record<string, unknown>> => ({
  ...(await pollFlow(base, started.poll_token)),
});

async function me(token: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}/api/me`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

/** The human's part, from the verification URL to the approved outcome. */
async function signInAndApprove(context: BrowserContext, started: Started, label: string, shot: string) {
  const page = await context.newPage();
  try {
    await page.goto(started.verification_url);
    expect(await page.locator('#user-code').textContent()).toBe(started.code);
    expect(await page.locator('#request-label').textContent()).toBe(label);
    expect(await page.locator('#request-time').textContent()).toMatch(/\S/);
    await page.screenshot({ path: screenshotPath(`verify-oidc-${shot}-sign-in`) });

    await Promise.all([page.waitForURL(`${op.issuer}/interaction/**`), page.locator('#sign-in').click()]);
    expect(await page.locator('#provider-client').textContent()).toBe(op.clientId);
    await page.locator('#username').fill(DEFAULT_OIDC_USER.preferredUsername);
    await page.screenshot({ path: screenshotPath(`verify-oidc-${shot}-provider-login`) });
    await page.locator('#provider-login').click();

    await consentAndReturn(page, op);
    expect(page.url()).toBe(`${base}/verify?code=${started.code}`);
    expect(await page.locator('#user-code').textContent()).toBe(started.code);
    expect(await page.locator('#signed-in-as').textContent()).toContain(DEFAULT_OIDC_USER.preferredUsername);
    await page.screenshot({ path: screenshotPath(`verify-oidc-${shot}-confirm`) });

    await page.locator('#approve').click();
    await page.locator('#outcome').waitFor();
    expect(await page.locator('#outcome').getAttribute('data-outcome')).toBe('approved');
    await page.screenshot({ path: screenshotPath(`verify-oidc-${shot}-approved`) });
  } finally {
    await page.close();
  }
}

describe('sign-in with OpenID Connect in Chromium', () => {
  it('signs in at the provider, approves, and hands the agent one working token', async () => {
    const started = await start('oidc e2e');
    expect(started.verification_url).toBe(`${base}/verify?code=${started.code}`);
    expect(await poll(started)).toEqual({ status: 'pending' });

    const context = await browser.newContext();
    await signInAndApprove(context, started, 'oidc e2e', 'first');
    // The sign-in cookie is spent; the one session cookie is host-only, HttpOnly, Lax, for every service page.
    const cookies = await context.cookies(`${base}/verify`);
    expect(cookies.find((c) => c.name === 'hd_signin')).toBeUndefined();
    expect(cookies.find((c) => c.name === 'hd_web')).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    // Approving signed the person in on the console too: no second sign-in, the provider is not asked again.
    const logins = op.logins.length;
    const consolePage = await context.newPage();
    await consolePage.goto(`${base}/console`);
    expect(await consolePage.locator('#signed-in-as').textContent()).toContain(DEFAULT_OIDC_USER.preferredUsername);
    expect(op.logins.length).toBe(logins);
    await context.close();

    const { apiToken, userId } = await expectTokenOnce(base, started.poll_token);
    const verified = { api_token: apiToken, user_id: userId };

    const account = await me(String(verified.api_token));
    expect(account).toMatchObject({
      user_id: verified.user_id,
      login: DEFAULT_OIDC_USER.preferredUsername,
      provider: 'oidc',
      token: { label: 'oidc e2e' },
    });
    // One account per (issuer, sub).
    expect((await h.store.findAccount(String(verified.user_id)))?.subject).toBe(
      `${op.issuer}#${DEFAULT_OIDC_USER.sub}`,
    );
    expect(op.errors).toEqual([]);
    expect(op.grants).toBeGreaterThan(0);
  });

  it('gives a second sign-in of the same user a second token on the same account', async () => {
    const first = await start('oidc e2e');
    const second = await start('oidc e2e again');
    const tokens: Record<string, unknown>[] = [];
    const loginsBefore = op.logins.length;
    for (const [index, started] of [first, second].entries()) {
      const context = await browser.newContext();
      await signInAndApprove(context, started, index === 0 ? 'oidc e2e' : 'oidc e2e again', `repeat-${index}`);
      await context.close();
      tokens.push(await poll(started));
    }
    expect(op.logins.length - loginsBefore).toBe(2);
    const [a, b] = tokens;
    expect(a?.status).toBe('verified');
    expect(b?.status).toBe('verified');
    expect(a?.api_token).not.toBe(b?.api_token);
    expect(a?.user_id).toBe(b?.user_id);
    const [meA, meB] = await Promise.all([me(String(a?.api_token)), me(String(b?.api_token))]);
    expect(meA.user_id).toBe(meB.user_id);
    expect(meB).toMatchObject({ login: DEFAULT_OIDC_USER.preferredUsername, provider: 'oidc' });
    expect((meA.token as { id: string }).id).not.toBe((meB.token as { id: string }).id);
  });

  it('refuses an answer from the provider whose state was changed on the way back', async () => {
    const started = await start('oidc tampered');
    const context = await browser.newContext();
    const page = await context.newPage();
    // The provider's answer arrives with another state, as if altered on the way or crafted by an attacker.
    let genuine: URL | undefined;
    const grantsBefore = op.grants;
    op.tamperWithAnswer = (answer) => {
      genuine = new URL(answer);
      const forged = new URL(answer);
      forged.searchParams.set('state', 'not-the-state-of-this-browser');
      return forged;
    };
    await page.goto(started.verification_url);
    await Promise.all([page.waitForURL(`${op.issuer}/interaction/**`), page.locator('#sign-in').click()]);
    await page.locator('#username').fill(DEFAULT_OIDC_USER.preferredUsername);
    await page.locator('#provider-login').click();
    try {
      await page.locator('#provider-allow, #outcome').first().waitFor({ timeout: 10_000 });
      if (await page.locator('#provider-allow').isVisible()) await page.locator('#provider-allow').click();
      await page.locator('#outcome').waitFor({ timeout: 10_000 });
    } finally {
      op.tamperWithAnswer = undefined;
    }
    expect(genuine?.searchParams.get('code')).toMatch(/\S/);
    expect(page.url()).toContain(`${base}/verify/callback?`);
    expect(page.url()).toContain('state=not-the-state-of-this-browser');
    expect(await page.locator('#outcome').getAttribute('data-outcome')).toBe('error');
    // Refused before the code was exchanged: the provider saw no token request.
    expect(op.grants).toBe(grantsBefore);
    await page.screenshot({ path: screenshotPath('verify-oidc-tampered-state') });
    expect((await context.cookies(`${base}/verify`)).find((c) => c.name === 'hd_web')).toBeUndefined();
    await context.close();
    expect(await poll(started)).toEqual({ status: 'pending' });
  });
});
