/**
 * `htmldrop publish <dir>` (docs/api.md, "Many files in one drop"): a folder built on the fly (a report with a PNG,
 * a stylesheet with a background image, a module script fetching JSON, a second page), listed by --dry-run, published
 * in one command, rendered in real Chromium with every asset, then a new version with one file changed.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { solidPng } from '../../../bench/png.mjs';
import { launchBrowser } from '../../server/test/browser.js';
import type { Drop, DropList, Version } from '../src/types.js';
import { run, runJson, type Sandbox, tempDir } from './run.js';
import { expectOneLine, useService } from './service.js';

const service = useService();
let box: Sandbox & { token: string };
let browser: Browser;

beforeAll(async () => {
  box = await service.signedIn('folders');
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** Writes `files` (path to content) under a new folder and returns it. */
function folder(files: Record<string, string | Buffer>): string {
  const dir = tempDir('htmldrop-folder-');
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

const INDEX = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Folder report</title>
<link rel="stylesheet" href="css/site.css"></head><body>
<h1 id="heading">Folder report</h1><img id="chart" src="img/chart.png" alt="chart">
<p id="status">loading</p><a href="pages/notes.html">Notes</a>
<script type="module" src="js/app.js"></script></body></html>`;

const REPORT = {
  'index.html': INDEX,
  'css/site.css': 'h1{color:rgb(10, 120, 60)}body{background:url(../img/bg.png)}',
  'img/chart.png': solidPng(48, 24, [30, 60, 200]),
  'img/bg.png': solidPng(4, 4, [250, 250, 250]),
  'js/app.js':
    "const rows = await (await fetch('data/rows.json')).json();\ndocument.querySelector('#status').textContent = 'loaded ' + rows.length + ' rows';\n",
  'data/rows.json': '[1,2,3,4]',
  'pages/notes.html': '<!doctype html><title>Notes</title><link rel="stylesheet" href="../css/site.css"><p>notes</p>',
  '.DS_Store': 'junk',
  '.git/config': '[core]',
};

describe('htmldrop publish <dir>', () => {
  it('lists what would go with --dry-run (dotfiles skipped) and sends nothing', async () => {
    const dir = folder(REPORT);
    const out = await runJson<{
      action: string;
      files: { path: string; size_bytes: number; encoding: string }[];
      total_bytes: number;
      skipped: string[];
      warnings: unknown[];
    }>(box, ['publish', dir, '--dry-run']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json.action).toBe('dry_run');
    expect(out.json.files.map((f) => [f.path, f.encoding])).toEqual([
      ['css/site.css', 'text'],
      ['data/rows.json', 'text'],
      ['img/bg.png', 'base64'],
      ['img/chart.png', 'base64'],
      ['js/app.js', 'text'],
      ['pages/notes.html', 'text'],
    ]);
    expect(out.json.skipped).toEqual(['.DS_Store', '.git/']);
    expect(out.json.warnings).toEqual([]);
    const sizes = Object.entries(REPORT)
      .filter(([file]) => !file.startsWith('.'))
      .reduce((sum, [, content]) => sum + Buffer.byteLength(content), 0);
    expect(out.json.total_bytes).toBe(sizes);
    const human = await run(box, ['publish', dir, '--dry-run', '--human']);
    expect(human.stdout).toMatch(/^Would upload .*index\.html \(\d[\d,]* B\) with 6 file\(s\)/);
    expect(human.stdout).toContain('Nothing was sent (--dry-run).');
    const listed = await runJson<DropList>(box, ['list']);
    expect(listed.json.data).toEqual([]);
  });

  it('publishes the folder in one command; it renders in Chromium with every asset; one changed file is one new body', async () => {
    const dir = folder(REPORT);
    const out = await runJson<{ action: string; drop: Drop; warnings: unknown[] }>(box, ['publish', dir]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json).toMatchObject({ action: 'created', warnings: [], drop: { title: 'Folder report' } });
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(out.json.drop.url);
    const frame = await (await page.waitForSelector('#drop-frame')).contentFrame();
    if (frame === null) throw new Error('no drop frame');
    await expect.poll(() => frame.locator('#status').textContent(), { timeout: 10_000 }).toBe('loaded 4 rows');
    expect(await frame.evaluate('document.querySelector("#chart").naturalWidth')).toBe(48);
    expect(await frame.evaluate('getComputedStyle(document.querySelector("#heading")).color')).toBe('rgb(10, 120, 60)');
    expect(failed).toEqual([]);
    await Promise.all([frame.waitForURL(/\/pages\/notes\.html$/), frame.locator('a').click()]);
    expect(await frame.evaluate('getComputedStyle(document.querySelector("p")).color')).toBe('rgb(0, 0, 0)');
    await page.close();

    // A new version with one file changed: the others keep their content (and so their stored bodies).
    fs.writeFileSync(path.join(dir, 'data', 'rows.json'), '[1,2,3,4,5]');
    const updated = await runJson<{ drop: Drop }>(box, ['update', out.json.drop.slug, dir]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.json.drop.latest_version).toBe(2);
    const [v1, v2] = await Promise.all(
      [1, 2].map(async (n) => (await runJson<Version>(box, ['show', out.json.drop.slug, '--version', String(n)])).json),
    );
    const changed = (v2?.files ?? []).filter((f, i) => f.sha256 !== v1?.files?.[i]?.sha256).map((f) => f.path);
    expect(changed).toEqual(['data/rows.json']);
  });

  it('warns about references that will not resolve, and refuses a folder without index.html or with bad names', async () => {
    const dir = folder({
      'index.html':
        '<!doctype html><html><body><img src="/img/a.png"><img src="../up.png"><img src="img/none.png"></body></html>',
      'img/a.png': solidPng(2, 2, [0, 0, 0]),
    });
    const out = await runJson<{ warnings: { code: string }[] }>(box, ['publish', dir, '--dry-run']);
    expect(out.json.warnings.map((w) => w.code)).toEqual(['absolute_reference', 'outside_reference', 'missing_file']);
    expect(out.stderr).toContain('/img/a.png in index.html');
    const empty = folder({ 'readme.txt': 'no entry here' });
    const missing = await run(box, ['publish', empty]);
    expect(missing.code).toBe(2);
    expectOneLine(missing.stderr, /has no index\.html.*\[no_index\]/);
    const spaced = folder({ 'index.html': INDEX, 'my chart.png': 'x' });
    const bad = await run(box, ['publish', spaced]);
    expect(bad.code).toBe(2);
    expectOneLine(bad.stderr, /my chart\.png.*\[invalid_file_path\]/);
  });
});
