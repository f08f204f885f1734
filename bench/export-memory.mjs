#!/usr/bin/env node
/**
 * `npm run bench:export`: the exporter's peak memory (docs/decisions/0039-export-and-import.md). Two accounts are
 * seeded through the operator's import (a synthetic archive: every version a distinct document), a small one and a
 * large one; for each, the built service is started on its own data directory, its peak resident memory is reset
 * (`/proc/<pid>/clear_refs`), `GET /api/export` is read to the end, and the peak is read back (`VmHWM`). A constant-
 * memory exporter grows by about as much on the large account as on the small one. See bench/README.md ("Export").
 */
import { execFile } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import yazl from 'yazl';
import {
  cleanup,
  freePort,
  installCleanupHandlers,
  intEnv,
  registerTempDir,
  sleep,
  spawnManaged,
  stopManaged,
  waitForHttp,
} from './lib.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'packages', 'server', 'dist');
const run = promisify(execFile);

const LARGE = { drops: intEnv('BENCH_EXPORT_DROPS', 100, 1), versions: intEnv('BENCH_EXPORT_VERSIONS', 50, 1) };
const SMALL = { drops: 5, versions: 5 };
const HTML_BYTES = intEnv('BENCH_EXPORT_HTML_BYTES', 20_000, 200);
const WORDS = 'alpha beta gamma delta report chart quarter revenue figure table launch review metric'.split(' ');

/** A distinct document of about HTML_BYTES: words drawn from a small vocabulary, so it compresses as prose does. */
function documentOf(drop, version) {
  let seed = drop * 7919 + version * 104_729;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const words = [];
  let size = 0;
  while (size < HTML_BYTES) {
    const word = WORDS[Math.floor(random() * WORDS.length)] ?? 'x';
    words.push(word);
    size += word.length + 1;
  }
  return `<!doctype html><html><head><title>Drop ${drop} v${version}</title></head><body><p>${words.join(' ')}</p></body></html>`;
}

/** A synthetic export of `drops` drops of `versions` versions, in the format of docs/api.md ("Export and import"). */
async function writeArchive(file, { drops, versions }) {
  const zip = new yazl.ZipFile();
  const slugs = Array.from({ length: drops }, (_, i) => `bench${String(i).padStart(5, '0')}`);
  const json = (value) => Buffer.from(JSON.stringify(value));
  zip.addBuffer(
    json({
      format: 'htmldrop-export',
      format_version: 1,
      exported_at: Date.now(),
      user_id: `u_bench${drops}x${versions}`,
      drops: slugs.map((slug) => ({ slug, title: slug, latest_version: versions })),
    }),
    'manifest.json',
  );
  const written = pipeline(zip.outputStream, createWriteStream(file));
  slugs.forEach((slug, d) => {
    const settings = { comments: 'signed_in', network: 'open', visibility: 'public', allow: [], expires_at: null };
    zip.addBuffer(
      json({
        slug,
        title: slug,
        description: null,
        metadata: {},
        created_at: 1,
        updated_at: 1,
        latest_version: versions,
        settings: { ...settings, passcode_hash: null },
      }),
      `drops/${slug}/drop.json`,
    );
    const docs = Array.from({ length: versions }, (_, v) => Buffer.from(documentOf(d, v + 1)));
    zip.addBuffer(
      json(
        docs.map((doc, v) => ({ version: v + 1, created_at: v + 1, size_bytes: doc.length, context: null, files: [] })),
      ),
      `drops/${slug}/versions.json`,
    );
    for (const [v, doc] of docs.entries()) zip.addBuffer(doc, `drops/${slug}/v/${v + 1}/index.html`);
  });
  zip.end();
  await written;
}

/** Resident memory figures of a process from /proc, in MB: now (VmRSS) and the peak since the last reset (VmHWM). */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) / 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** Seeds an account of `shape` in a new data directory, then measures one export of it. */
async function measure(name, shape) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-export-'));
  registerTempDir(dir);
  const env = { ...process.env, HTMLDROP_DATA_DIR: dir, HTMLDROP_LOG_LEVEL: 'warn' };
  const archive = path.join(dir, 'seed.zip');
  await writeArchive(archive, shape);
  const seeded = Date.now();
  await run(process.execPath, [path.join(DIST, 'cli.js'), 'import', '--user', 'bench', archive], {
    env,
    maxBuffer: 64 * 1_048_576,
  });
  const seedSeconds = (Date.now() - seeded) / 1000;
  const { stdout: token } = await run(
    process.execPath,
    [path.join(DIST, 'cli.js'), 'token', 'create', '--user', 'bench'],
    {
      env,
    },
  );
  const port = await freePort();
  const server = spawnManaged(`service (${name})`, process.execPath, [path.join(DIST, 'main.js')], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`, server);
  // A warm-up export (loads yazl, compiles the paths), then settle, then the measured one.
  await (await fetch(`${base}/api/export`, { headers: { authorization: `Bearer ${token.trim()}` } })).arrayBuffer();
  global.gc?.();
  await sleep(500);
  const pid = server.child.pid;
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  const before = memoryOf(pid);
  let sampledPeak = before.rss;
  const sampler = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, memoryOf(pid).rss);
  }, 20);
  const started = Date.now();
  const response = await fetch(`${base}/api/export`, { headers: { authorization: `Bearer ${token.trim()}` } });
  let bytes = 0;
  for await (const chunk of response.body) bytes += chunk.length;
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const after = memoryOf(pid);
  await stopManaged(server);
  const peak = Math.max(after.peak, sampledPeak);
  return { name, ...shape, bytes, seconds, seedSeconds, before: before.rss, peak, growth: peak - before.rss };
}

installCleanupHandlers();
try {
  const rows = [];
  for (const [name, shape] of [
    ['small', SMALL],
    ['large', LARGE],
  ]) {
    console.error(`seeding and exporting the ${name} account (${shape.drops} drops x ${shape.versions} versions)...`);
    rows.push(await measure(name, shape));
  }
  const mb = (n) => n.toFixed(1);
  console.log('account | drops x versions | archive MB | export s | RSS before MB | peak MB | growth MB');
  for (const r of rows) {
    console.log(
      `${r.name} | ${r.drops} x ${r.versions} | ${mb(r.bytes / 1_048_576)} | ${r.seconds.toFixed(1)} | ${mb(r.before)} | ${mb(r.peak)} | ${mb(r.growth)}`,
    );
  }
  const [small, large] = rows;
  console.log(
    `growth, large over small: ${(large.growth - small.growth).toFixed(1)} MB more for ${large.drops * large.versions - small.drops * small.versions} more versions (${mb(large.bytes / 1_048_576)} MB of archive)`,
  );
} finally {
  await cleanup();
}
