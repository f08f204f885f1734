/**
 * The whole review loop, as an agent and a human live it (docs/api.md, "Comments"): the agent publishes, a person
 * comments in the viewer in real Chromium, the agent's waiting call wakes with the comment, the agent uploads a new
 * version that resolves it, and the viewer shows the comment resolved in that version (on version 2, and marked on
 * version 1). Once with the real CLI (the
 * built `htmldrop`), once with the real MCP server (the built `htmldrop-mcp` over stdio).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshotPath } from './browser.js';
import { type Harness, tempDir } from './helpers.js';
import { serveOnLoopback } from './served.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(ROOT, 'packages/client/bin/htmldrop.js');
const MCP = path.join(ROOT, 'packages/mcp/bin/htmldrop-mcp.js');

let h: Harness;
let browser: Browser;
let base: string;
let home: string;
let agentEnv: Record<string, string>;

beforeAll(async () => {
  ({ h, base } = await serveOnLoopback());
  browser = await launchBrowser();
  home = tempDir('htmldrop-loop-home-');
  agentEnv = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    HTMLDROP_SERVER: base,
    HTMLDROP_TOKEN: await h.token('agent'),
  };
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
  fs.rmSync(home, { recursive: true, force: true });
});

function htmldrop(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: home, env: agentEnv, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    );
  });
}

/** A person opens the drop, signs in from the comments panel, and comments on the version shown. */
async function personComments(slug: string, text: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const p = await context.newPage();
  await p.goto(`${base}/p/${slug}`);
  await p.locator('#comments-toggle').click();
  await Promise.all([p.waitForURL(/\/verify\/local\?state=/), p.locator('#comment-sign-in').click()]);
  await p.locator('#username').fill('reviewer');
  await Promise.all([p.waitForURL(`${base}/p/${slug}#comments`), p.locator('#local-sign-in').click()]);
  await p.locator('#c-body').fill(text);
  await Promise.all([p.waitForURL(`${base}/p/${slug}#comments`), p.locator('#comment-submit').click()]);
  return p;
}

/**
 * The person looks at version 2: the comment made on version 1 is listed as resolved in this version; and at
 * version 1 again: the comment is marked resolved in version 2.
 */
async function seesResolved(p: Page, slug: string, shot: string): Promise<void> {
  await p.goto(`${base}/p/${slug}?v=2#comments`);
  expect(await p.locator('#resolved-here .c .done').textContent()).toBe('Resolved in this version');
  expect(await p.locator('#comment-count').textContent()).toBe('1');
  await p.screenshot({ path: screenshotPath(`${shot}-v2`) });
  await p.goto(`${base}/p/${slug}?v=1#comments`);
  expect(await p.locator('#comment-list .c .done').textContent()).toBe('Resolved in v2');
  await p.screenshot({ path: screenshotPath(shot) });
  await p.context().close();
}

const doc = (heading: string) =>
  `<!doctype html><html><head><title>Loop report</title></head><body><h1>${heading}</h1></body></html>`;

describe('the review loop', () => {
  it('with the CLI: publish, a person comments, feedback --wait wakes, update --resolves, shown resolved', async () => {
    fs.writeFileSync(path.join(home, 'report.html'), doc('Revenue up 12%'));
    const published = await htmldrop(['publish', 'report.html', '--json']);
    expect(published.code, published.stderr).toBe(0);
    const { slug } = (JSON.parse(published.stdout) as { drop: { slug: string } }).drop;

    const waiting = htmldrop(['feedback', slug, '--wait', '30', '--json']);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const p = await personComments(slug, 'Add October to the chart, please.');
    const commented = Date.now();
    const feedback = await waiting;
    expect(feedback.code, feedback.stderr).toBe(0);
    expect(Date.now() - commented).toBeLessThan(2000);
    const [comment] = (JSON.parse(feedback.stdout) as { data: Array<{ id: string; body: string; version: number }> })
      .data;
    expect(comment).toMatchObject({ body: 'Add October to the chart, please.', version: 1 });

    fs.writeFileSync(path.join(home, 'report.html'), doc('Revenue up 12%, October included'));
    const updated = await htmldrop(['update', slug, 'report.html', '--resolves', comment?.id ?? '', '--json']);
    expect(updated.code, updated.stderr).toBe(0);
    await seesResolved(p, slug, 'review-loop-cli');
  }, 90_000);

  it('with the MCP server: publish, a person comments, get_feedback waits and wakes, update resolves', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP],
      env: agentEnv,
      cwd: home,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'review-loop-test', version: '1.0.0' });
    await client.connect(transport);
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
      const text = (result.content as { type: string; text: string }[])[0]?.text ?? 'null';
      expect(result.isError, text).not.toBe(true);
      return JSON.parse(text) as Record<string, unknown>;
    };
    try {
      const { drop } = (await call('publish', { title: 'Loop report', html: doc('Churn down') })) as {
        drop: { slug: string };
      };
      const waiting = call('get_feedback', { slug: drop.slug, wait: 30 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const p = await personComments(drop.slug, 'Which quarter is this?');
      const commented = Date.now();
      const feedback = (await waiting) as { data: Array<{ id: string; body: string }> };
      expect(Date.now() - commented).toBeLessThan(2000);
      expect(feedback.data.map((c) => c.body)).toEqual(['Which quarter is this?']);
      await call('update', { slug: drop.slug, html: doc('Churn down in Q3'), resolves: [feedback.data[0]?.id] });
      await seesResolved(p, drop.slug, 'review-loop-mcp');
    } finally {
      await client.close();
    }
  }, 90_000);
});
