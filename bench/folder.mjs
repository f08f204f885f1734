#!/usr/bin/env node
/**
 * `npm run bench:folder`: a full-size folder through the CLI (docs/api.md, "Many files in one drop"). It builds a
 * folder of BENCH_FOLDER_FILES files (200) of about BENCH_FOLDER_MIB MiB (20) in all, like a report's build output:
 * PNG-like images that do not compress, stylesheets, JSON the page fetches, ES modules the page imports, and an
 * index.html that uses every one of them. Then, on the built service (temporary SQLite):
 *
 * 1. `htmldrop publish <dir>`, timed from the CLI's start to its answer;
 * 2. the drop's page in headless Chromium (Debian's, BENCH_CHROMIUM, default /usr/bin/chromium): every asset must
 *    answer 200 from the drop's own origin, and the page's script counts what it loaded (all images decoded, every
 *    module imported, every JSON file fetched);
 * 3. one JSON file changed and `htmldrop update <slug> <dir>`: the database must gain exactly one body, of that
 *    file's size.
 *
 * Exits 1 when any of those fails. Bodies are counted in the `bodies` table (docs/decisions/0010 and 0040 in
 * docs/decisions/).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { HOST, pngBytes, ROOT, SERVER_MAIN } from './file-drops.mjs';
import {
  freePort,
  installCleanupHandlers,
  intEnv,
  registerTempDir,
  serviceEnv,
  spawnManaged,
  stopManaged,
  waitForHttp,
} from './lib.mjs';
import { rgbPng } from './png.mjs';

const CHROMIUM = process.env.BENCH_CHROMIUM ?? '/usr/bin/chromium';
const CLIENT_CLI = path.join(ROOT, 'packages', 'client', 'dist', 'cli.js');
const SERVER_CLI = path.join(ROOT, 'packages', 'server', 'dist', 'cli.js');
const config = { files: intEnv('BENCH_FOLDER_FILES', 200, 10), mib: intEnv('BENCH_FOLDER_MIB', 20, 1) };
const run = promisify(execFile);

/**
 * A real PNG (RFC 2083) of about `size` bytes: RGB rows of noise (distinct per `index`), which deflate cannot shrink,
 * as a photograph's or a chart's compressed pixels cannot.
 * @param {number} index
 * @param {number} size
 */
function noisePng(index, size) {
  const width = 256;
  const height = Math.max(1, Math.floor(size / (width * 3 + 1)));
  const noise = pngBytes(index, height * (width * 3 + 1));
  for (let row = 0; row < height; row++) noise[row * (width * 3 + 1)] = 0; // filter type 0 for each row
  return rgbPng(width, height, noise);
}

/**
 * Writes the folder: three quarters images (the bytes), the rest split between stylesheets, JSON and modules, and
 * an index.html whose script reports what loaded in `#status`. Returns the paths and the total size.
 * @param {string} dir
 */
function buildFolder(dir) {
  const others = config.files - 1;
  const images = Math.round(others * 0.75);
  const styles = Math.floor((others - images) / 3);
  const data = Math.floor((others - images) / 3);
  const modules = others - images - styles - data;
  // 98% of the size in images: the rest of the files and the HTML fit under a version's limit of the same size.
  const imageBytes = Math.floor((config.mib * 1024 * 1024 * 0.98) / images);
  /** @type {Map<string, Buffer | string>} */
  const files = new Map();
  for (let i = 0; i < images; i++) files.set(`img/chart-${i}.png`, noisePng(i, imageBytes));
  for (let i = 0; i < styles; i++) files.set(`css/part-${i}.css`, `.c${i}{margin:${i % 7}px;color:#123}\n`.repeat(40));
  for (let i = 0; i < data; i++) {
    files.set(`data/rows-${i}.json`, JSON.stringify(Array.from({ length: 200 }, (_, n) => ({ n, v: n * i }))));
  }
  for (let i = 0; i < modules; i++) files.set(`js/mod-${i}.js`, `export const part${i} = ${i};\n`);
  const list = (prefix) => JSON.stringify([...files.keys()].filter((name) => name.startsWith(prefix)));
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Folder bench</title>
${[...files.keys()]
  .filter((name) => name.endsWith('.css'))
  .map((name) => `<link rel="stylesheet" href="${name}">`)
  .join('\n')}
</head><body><h1>Folder bench</h1><p id="status">loading</p>
${[...files.keys()]
  .filter((name) => name.endsWith('.png'))
  .map((name) => `<img src="${name}" alt="" width="8" height="8">`)
  .join('\n')}
<script type="module">
const images = await Promise.all([...document.images].map((img) => img.decode().then(() => 1, () => 0)));
const modules = await Promise.all(${list('js/')}.map((name) => import('./' + name).then(() => 1, () => 0)));
const rows = await Promise.all(${list('data/')}.map((name) => fetch(name).then((r) => r.json()).then(() => 1, () => 0)));
const sum = (list) => list.reduce((a, b) => a + b, 0);
document.querySelector('#status').textContent = 'loaded ' + sum(images) + ' ' + sum(modules) + ' ' + sum(rows);
</script></body></html>`;
  files.set('index.html', html);
  let total = 0;
  for (const [name, content] of files) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
    total += Buffer.byteLength(content);
  }
  return { files, total, expected: `loaded ${images} ${modules} ${data}` };
}

/** The `bodies` table's row count and stored bytes. */
async function bodies(/** @type {string} */ dataDir) {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path.join(dataDir, 'htmldrop.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return /** @type {{ count: number, bytes: number }} */ (
      db.prepare('SELECT count(*) AS count, coalesce(sum(length(data)), 0) AS bytes FROM bodies').get()
    );
  } finally {
    db.close();
  }
}

/** Runs the CLI with the service's address and the token; returns its JSON and the wall time. */
async function cli(/** @type {Record<string, string>} */ env, /** @type {string[]} */ args) {
  const started = performance.now();
  const { stdout } = await run(process.execPath, [CLIENT_CLI, ...args], { env, maxBuffer: 64 * 1024 * 1024 });
  return { json: JSON.parse(stdout), ms: performance.now() - started };
}

async function main() {
  installCleanupHandlers();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-folder-'));
  registerTempDir(tmp);
  const folder = path.join(tmp, 'report');
  const built = buildFolder(folder);
  console.log(
    `bench:folder  node ${process.version}; ${built.files.size} files, ${(built.total / 1024 / 1024).toFixed(1)} MiB`,
  );
  const dataDir = path.join(tmp, 'data');
  mkdirSync(dataDir);
  const port = await freePort();
  const env = serviceEnv({ host: HOST, port, dataDir, contentOrigin: true });
  const managed = spawnManaged('htmldrop', process.execPath, [SERVER_MAIN], { cwd: ROOT, env });
  await waitForHttp(`${env.HTMLDROP_BASE_URL}/llms.txt`, managed);
  const token = (
    await run(process.execPath, [SERVER_CLI, 'token', 'create', '--user', 'bench'], { cwd: ROOT, env })
  ).stdout
    .trim()
    .split('\n')
    .pop()
    ?.trim();
  /** @type {Record<string, string>} */
  const clientEnv = { PATH: process.env.PATH ?? '', HOME: tmp, HTMLDROP_SERVER: env.HTMLDROP_BASE_URL ?? '' };
  clientEnv.HTMLDROP_TOKEN = token ?? '';

  const failures = [];
  const before = await bodies(dataDir);
  const published = await cli(clientEnv, ['publish', folder]);
  const drop = published.json.drop;
  const afterPublish = await bodies(dataDir);
  console.log(
    `publish: ${Math.round(published.ms)} ms from the CLI's start to its answer; ` +
      `${afterPublish.count - before.count} bodies, ${((afterPublish.bytes - before.bytes) / 1024 / 1024).toFixed(1)} MiB stored`,
  );

  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    const page = await browser.newPage();
    const contentHost = new URL(drop.content_url).host;
    /** @type {string[]} */
    const refused = [];
    let fromDrop = 0;
    page.on('response', (response) => {
      const url = new URL(response.url());
      if (url.host === contentHost) fromDrop++;
      if (response.status() >= 400) refused.push(`${response.status()} ${response.url()}`);
    });
    const started = performance.now();
    await page.goto(drop.url);
    const frame = await (await page.waitForSelector('#drop-frame')).contentFrame();
    if (frame === null) throw new Error('no drop frame');
    await frame.waitForFunction(() => document.querySelector('#status')?.textContent?.startsWith('loaded'), undefined, {
      timeout: 60_000,
    });
    const status = await frame.locator('#status').textContent();
    const ms = performance.now() - started;
    console.log(`render: ${Math.round(ms)} ms to "${status}"; ${fromDrop} answers from the drop's origin`);
    if (status !== built.expected) failures.push(`the page loaded "${status}", expected "${built.expected}"`);
    if (refused.length > 0) failures.push(`refused: ${refused.slice(0, 5).join(', ')}`);
    if (fromDrop < built.files.size)
      failures.push(`${fromDrop} answers from the drop's origin, under ${built.files.size}`);
  } finally {
    await browser.close();
  }

  const changed = path.join(folder, 'data', 'rows-0.json');
  const content = JSON.stringify({ changed: new Date().toISOString() });
  writeFileSync(changed, content);
  const updated = await cli(clientEnv, ['update', drop.slug, folder]);
  const afterUpdate = await bodies(dataDir);
  const added = { count: afterUpdate.count - afterPublish.count, bytes: afterUpdate.bytes - afterPublish.bytes };
  console.log(
    `update with one file changed (${Buffer.byteLength(content)} B): ${Math.round(updated.ms)} ms; ` +
      `${added.count} new body of ${added.bytes} B stored; version ${updated.json.drop.latest_version}`,
  );
  // Small bodies are stored as they are (compression does not pay for them), so the one new body is that file.
  if (added.count !== 1 || added.bytes !== Buffer.byteLength(content)) {
    failures.push(
      `the update stored ${added.count} bodies of ${added.bytes} B, not one of ${Buffer.byteLength(content)}`,
    );
  }
  await stopManaged(managed);
  if (failures.length > 0) {
    for (const failure of failures) console.log(`FAIL: ${failure}`);
    process.exitCode = 1;
  } else console.log('PASS: published in one command, rendered with every asset, one changed file stored one body');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
