/**
 * The whole OAuth dance an MCP client does when it has only the service's URL (docs/api.md, "Remote MCP and
 * OAuth"), with the MCP SDK's own client `auth()` and real headless Chromium for the human: discovery from the 401,
 * registration, the authorization URL opened in the browser, sign-in through a real OpenID Connect provider on
 * loopback, approval, the redirect to the client's loopback listener, the code exchange, then a published drop over
 * Streamable HTTP with the token. Also the approval page on desktop, phone and dark, with axe-core.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, blocking, describeViolations } from './axe.js';
import { launchBrowser, screenshotPath } from './browser.js';
import { page as documentOf, type Harness } from './helpers.js';
import { consentAndReturn, DEFAULT_OIDC_USER, type OidcTestProvider } from './oidc-provider.js';
import { serveWithOidcProvider } from './served.js';

let h: Harness;
let op: OidcTestProvider;
let browser: Browser;
let base: string;
/** The MCP client's loopback listener: the redirect URI, which records what the browser brought back. */
let listener: http.Server;
let redirectUri: string;
const arrivals: URL[] = [];

beforeAll(async () => {
  ({ h, base, op } = await serveWithOidcProvider());
  listener = http.createServer((request, response) => {
    const arrived = new URL(request.url ?? '/', redirectUri);
    // Only the callback: Chromium also asks this origin for its favicon.
    if (arrived.pathname === '/callback') arrivals.push(arrived);
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>Done</title><p id="done">Done</p>');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => listener?.close(resolve));
  await h?.close();
  await op?.close();
});

/** An MCP client's OAuth state, in memory; `redirectToAuthorization` is where the human's browser is opened. */
function clientProvider(openBrowser: (url: URL) => Promise<void>): OAuthClientProvider {
  let information: OAuthClientInformationMixed | undefined;
  let tokens: OAuthTokens | undefined;
  let verifier = '';
  return {
    get redirectUrl() {
      return redirectUri;
    },
    get clientMetadata() {
      return {
        client_name: 'Browser Test Agent',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
    },
    clientInformation: () => information,
    saveClientInformation: (info) => {
      information = info;
    },
    tokens: () => tokens,
    saveTokens: (saved) => {
      tokens = saved;
    },
    redirectToAuthorization: openBrowser,
    saveCodeVerifier: (saved) => {
      verifier = saved;
    },
    codeVerifier: () => verifier,
  };
}

/** The human: from the authorization URL through the provider's sign-in to the approval page. */
async function signInToApproval(page: Page, url: URL): Promise<void> {
  await page.goto(url.href);
  expect(page.url()).toMatch(`${base}/verify/oauth?request=`);
  expect(await page.locator('#client-name').textContent()).toBe('Browser Test Agent');
  expect(await page.locator('#redirect-uri').textContent()).toBe(redirectUri);
  await page.screenshot({ path: screenshotPath('oauth-sign-in') });
  await Promise.all([page.waitForURL(`${op.issuer}/interaction/**`), page.locator('#sign-in').click()]);
  await page.locator('#username').fill(DEFAULT_OIDC_USER.preferredUsername);
  await page.locator('#provider-login').click();
  await consentAndReturn(page, op);
}

const SHOTS: Record<string, BrowserContextOptions> = {
  desktop: { viewport: { width: 1280, height: 800 } },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  dark: { viewport: { width: 1280, height: 800 }, colorScheme: 'dark' },
};

describe('an MCP client with only the service URL', () => {
  it('registers, sends its human through sign-in and approval in Chromium, and publishes a drop', async () => {
    const serverUrl = `${base}/mcp`;
    // What an MCP client meets first: a 401 naming the resource metadata.
    const first = await fetch(serverUrl, { method: 'POST', body: '{}' });
    expect(first.status).toBe(401);
    expect(first.headers.get('www-authenticate')).toContain('resource_metadata=');

    const context = await browser.newContext({ ...SHOTS.desktop, bypassCSP: true });
    const page = await context.newPage();
    const provider = clientProvider((url) => signInToApproval(page, url));
    expect(await auth(provider, { serverUrl })).toBe('REDIRECT');
    expect((provider.clientInformation() as { client_id: string }).client_id).toMatch(/^hdc_/);

    const serious = blocking(await axeViolations(page));
    expect(serious, describeViolations('approval page', serious)).toEqual([]);
    await page.screenshot({ path: screenshotPath('oauth-approval-desktop') });
    await Promise.all([page.waitForURL(`${redirectUri}?**`), page.locator('#approve').click()]);
    expect(await page.locator('#done').textContent()).toBe('Done');
    const back = arrivals.at(-1);
    expect(back?.searchParams.get('iss')).toBe(base);
    const code = back?.searchParams.get('code') ?? '';
    expect(code).not.toBe('');

    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED');
    const token = (await provider.tokens())?.access_token ?? '';
    expect(token).toMatch(/^hd_/);
    const listed = await h.call('GET', '/api/tokens', { token });
    expect(listed.json.map((t: { label: string }) => t.label)).toContain('Browser Test Agent');

    const client = new Client({ name: 'browser-test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
    const result = (await client.callTool({
      name: 'publish',
      arguments: { title: 'From OAuth', html: documentOf('oauth') },
    })) as CallToolResult;
    const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
    expect(result.isError ?? false, text).toBe(false);
    const { drop } = JSON.parse(text);
    const me = await h.call('GET', '/api/me', { token });
    // The owner-only read answers: the drop is in the account that signed in.
    expect((await h.call('GET', `/api/drops/${drop.slug}`, { token })).status).toBe(200);
    expect(me.json.login).toBe(DEFAULT_OIDC_USER.preferredUsername);
    await client.close();
    await context.close();
  });

  it('shows the approval page on phone and dark, and the denial goes back as access_denied', async () => {
    for (const [name, options] of Object.entries(SHOTS).filter(([n]) => n !== 'desktop')) {
      const context = await browser.newContext({ ...options, bypassCSP: true });
      const page = await context.newPage();
      const provider = clientProvider((url) => signInToApproval(page, url));
      expect(await auth(provider, { serverUrl: `${base}/mcp` })).toBe('REDIRECT');
      expect(blocking(await axeViolations(page))).toEqual([]);
      await page.screenshot({ path: screenshotPath(`oauth-approval-${name}`), fullPage: true });
      if (name === 'dark') {
        await Promise.all([page.waitForURL(`${redirectUri}?**`), page.locator('#deny').click()]);
        expect(arrivals.at(-1)?.searchParams.get('error')).toBe('access_denied');
      }
      await context.close();
    }
  });
});
