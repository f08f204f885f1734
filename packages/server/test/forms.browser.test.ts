/**
 * A refused form in real Chromium (docs/api.md, "Forms"): a description pasted far over its limit comes back as the
 * console's drop page with the limit named and what was typed still in the form; a form a browser sends as
 * `text/plain` to /verify or the passcode gate comes back as that room's page (415), never JSON. Each page passes
 * axe (light, dark, phone) and is photographed for review.
 */
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, blocking, describeViolations } from './axe.js';
import { launchBrowser, screenshotPath } from './browser.js';
import { page as doc, type Harness } from './helpers.js';
import { serveOnLoopback } from './served.js';

let h: Harness;
let browser: Browser;
let base: string;
let token: string;
let slug: string;

beforeAll(async () => {
  ({ h, base } = await serveOnLoopback());
  browser = await launchBrowser();
  token = await h.token('ann');
  const created = await h.call('POST', '/api/drops', {
    token,
    body: { title: 'Q3 report', description: 'stored words', html: doc('q3'), passcode: 'open-sesame' },
  });
  slug = created.json.slug;
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const LOOKS: ReadonlyArray<[string, BrowserContextOptions]> = [
  ['desktop', { viewport: { width: 1280, height: 800 } }],
  ['phone', { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }],
  ['dark', { viewport: { width: 1280, height: 800 }, colorScheme: 'dark' }],
];

async function expectAccessible(p: Page, where: string): Promise<void> {
  const violations = blocking(await axeViolations(p));
  expect(violations, describeViolations(where, violations)).toEqual([]);
}

/**
 * Posts the page's first form again as `text/plain`, as a browser does for `<form enctype="text/plain">`: the
 * answer is the page the browser shows.
 */
async function postAsPlainText(p: Page, selector: string, lands: RegExp): Promise<number> {
  const [answer] = await Promise.all([
    p.waitForResponse((r) => r.request().method() === 'POST'),
    p.waitForURL(lands),
    p.evaluate(`(() => { const f = document.querySelector(${JSON.stringify(selector)}).form;
      f.enctype = 'text/plain'; f.requestSubmit(); })()`),
  ]);
  return answer.status();
}

describe('a refused form is a page', () => {
  for (const [look, options] of LOOKS) {
    it(`the console keeps a 70 KB pasted description and names the limit (${look})`, async () => {
      const context = await browser.newContext({ ...options, bypassCSP: true });
      const p = await context.newPage();
      await p.goto(`${base}/console`);
      await Promise.all([p.waitForURL(/\/verify\/local\?state=/), p.locator('#console-sign-in').click()]);
      await p.locator('#username').fill('ann');
      await Promise.all([p.waitForURL(`${base}/console`), p.locator('#local-sign-in').click()]);
      await p.goto(`${base}/console/drops/${slug}`);
      const pasted = `Pasted from the quarterly deck: ${'revenue grew in every region; '.repeat(2_400)}`;
      await p.locator('#description').fill(pasted);
      const [answer] = await Promise.all([
        p.waitForResponse((r) => r.request().method() === 'POST'),
        p.locator('#save-details').click(),
      ]);
      await p.waitForLoadState('load');
      expect(answer.status()).toBe(400);
      expect(await p.locator('#console-error').textContent()).toMatch(/500 characters/);
      expect(await p.locator('#description').inputValue()).toBe(pasted);
      await expectAccessible(p, `console refusal (${look})`);
      await p.screenshot({ path: screenshotPath(`forms-console-too-long-${look}`) });
      expect((await h.call('GET', `/api/drops/${slug}`, { token })).json.description).toBe('stored words');
      await context.close();
    });

    it(`/verify and the passcode gate answer a text/plain form with their pages (${look})`, async () => {
      const context = await browser.newContext({ ...options, bypassCSP: true });
      const p = await context.newPage();
      await p.goto(`${base}/p/${slug}`);
      await p.locator('#passcode').fill('open-sesame');
      expect(await postAsPlainText(p, '#passcode', /\/unlock$/)).toBe(415);
      expect(await p.locator('#gate-error').textContent()).toMatch(/form.*Enter the passcode again/);
      await expectAccessible(p, `gate refusal (${look})`);
      await p.screenshot({ path: screenshotPath(`forms-gate-not-a-form-${look}`) });
      await p.goto(`${base}/verify`);
      await p.locator('#code').fill('ABCD-EFGH');
      await p.evaluate(`(() => { const f = document.querySelector('form'); f.method = 'post';
        f.action = '/verify/decide'; })()`);
      expect(await postAsPlainText(p, '#code', /\/verify\/decide$/)).toBe(415);
      expect(await p.locator('#form-error').textContent()).toMatch(/form/);
      await expectAccessible(p, `verify refusal (${look})`);
      await p.screenshot({ path: screenshotPath(`forms-verify-not-a-form-${look}`) });
      await context.close();
    });
  }
});
