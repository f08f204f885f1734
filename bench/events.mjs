#!/usr/bin/env node
/**
 * `npm run bench:events`: what the live pages' events streams cost (docs/api.md, "Live pages").
 *
 * 1. Memory: the service's resident set with no stream open, then with BENCH_STREAMS (10,000) streams open on one
 *    instance: the difference, in all and per stream. The streams come from 500 loopback addresses (127.1.x.y), 20 each,
 *    the per-address cap.
 * 2. Latency: BENCH_FOLLOWERS (1,000) of those streams follow one drop; BENCH_PUTS PUTs are made one after another, and
 *    for each the time from sending the PUT to the moment the last of the followers received its `version` event.
 *    Target: p99 < 1 s.
 *
 * The service runs built (SQLite, a temporary data directory, log level warn), the streams are read by this process.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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
  stopManaged,
  waitForHttp,
} from './lib.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const HOST = '127.0.0.1';
const config = {
  streams: intEnv('BENCH_STREAMS', 10_000, 1),
  followers: intEnv('BENCH_FOLLOWERS', 1000, 1),
  puts: intEnv('BENCH_PUTS', 20, 1),
};
const PER_ADDRESS = 20;
const TARGET_P99_MS = 1000;

const rssMb = (/** @type {number} */ pid) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

/** The n-th loopback source address, 20 streams each. */
const sourceOf = (/** @type {number} */ n) => {
  const group = Math.floor(n / PER_ADDRESS);
  return `127.1.${Math.floor(group / 250)}.${(group % 250) + 1}`;
};

/**
 * Opens one stream; resolves once its head arrived. `onVersion` is called with performance.now() per version event.
 * @param {string} url @param {string} localAddress @param {(at: number, version: number) => void} onVersion
 */
function openStream(url, localAddress, onVersion) {
  return new Promise((resolve, reject) => {
    const request = http.get(
      url,
      { agent: false, localAddress, headers: { accept: 'text/event-stream' } },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`stream answered ${response.statusCode}`));
          response.resume();
          return;
        }
        let buffer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          buffer += chunk;
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const match = /^event: version\ndata: \{"version":(\d+)\}/m.exec(block);
            if (match !== null) onVersion(performance.now(), Number(match[1]));
            end = buffer.indexOf('\n\n');
          }
        });
        resolve(request);
      },
    );
    request.on('error', reject);
  });
}

async function main() {
  installCleanupHandlers();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-events-'));
  registerTempDir(dataDir);
  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    HOST,
    HTMLDROP_DATA_DIR: dataDir,
    HTMLDROP_LOG_LEVEL: 'warn',
    HTMLDROP_MAX_WRITES_PER_MINUTE: '1000000',
    HTMLDROP_MAX_WRITES_PER_DAY: '1000000',
    HTMLDROP_MAX_EVENT_STREAMS: String(config.streams),
  };
  const cli = path.join(ROOT, 'packages/server/dist/cli.js');
  const token = execFileSync(process.execPath, [cli, 'token', 'create', '--user', 'bench'], { env }).toString().trim();
  const service = spawnManaged('htmldrop', process.execPath, [path.join(ROOT, 'packages/server/dist/main.js')], {
    env,
  });
  const base = `http://${HOST}:${port}`;
  await waitForHttp(`${base}/healthz`, service, 60_000);
  const pid = /** @type {number} */ (service.child.pid);
  const api = (/** @type {string} */ method, /** @type {string} */ p, /** @type {unknown} */ body) =>
    fetch(`${base}${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json());
  const page = (/** @type {string} */ t) =>
    `<!doctype html><html><head><title>${t}</title></head><body><p>${t}</p></body></html>`;
  const followed = /** @type {{ slug: string }} */ (
    await api('POST', '/api/drops', { title: 'followed', html: page('v1') })
  );
  const other = /** @type {{ slug: string }} */ (await api('POST', '/api/drops', { title: 'other', html: page('v1') }));
  // Warm the paths once, then let the heap settle.
  await fetch(`${base}/p/${followed.slug}`).then((r) => r.text());
  await sleep(2000);
  const before = rssMb(pid);

  /** @type {Map<number, number[]>} arrival times per version, followers only */
  const arrivals = new Map();
  const onFollowerVersion = (/** @type {number} */ at, /** @type {number} */ version) => {
    const list = arrivals.get(version) ?? [];
    list.push(at);
    arrivals.set(version, list);
  };
  const opened = [];
  const openStarted = performance.now();
  for (let n = 0; n < config.streams; n += 1) {
    const follower = n < config.followers;
    const slug = follower ? followed.slug : other.slug;
    opened.push(openStream(`${base}/p/${slug}/events`, sourceOf(n), follower ? onFollowerVersion : () => undefined));
    // A few hundred at a time: the service's accept queue is not the thing measured.
    if (opened.length % 200 === 0) await Promise.all(opened.slice(-200));
  }
  const requests = await Promise.all(opened);
  const openSeconds = (performance.now() - openStarted) / 1000;
  await sleep(3000);
  const after = rssMb(pid);

  /** @type {number[]} */
  const lastArrival = [];
  /** @type {number[]} */
  const everyArrival = [];
  for (let i = 0; i < config.puts; i += 1) {
    const version = i + 2;
    const sent = performance.now();
    await api('PUT', `/api/drops/${followed.slug}`, { html: page(`v${version}`) });
    const deadline = performance.now() + 10_000;
    while ((arrivals.get(version)?.length ?? 0) < config.followers && performance.now() < deadline) await sleep(5);
    const got = arrivals.get(version) ?? [];
    if (got.length < config.followers)
      throw new Error(`version ${version}: ${got.length} of ${config.followers} followers`);
    lastArrival.push(Math.max(...got) - sent);
    everyArrival.push(...got.map((t) => t - sent));
    await sleep(100);
  }
  for (const request of requests) request.destroy();
  await stopManaged(service);

  const result = {
    at: new Date().toISOString(),
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim(),
    loadavg: os.loadavg(),
    streams: config.streams,
    openSeconds: Number(openSeconds.toFixed(1)),
    rssBeforeMb: Number(before.toFixed(1)),
    rssWithStreamsMb: Number(after.toFixed(1)),
    rssPerStreamKb: Number((((after - before) * 1024) / config.streams).toFixed(2)),
    followers: config.followers,
    puts: config.puts,
    putToLastFollowerMs: {
      p50: Number(quantile(lastArrival, 0.5).toFixed(1)),
      p99: Number(quantile(lastArrival, 0.99).toFixed(1)),
      max: Number(Math.max(...lastArrival).toFixed(1)),
    },
    putToEveryFollowerMs: {
      p50: Number(quantile(everyArrival, 0.5).toFixed(1)),
      p99: Number(quantile(everyArrival, 0.99).toFixed(1)),
    },
    targetP99Ms: TARGET_P99_MS,
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(
    `${config.streams} streams: RSS ${result.rssBeforeMb} -> ${result.rssWithStreamsMb} MB (${result.rssPerStreamKb} KB per stream); ` +
      `PUT to the last of ${config.followers} followers: p50 ${result.putToLastFollowerMs.p50} ms, p99 ${result.putToLastFollowerMs.p99} ms ` +
      `(target p99 < ${TARGET_P99_MS} ms: ${result.putToLastFollowerMs.p99 < TARGET_P99_MS ? 'met' : 'NOT met'})`,
  );
  const resultsDir = path.join(BENCH_DIR, 'results');
  try {
    writeFileSync(path.join(resultsDir, `events-${Date.now()}.json`), `${JSON.stringify(result, null, 2)}\n`);
  } catch {
    // bench/results/ is optional (git-ignored); the figures are printed above.
  }
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(cleanup);
