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
/** The heap the service gets for a last export of the large account (--max-old-space-size, MB); 0: none. */
const CAPPED_HEAP_MB = intEnv('BENCH_EXPORT_HEAP_MB', 64, 0);
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
  return { rss: field('VmRSS'), peak: field('VmHWM'), anon: field('RssAnon') };
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
  /** Starts the service on the seeded directory (with `nodeFlags`), runs `work` against it, stops it. */
  const withService = async (nodeFlags, work) => {
    const port = await freePort();
    const server = spawnManaged(`service (${name})`, process.execPath, [...nodeFlags, path.join(DIST, 'main.js')], {
      env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    });
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/healthz`, server);
    try {
      return await work(base, server.child.pid);
    } finally {
      await stopManaged(server);
    }
  };
  /** One export read to the end, with the peak resident memory while it ran (reset first). */
  const exportOnce = async (base, pid) => {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const before = memoryOf(pid);
    let sampledPeak = before.rss;
    let anonPeak = before.anon;
    const sampler = setInterval(() => {
      const now = memoryOf(pid);
      sampledPeak = Math.max(sampledPeak, now.rss);
      anonPeak = Math.max(anonPeak, now.anon);
    }, 20);
    const started = Date.now();
    const response = await fetch(`${base}/api/export`, { headers: { authorization: `Bearer ${token.trim()}` } });
    let bytes = 0;
    for await (const chunk of response.body) bytes += chunk.length;
    const seconds = (Date.now() - started) / 1000;
    clearInterval(sampler);
    const peak = Math.max(memoryOf(pid).peak, sampledPeak);
    return { status: response.status, bytes, seconds, before: before.rss, peak, growth: peak - before.rss, anonPeak };
  };
  // The first export of a fresh process (it loads yazl), then a second one.
  const [cold, warm] = await withService([], async (base, pid) => {
    const first = await exportOnce(base, pid);
    await sleep(500);
    return [first, await exportOnce(base, pid)];
  });
  // Then, once more, in a service whose heap is capped: an exporter that held the account would run out.
  const capped =
    CAPPED_HEAP_MB === 0
      ? undefined
      : await withService([`--max-old-space-size=${CAPPED_HEAP_MB}`], (base, pid) => exportOnce(base, pid));
  return { name, ...shape, seedSeconds, cold, warm, capped };
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
  console.log(
    'account | drops x versions | export | archive MB | s | RSS before MB | peak MB | growth MB | anonymous peak MB',
  );
  for (const r of rows) {
    for (const [which, e] of [
      ['first', r.cold],
      ['second', r.warm],
      [`heap ${CAPPED_HEAP_MB} MB`, r.capped],
    ]) {
      if (e === undefined) continue;
      console.log(
        `${r.name} | ${r.drops} x ${r.versions} | ${which} | ${mb(e.bytes / 1_048_576)} | ${e.seconds.toFixed(1)} | ${mb(e.before)} | ${mb(e.peak)} | ${mb(e.growth)} | ${mb(e.anonPeak)}`,
      );
    }
  }
  const [small, large] = rows;
  // The manifest's time differs between two exports, so its deflated size may differ by a few bytes.
  const whole = large.capped === undefined || Math.abs(large.capped.bytes - large.cold.bytes) < 64;
  console.log(`the capped service's export of the large account: ${whole ? 'complete' : 'CUT SHORT'}`);
  console.log(
    `peak of the first export, large over small: ${mb(large.cold.peak - small.cold.peak)} MB for ${large.drops * large.versions - small.drops * small.versions} more versions (${mb(large.cold.bytes / 1_048_576)} MB of archive)`,
  );
} finally {
  await cleanup();
}
