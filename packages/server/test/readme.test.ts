/**
 * The README, run as printed: its quick start starts a fresh service, then its agent, "elsewhere" and curl-tour
 * blocks run in bash against it, and the human's approval of the device flow is done in Chromium. Blocks are found
 * by the `<!-- readme-test: NAME -->` comment before them. Two things differ from a reader's shell, and only these:
 * the service listens on a free port (every `localhost:8787` in a block becomes that address, and HTMLDROP_SERVER
 * names it for the CLI, whose default is localhost:8787), and the npm registry is unreachable, so any command that
 * would look a name up there fails the test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshotPath } from './browser.js';
import { tempDir } from './helpers.js';
import { freePort } from './process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The `sh` block that follows `<!-- readme-test: name -->` in the README. */
function readmeBlock(name: string): string {
  const match = new RegExp(`<!-- readme-test: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\``).exec(README);
  if (match?.[1] === undefined) throw new Error(`README has no block marked readme-test: ${name}`);
  return match[1];
}

let port: number;
let base: string;
let dataDir: string;
let home: string;
let work: string;
let browser: Browser;
let service: ChildProcess | undefined;
const children: ChildProcess[] = [];

/** A reader's shell: an empty home, the repository's programs, no registry. */
function shellEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    LANG: 'C.UTF-8',
    npm_config_cache: path.join(home, '.npm'),
    npm_config_update_notifier: 'false',
    npm_config_registry: 'http://127.0.0.1:9/',
    PORT: String(port),
    HTMLDROP_BASE_URL: base,
    HTMLDROP_SERVER: base,
    HTMLDROP_DATA_DIR: dataDir,
    HTMLDROP_LOG_LEVEL: 'warn',
  };
}

interface Run {
  readonly child: ChildProcess;
  output(): { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

/** Runs a README block in bash (stopping at the first failing command), in `cwd`. */
function runBlock(script: string, cwd: string): Run {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script.replaceAll('localhost:8787', `127.0.0.1:${port}`)], {
    cwd,
    env: shellEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => ({ stdout, stderr }), exited };
}

async function finished(run: Run, timeoutMs = 90_000): Promise<{ stdout: string; stderr: string }> {
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref());
  const code = await Promise.race([run.exited, timeout]);
  const output = run.output();
  expect(code, `exit ${code}\nstdout:\n${output.stdout}\nstderr:\n${output.stderr}`).toBe(0);
  return output;
}

/** The token the agent block's `htmldrop login` stored in the reader's home. */
function storedToken(): string {
  return fs.readFileSync(path.join(home, '.config/htmldrop/token'), 'utf8').trim();
}

async function api(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${storedToken()}` } });
  return { status: response.status, body: await response.json() };
}

beforeAll(async () => {
  port = await freePort();
  base = `http://127.0.0.1:${port}`;
  dataDir = tempDir('htmldrop-readme-data-');
  home = tempDir('htmldrop-readme-home-');
  // Inside the repository, where `npx --no-install` finds the workspace's programs, as from its root.
  fs.mkdirSync(path.join(ROOT, '.artifacts'), { recursive: true });
  work = fs.mkdtempSync(path.join(ROOT, '.artifacts', 'readme-'));
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  for (const child of children) {
    if (child.exitCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGTERM'); // the block's whole process group (npm, node)
      } catch {
        // already gone
      }
    }
  }
  if (service !== undefined && service.exitCode === null) {
    await new Promise((resolve) => service?.once('exit', resolve));
  }
  for (const dir of [dataDir, home, work]) if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the README, as printed', () => {
  it('quick start: `npm start` serves a fresh service', async () => {
    const lines = readmeBlock('quick-start')
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, ''));
    expect(lines).toEqual(['npm install && npm start', 'npm test']);
    // `npm install` runs on every fresh clone in .ci/run; here the installed tree must not be touched.
    const run = runBlock('npm start', ROOT);
    service = run.child;
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (run.child.exitCode !== null) throw new Error(`npm start exited: ${run.output().stderr}`);
      const ok = await fetch(`${base}/llms.txt`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`npm start did not serve: ${run.output().stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 70_000);

  it('agent block: login (approved in Chromium), publish, upsert to version 2, list', async () => {
    const run = runBlock(readmeBlock('agent'), work);
    // The human: opens the URL the CLI printed, signs in with the local provider, approves.
    let verificationUrl: string | undefined;
    const deadline = Date.now() + 60_000;
    while (verificationUrl === undefined) {
      verificationUrl = /(http:\/\/\S+\/verify\?code=[A-Z0-9-]+)/.exec(run.output().stderr)?.[1];
      if (run.child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`no verification URL: ${JSON.stringify(run.output())}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const page = await browser.newPage();
    await page.goto(verificationUrl);
    await Promise.all([page.waitForURL(/\/verify\/local/), page.locator('#sign-in').click()]);
    await page.locator('#username').fill('alice');
    await Promise.all([page.waitForSelector('#approve'), page.locator('#local-sign-in').click()]);
    await page.screenshot({ path: screenshotPath('readme-approve') });
    await page.locator('#approve').click();
    await expect.poll(() => page.locator('#outcome').getAttribute('data-outcome')).toBe('approved');
    await page.close();

    const { stdout } = await finished(run);
    expect(fs.statSync(path.join(home, '.config/htmldrop/token')).mode & 0o777).toBe(0o600);
    const listed = await api('/api/drops?metadata.project=acme');
    const drops = (listed.body as { data: Array<{ slug: string; title: string; latest_version: number }> }).data;
    expect(drops).toHaveLength(1);
    expect(drops[0]).toMatchObject({ title: 'Q3 report', latest_version: 2 });
    expect(stdout).toContain(`${base}/p/${drops[0]?.slug}`);
  }, 120_000);

  it('"any other machine" block: the CLI the service hands out, with the stored token', async () => {
    const { stdout } = await finished(runBlock(readmeBlock('elsewhere'), work));
    expect(stdout).toContain('alice');
  }, 120_000);

  it('curl tour: operator token, publish, new version, lookup by tag, the public document', async () => {
    const { stdout } = await finished(runBlock(readmeBlock('curl-tour'), work));
    const slug = new RegExp(`viewer: ${base}/p/([A-Za-z0-9_-]+)`).exec(stdout)?.[1];
    expect(slug, stdout).toBeDefined();
    expect(stdout).toContain(`"slug": "${slug}"`);
    expect(stdout).toContain('"latest_version": 2');
    expect(stdout).toContain('<h1>Hello from the tour</h1>');
    expect(stdout).toContain('<style data-htmldrop>');
    // The tour's drop belongs to the account the agent signed in as (same login, local provider).
    const drop = await api(`/api/drops/${slug}`);
    expect(drop.body).toMatchObject({ title: 'Tour', latest_version: 2, metadata: { project: 'tour' } });
  }, 120_000);
});
