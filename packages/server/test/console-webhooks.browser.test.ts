/**
 * The console's Webhooks page in real Chromium (docs/console.md, "Webhooks"): added with the keyboard, the secret
 * shown once with its copy button, "Send test event" delivered to a receiver on loopback, removed after the
 * confirmation; axe-core and screenshots on desktop, phone and dark.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, blocking, describeViolations } from './axe.js';
import { launchBrowser, screenshotPath } from './browser.js';
import type { Harness } from './helpers.js';
import { serveOnLoopback } from './served.js';

let h: Harness;
let browser: Browser;
let base: string;
let state: Awaited<ReturnType<BrowserContext['storageState']>>;
const received: string[] = [];
const receiver = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    received.push(body);
    response.writeHead(204).end();
  });
});
let hookUrl: string;

const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };
const LOOKS: Record<string, BrowserContextOptions> = {
  desktop: DESKTOP,
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  dark: { ...DESKTOP, colorScheme: 'dark' },
};

beforeAll(async () => {
  ({ h, base } = await serveOnLoopback({ env: { HTMLDROP_WEBHOOK_ALLOW_PRIVATE: '1' } }));
  h.services.webhookWorker.start(h.app.log);
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/htmldrop`;
  browser = await launchBrowser();
  const context = await browser.newContext();
  const p = await context.newPage();
  await p.goto(`${base}/console/login?next=${encodeURIComponent('/console/webhooks')}`);
  await p.locator('#username').fill('wren');
  await Promise.all([p.waitForURL(`${base}/console/webhooks`), p.locator('#local-sign-in').click()]);
  state = await context.storageState();
  await context.close();
});
afterAll(async () => {
  await browser?.close();
  await h?.services.webhookWorker.stop();
  await h?.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

describe('the Webhooks page', () => {
  it('adds, shows the secret once, sends a test event, and removes', async () => {
    const context = await browser.newContext({ ...DESKTOP, storageState: state });
    const p = await context.newPage();
    await p.goto(`${base}/console/webhooks`);
    await p.locator('#webhook-url').fill(hookUrl);
    await p.locator('input[name="event-drop.version_created"]').check();
    await p.locator('input[name="event-comment.created"]').focus();
    await p.keyboard.press('Space');
    await Promise.all([p.waitForLoadState('load'), p.locator('#add-webhook button[type=submit]').click()]);
    const secret = (await p.locator('#webhook-secret').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^whsec_/);
    expect(await p.locator('[data-copy="webhook-secret"]').isVisible()).toBe(true);
    await p.screenshot({ path: screenshotPath('console-webhooks-secret-desktop'), fullPage: true });

    await p.goto(`${base}/console/webhooks`);
    expect(await p.locator('#webhook-secret').count()).toBe(0);
    await Promise.all([p.waitForURL(/done=webhook-test/), p.locator('button', { hasText: 'Send test event' }).click()]);
    const deadline = Date.now() + 5000;
    while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(JSON.parse(received[0] ?? '{}').type).toBe('webhook.test');
    await p.reload();
    await expect.poll(() => p.locator('#webhook-list .badge').first().textContent()).toBe('delivered (204)');
    p.once('dialog', (dialog) => dialog.accept());
    await Promise.all([p.waitForURL(/done=webhook-removed/), p.locator('button', { hasText: 'Remove' }).click()]);
    expect(await p.locator('#no-webhooks').count()).toBe(1);
    await context.close();
  });

  it('passes axe-core and looks right on desktop, phone and dark', async () => {
    const token = await h.token('wren');
    await h.call('POST', '/api/webhooks', {
      token,
      body: { url: hookUrl, events: ['drop.created', 'drop.version_created', 'comment.created'] },
    });
    await h.call('POST', '/api/webhooks', { token, body: { url: `${hookUrl}/ci`, events: ['drop.deleted'] } });
    for (const [name, options] of Object.entries(LOOKS)) {
      const context = await browser.newContext({ ...options, storageState: state, bypassCSP: true });
      const p = await context.newPage();
      await p.goto(`${base}/console/webhooks`);
      const violations = blocking(await axeViolations(p));
      expect(violations, describeViolations(`webhooks (${name})`, violations)).toEqual([]);
      await p.screenshot({ path: screenshotPath(`console-webhooks-${name}`), fullPage: true });
      await context.close();
    }
  });
});
