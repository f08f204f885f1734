/**
 * `npm run bench:markdown`: what readers of pathological documents' readable copies (docs/api.md, "Readable copy
 * (Markdown)"; decision 0031) cost everyone else. The built service gets one small drop and `BENCH_DOCS` 2 MiB
 * documents that the converter cannot finish in time (deeply nested `<div>x`, each distinct), then:
 *
 * 1. quiet: a probe requests the small drop's viewer page (`GET /p/<slug>`, Fastify and the database: a normal
 *    request) one at a time, every `BENCH_PROBE_MS`, for `BENCH_QUIET` seconds;
 * 2. loaded: the same probe while `BENCH_READERS` readers each loop over `GET /p/<doc>.md` of the documents for
 *    `BENCH_DURATION` seconds. A 503 is honoured (the reader waits its `Retry-After`) unless
 *    `BENCH_IGNORE_RETRY_AFTER=1`, which is the hostile client.
 *
 * Reported: the probe's p50, p99 and maximum in each phase, the readers' answers by status and their latency, and
 * the service's VmRSS (sampled every 100 ms: at rest, peak, at the end). `BENCH_ROOT` runs another checkout's build
 * (its `packages/server/dist`) with this script, for before/after comparisons. Results go to
 * `bench/results/markdown-<timestamp>.json`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  cleanup,
  freePort,
  installCleanupHandlers,
  intEnv,
  quantile,
  registerTempDir,
  sleep,
  spawnManaged,
  waitForHttp,
} from './lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(process.env.BENCH_ROOT ?? path.join(HERE, '..'));
const DIST = path.join(ROOT, 'packages/server/dist');
const DOCS = intEnv('BENCH_DOCS', 8, 1);
const READERS = intEnv('BENCH_READERS', 24, 1);
const DURATION_S = intEnv('BENCH_DURATION', 30, 1);
const QUIET_S = intEnv('BENCH_QUIET', 5, 1);
const PROBE_MS = intEnv('BENCH_PROBE_MS', 20, 1);
const IGNORE_RETRY_AFTER = process.env.BENCH_IGNORE_RETRY_AFTER === '1';

/** About 2 MiB of nested `<div>x`: the DOM builder's time grows with the square of the depth. */
const pathological = (n) => `${'<div>x'.repeat(349_000)}<p>document ${n}</p>`;

/**
 * One GET on a keep-alive agent, the body read and dropped.
 * @param {string} url
 * @param {http.Agent} agent
 * @returns {Promise<{ status: number, retryAfter: number, ms: number }>}
 */
function get(url, agent) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, timeout: 120_000 }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: Number(res.headers['retry-after'] ?? 0),
          ms: performance.now() - started,
        }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: GET ${url}`)));
    req.on('error', reject);
  });
}

/** @param {number} pid */
function rssMb(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m);
    return line === null ? 0 : Number(line[1]) / 1024;
  } catch {
    return 0;
  }
}

/** Requests `url` one at a time every `PROBE_MS` until `until` (ms since the epoch); the latencies. */
async function probe(url, until) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times = [];
  while (Date.now() < until) {
    const started = performance.now();
    const { status, ms } = await get(url, agent);
    if (status !== 200) throw new Error(`probe: HTTP ${status}`);
    times.push(ms);
    await sleep(Math.max(0, PROBE_MS - (performance.now() - started)));
  }
  agent.destroy();
  return times;
}

/** `READERS` loops over the documents' readable copies until `until`; answers by status and their latencies. */
async function readers(base, slugs, until) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: READERS });
  const statuses = {};
  const times = [];
  const reader = async (r) => {
    for (let i = r; Date.now() < until; i++) {
      const { status, retryAfter, ms } = await get(`${base}/p/${slugs[i % slugs.length]}.md`, agent);
      statuses[status] = (statuses[status] ?? 0) + 1;
      times.push(ms);
      if (status === 503 && !IGNORE_RETRY_AFTER) await sleep(Math.min(retryAfter * 1000, until - Date.now()));
    }
  };
  await Promise.all(Array.from({ length: READERS }, (_, r) => reader(r)));
  agent.destroy();
  return { statuses, times };
}

const summary = (times) => ({
  count: times.length,
  p50Ms: quantile(times, 0.5),
  p99Ms: quantile(times, 0.99),
  maxMs: Math.max(...times),
});

/** Starts the service of `DIST` on a fresh SQLite directory with a token, one small drop and the documents. */
async function startService() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-markdown-'));
  registerTempDir(dataDir);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { PATH: process.env.PATH, HTMLDROP_DATA_DIR: dataDir };
  const service = spawnManaged('htmldrop', process.execPath, [path.join(DIST, 'main.js')], {
    env: { ...env, PORT: String(port), HTMLDROP_BASE_URL: base, HTMLDROP_LOG_LEVEL: 'error' },
  });
  await waitForHttp(`${base}/healthz`, service);
  const token = execFileSync(process.execPath, [path.join(DIST, 'cli.js'), 'token', 'create', '--user', 'bench'], {
    env,
  })
    .toString()
    .trim();
  const create = async (title, html) => {
    const response = await fetch(`${base}/api/drops`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title, html }),
    });
    if (response.status !== 201) throw new Error(`create: HTTP ${response.status} ${await response.text()}`);
    return (await response.json()).slug;
  };
  const small = await create('small', '<!doctype html><title>small</title><h1>Small</h1><p>A normal drop.</p>');
  const slugs = [];
  for (let n = 0; n < DOCS; n++) slugs.push(await create(`pathological ${n}`, pathological(n)));
  return { service, base, small, slugs };
}

installCleanupHandlers();
try {
  const { service, base, small, slugs } = await startService();
  const pid = service.child.pid ?? 0;
  const viewer = `${base}/p/${small}`;
  await probe(viewer, Date.now() + 1000); // warm-up
  const rest = rssMb(pid);
  const quiet = await probe(viewer, Date.now() + QUIET_S * 1000);
  let peak = rest;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 100);
  const until = Date.now() + DURATION_S * 1000;
  const [loaded, reading] = await Promise.all([probe(viewer, until), readers(base, slugs, until)]);
  clearInterval(sampler);
  const result = {
    root: ROOT,
    node: process.version,
    docs: DOCS,
    readers: READERS,
    durationS: DURATION_S,
    ignoreRetryAfter: IGNORE_RETRY_AFTER,
    quiet: summary(quiet),
    loaded: summary(loaded),
    readersAnswers: reading.statuses,
    readersLatency: summary(reading.times),
    rssMb: { rest, peak, end: rssMb(pid) },
  };
  const fixed = (ms) => `${ms.toFixed(1)} ms`;
  console.log(`service: ${ROOT}; ${DOCS} documents of 2 MiB, ${READERS} readers for ${DURATION_S} s`);
  console.log(
    `probe GET /p/<slug>, quiet:  p50 ${fixed(result.quiet.p50Ms)}, p99 ${fixed(result.quiet.p99Ms)}, max ${fixed(result.quiet.maxMs)} (${result.quiet.count})`,
  );
  console.log(
    `probe GET /p/<slug>, loaded: p50 ${fixed(result.loaded.p50Ms)}, p99 ${fixed(result.loaded.p99Ms)}, max ${fixed(result.loaded.maxMs)} (${result.loaded.count})`,
  );
  console.log(
    `readers: ${JSON.stringify(reading.statuses)}; p50 ${fixed(result.readersLatency.p50Ms)}, p99 ${fixed(result.readersLatency.p99Ms)}, max ${fixed(result.readersLatency.maxMs)}`,
  );
  console.log(`RSS: rest ${rest.toFixed(0)} MB, peak ${peak.toFixed(0)} MB, end ${result.rssMb.end.toFixed(0)} MB`);
  const dir = path.join(HERE, 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `markdown-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written: ${path.relative(process.cwd(), file)}`);
} finally {
  await cleanup();
}
