#!/usr/bin/env node
/**
 * `npm run bench:write`: the write path and the cost of keeping history. In one run:
 *
 * 1. Creates: `POST /api/drops` of report-like documents of about 100 KB (bench/report-corpus.mjs, every body
 *    distinct) with BENCH_CONCURRENCY requests in flight, against a bare node:http server that parses the same JSON
 *    and inserts it into better-sqlite3 in one transaction (bench/write-baseline.mjs), in alternating rounds. The
 *    figure is htmldrop's creates/s over the baseline's within each round, median over the rounds.
 * 2. Storage: a fresh service gets BENCH_DROPS reports, then BENCH_REPUBLISH of them are published again unchanged
 *    (a PUT with the same HTML). Bytes on disk (the SQLite files after a clean stop; with BENCH_DATABASE_URL also the
 *    PostgreSQL tables) over the bytes of HTML uploaded.
 * 3. On that service: list latency (`GET /api/drops` with two metadata filters, sequential), resident memory right
 *    after the last request and BENCH_SETTLE_SECONDS later (the target is on the second), and cold start (spawn to
 *    the first 200 of /healthz, on the filled data directory).
 *
 * See bench/README.md ("Write path") for the knobs and how to read the output.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  cleanup,
  freePort,
  installCleanupHandlers,
  intEnv,
  interrupted,
  machineBusyTicks,
  mapLimit,
  median,
  onPath,
  quantile,
  registerTempDir,
  runWrk,
  selfAndReapedTicks,
  serviceEnv,
  sleep,
  spawnManaged,
  stopManaged,
  TICKS_PER_SECOND,
  treeTicks,
  waitForHttp,
} from './lib.mjs';
import { reportHtml } from './report-corpus.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const HOST = '127.0.0.1';

const config = {
  rounds: intEnv('BENCH_ROUNDS', 6, 1),
  seconds: intEnv('BENCH_DURATION', 5, 1),
  warmupSeconds: intEnv('BENCH_WARMUP', 1, 0),
  concurrency: intEnv('BENCH_CONCURRENCY', 8, 1),
  htmlBytes: intEnv('BENCH_HTML_BYTES', 100_000, 1000),
  drops: intEnv('BENCH_DROPS', 500, 20),
  republish: intEnv('BENCH_REPUBLISH', 20, 0),
  listRequests: intEnv('BENCH_LIST_REQUESTS', 300, 10),
  listSeconds: intEnv('BENCH_LIST_SECONDS', 5, 1),
  coldStarts: intEnv('BENCH_COLD_STARTS', 3, 1),
  settleSeconds: intEnv('BENCH_SETTLE_SECONDS', 30, 0),
  /** Extra rounds allowed to replace disturbed ones (other processes used the CPU during a run). */
  extraRounds: intEnv('BENCH_EXTRA_ROUNDS', 6, 0),
};
/** Cores other processes may use during a run before its round is set aside (as in bench/raw.mjs). */
const OTHER_LOAD_CORES = 0.2;
const DATABASE_URL = process.env.BENCH_DATABASE_URL?.trim() || undefined;
/** With a Chromium path, every create also asks for its preview's screenshot, as a service configured with one does. */
const CHROMIUM = process.env.BENCH_CHROMIUM?.trim() || undefined;
/**
 * Targets (bench/README.md, "Which figure answers which question"): throughput and CPU relative to the baseline in
 * the same run; storage relative to the HTML uploaded; list latency, memory and start-up absolute, for the 512 MB
 * machines the service runs on.
 */
const TARGET_CREATES = 0.8;
const TARGET_CPU = 1.5;
const TARGET_DISK = 0.35;
const TARGET_LIST_P99_MS = 2;
const TARGET_RSS_MB = 120;
const TARGET_COLD_START_MS = 300;
const TEAMS = ['atlas', 'borealis', 'cobalt', 'delta'];
const KINDS = ['report', 'dashboard'];

// ---------------------------------------------------------------------------------------------------------------------
// Processes

/** Starts the service; resolves once /healthz answers, with the managed child and its base URL. */
async function startService(dataDir, databaseUrl) {
  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const started = performance.now();
  const service = spawnManaged('htmldrop', process.execPath, [path.join(ROOT, 'packages/server/dist/main.js')], {
    env: serviceEnv({ host: HOST, port, dataDir, databaseUrl, chromium: CHROMIUM }),
  });
  // Polled every 5 ms: the start-up is measured to that resolution.
  await waitForHttp(`${base}/healthz`, service, 60_000, 5);
  return { service, base, port, startMs: performance.now() - started };
}

/** A token for a fresh account, minted by the operator command (as an operator would). */
function mintToken(dataDir, databaseUrl, user) {
  return execFileSync(
    process.execPath,
    [path.join(ROOT, 'packages/server/dist/cli.js'), 'token', 'create', '--user', user],
    { env: serviceEnv({ host: HOST, port: 0, dataDir, databaseUrl }) },
  )
    .toString()
    .trim();
}

async function startBaseline(dataDir) {
  const port = await freePort();
  const baseline = spawnManaged('baseline', process.execPath, [
    path.join(BENCH_DIR, 'write-baseline.mjs'),
    dataDir,
    String(port),
  ]);
  const deadline = Date.now() + 30_000;
  while (!baseline.output().includes('listening')) {
    if (Date.now() > deadline) throw new Error(`the baseline did not start:\n${baseline.output()}`);
    await sleep(50);
  }
  return { service: baseline, port };
}

// ---------------------------------------------------------------------------------------------------------------------
// Requests

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One request over the keep-alive agent; resolves with the status and the body as text.
 * @param {{ port: number, method: string, path: string, headers?: Record<string, string>, body?: Buffer }} req
 * @returns {Promise<{ status: number, text: string }>}
 */
function request({ port, method, path: target, headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: HOST,
        port,
        method,
        path: target,
        agent,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-length': body.length }) },
      },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Request bodies for the create runs: 16 reports, each made distinct per request by a counter in its HTML (so no
 * two creates carry the same bytes), as the two JSON halves around that counter.
 */
function createBodies() {
  const marker = '@@N@@';
  const halves = Array.from({ length: 16 }, (_, i) => {
    const html = reportHtml(10_000 + i, config.htmlBytes).replace('<h1>', `<h1 data-n="${marker}">`);
    const json = JSON.stringify({
      title: `Load report ${i}`,
      metadata: { kind: KINDS[i % 2], team: TEAMS[i % 4] },
      html,
    });
    const [before, after] = json.split(marker);
    return [Buffer.from(before ?? ''), Buffer.from(after ?? '')];
  });
  let counter = 0;
  return () => {
    counter += 1;
    const [before, after] = /** @type {[Buffer, Buffer]} */ (halves[counter % halves.length]);
    return Buffer.concat([before, Buffer.from(String(counter)), after]);
  };
}

/**
 * Creates for `seconds` with `config.concurrency` in flight; returns creates/s and the server's CPU per create.
 * @param {{ name: string, port: number, pid: number, headers: Record<string, string> }} target
 * @param {() => Buffer} nextBody
 * @param {number} seconds
 */
async function loadCreates(target, nextBody, seconds) {
  const stopAt = performance.now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  let lastError = '';
  const cpuBefore = treeTicks(target.pid);
  const busyBefore = machineBusyTicks();
  const selfBefore = selfAndReapedTicks();
  const started = performance.now();
  const worker = async () => {
    while (performance.now() < stopAt) {
      const res = await request({
        port: target.port,
        method: 'POST',
        path: '/api/drops',
        headers: { ...target.headers, 'content-type': 'application/json' },
        body: nextBody(),
      });
      if (res.status === 201) done += 1;
      else {
        failed += 1;
        lastError = `${res.status} ${res.text.slice(0, 200)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: config.concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = treeTicks(target.pid);
  const busyAfter = machineBusyTicks();
  const selfAfter = selfAndReapedTicks();
  if (failed > 0) throw new Error(`${target.name}: ${failed} creates failed, last: ${lastError}`);
  const server = cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / TICKS_PER_SECOND;
  const self = selfBefore === null || selfAfter === null ? null : (selfAfter - selfBefore) / TICKS_PER_SECOND;
  const busy = busyBefore === null || busyAfter === null ? null : (busyAfter - busyBefore) / TICKS_PER_SECOND;
  return {
    creates: done,
    perSecond: done / elapsed,
    serverCores: server === null ? null : server / elapsed,
    cpuMsPerCreate: server === null || done === 0 ? null : (server * 1000) / done,
    otherCores: server === null || self === null || busy === null ? null : Math.max(0, busy - server - self) / elapsed,
  };
}

/** Whether a Chromium process runs on the machine (the service's screenshot browser, or what is left of it). */
function chromiumRunning() {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('chrom')) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

/**
 * With a browser (BENCH_CHROMIUM): waits until the machine has been idle (under 0.1 cores besides this script) for
 * 3 s in a row and no Chromium process is left (the service closes its browser 30 s after its last job), at most
 * 240 s, so that the screenshots
 * a run asked for, made once its burst is over (docs/decisions/0038-previews-and-embeds.md), neither run into the
 * next run nor go uncounted, and every run starts as it would without a browser. Returns the CPU seconds used
 * meanwhile: the machine's busy time less this script's, since the browser's processes leave the service's tree
 * as they end (the bare server is idle then).
 */
async function settleMachine() {
  const busyFirst = machineBusyTicks();
  const selfFirst = selfAndReapedTicks();
  if (busyFirst === null || selfFirst === null) return null;
  let busyLast = busyFirst;
  let selfLast = selfFirst;
  let idleSeconds = 0;
  const deadline = performance.now() + 240_000;
  while ((idleSeconds < 3 || chromiumRunning()) && performance.now() < deadline) {
    await sleep(500);
    const busy = machineBusyTicks();
    const self = selfAndReapedTicks();
    if (busy === null || self === null) return null;
    const used = (busy - busyLast - (self - selfLast)) / TICKS_PER_SECOND;
    idleSeconds = used < 0.05 ? idleSeconds + 0.5 : 0;
    busyLast = busy;
    selfLast = self;
  }
  return (busyLast - busyFirst - (selfLast - selfFirst)) / TICKS_PER_SECOND;
}

/**
 * One run of creates; with a browser, on htmldrop, followed by the wait for its screenshots (those of the warm-up
 * before it too: they wait for the end of the burst, which goes on across both), whose CPU per create of the run is
 * `deferredCpuMsPerCreate`.
 * @param {{ name: string, port: number, pid: number, headers: Record<string, string> }} target
 * @param {() => Buffer} nextBody
 * @param {number} seconds
 */
async function createsThenSettle(target, nextBody, seconds) {
  const run = await loadCreates(target, nextBody, seconds);
  if (CHROMIUM === undefined || target.name !== 'htmldrop') return run;
  const deferred = await settleMachine();
  return {
    ...run,
    deferredCpuMsPerCreate: deferred === null || run.creates === 0 ? null : (deferred * 1000) / run.creates,
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// Part 1: creates against the bare baseline, in alternating rounds

async function measureCreates() {
  const htmldropDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-write-'));
  const baselineDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-write-base-'));
  registerTempDir(htmldropDir);
  registerTempDir(baselineDir);
  const token = mintToken(htmldropDir, undefined, 'bench-creates');
  const htmldrop = await startService(htmldropDir, undefined);
  const baseline = await startBaseline(baselineDir);
  const targets = [
    {
      name: 'htmldrop',
      port: htmldrop.port,
      pid: /** @type {number} */ (htmldrop.service.child.pid),
      headers: { authorization: `Bearer ${token}` },
    },
    { name: 'bare', port: baseline.port, pid: /** @type {number} */ (baseline.service.child.pid), headers: {} },
  ];
  const nextBody = createBodies();
  for (const target of targets) await createsThenSettle(target, nextBody, Math.max(2, config.warmupSeconds * 2));
  const runs = [];
  /** @type {number[]} */
  const quiet = [];
  /** @type {number[]} */
  const disturbed = [];
  for (let round = 1; quiet.length < config.rounds && round <= config.rounds + config.extraRounds; round++) {
    const order = round % 2 === 1 ? targets : [...targets].reverse();
    const pair = [];
    for (const target of order) {
      if (config.warmupSeconds > 0) await loadCreates(target, nextBody, config.warmupSeconds);
      const run = { round, target: target.name, ...(await createsThenSettle(target, nextBody, config.seconds)) };
      pair.push(run);
      const deferred =
        'deferredCpuMsPerCreate' in run ? `  then ${fmt(run.deferredCpuMsPerCreate)} ms/create of screenshots` : '';
      console.log(
        `round ${round} ${target.name.padEnd(8)} ${run.perSecond.toFixed(0).padStart(5)} creates/s  ` +
          `server ${fmt(run.serverCores)} cores  ${fmt(run.cpuMsPerCreate)} ms CPU/create  other ${fmt(run.otherCores)} cores` +
          deferred,
      );
    }
    runs.push(...pair);
    if (pair.some((r) => (r.otherCores ?? 0) > OTHER_LOAD_CORES)) {
      disturbed.push(round);
      console.log(`round ${round}: disturbed (other processes used more than ${OTHER_LOAD_CORES} cores), set aside`);
    } else quiet.push(round);
  }
  await Promise.all([stopManaged(htmldrop.service), stopManaged(baseline.service)]);
  // Only quiet rounds count; if none was quiet, every round counts (with a warning).
  const counted = quiet.length > 0 ? quiet : disturbed;
  const ratios = [];
  const cpuRatios = [];
  for (const round of counted) {
    const mine = runs.find((r) => r.round === round && r.target === 'htmldrop');
    const theirs = runs.find((r) => r.round === round && r.target === 'bare');
    if (mine === undefined || theirs === undefined) continue;
    ratios.push(mine.perSecond / theirs.perSecond);
    if (mine.cpuMsPerCreate !== null && theirs.cpuMsPerCreate !== null) {
      cpuRatios.push(theirs.cpuMsPerCreate / mine.cpuMsPerCreate);
    }
  }
  const of = (/** @type {string} */ name, /** @type {'perSecond' | 'cpuMsPerCreate'} */ field) =>
    median(
      runs
        .filter((r) => counted.includes(r.round) && r.target === name && r[field] !== null)
        .map((r) => /** @type {number} */ (r[field])),
    );
  return {
    runs,
    quietRounds: quiet,
    disturbedRounds: disturbed,
    htmldropPerSecond: of('htmldrop', 'perSecond'),
    barePerSecond: of('bare', 'perSecond'),
    htmldropCpuMs: of('htmldrop', 'cpuMsPerCreate'),
    bareCpuMs: of('bare', 'cpuMsPerCreate'),
    deferredCpuMs:
      CHROMIUM === undefined
        ? null
        : median(
            runs
              .filter((r) => counted.includes(r.round) && typeof r.deferredCpuMsPerCreate === 'number')
              .map((r) => /** @type {number} */ (r.deferredCpuMsPerCreate)),
          ),
    ratio: { median: median(ratios), q1: quantile(ratios, 0.25), q3: quantile(ratios, 0.75), values: ratios },
    cpuRatio: median(cpuRatios),
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// Part 2: storage, list latency, memory, cold start

/** Bytes of the SQLite database files in `dir` (the database, and a WAL left behind if any). */
function sqliteBytes(dir) {
  return readdirSync(dir)
    .filter((name) => name.startsWith('htmldrop.sqlite'))
    .reduce((sum, name) => sum + statSync(path.join(dir, name)).size, 0);
}

function rssMb(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}

/** Fills a service with the corpus and the republished copies; returns the bytes of HTML uploaded. */
async function fillCorpus(port, token) {
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  let uploaded = 0;
  const created = await mapLimit(
    Array.from({ length: config.drops }, (_, i) => i),
    config.concurrency,
    async (i) => {
      const html = reportHtml(i, config.htmlBytes);
      uploaded += Buffer.byteLength(html);
      const body = Buffer.from(
        JSON.stringify({ title: `Report ${i}`, metadata: { kind: KINDS[i % 2], team: TEAMS[i % 4] }, html }),
      );
      const res = await request({ port, method: 'POST', path: '/api/drops', headers: auth, body });
      if (res.status !== 201) throw new Error(`create ${i}: ${res.status} ${res.text.slice(0, 200)}`);
      return { slug: JSON.parse(res.text).slug, html };
    },
  );
  // An agent publishing an unchanged document again: the same HTML as the drop's latest version.
  for (const { slug, html } of created.slice(0, config.republish)) {
    uploaded += Buffer.byteLength(html);
    const body = Buffer.from(JSON.stringify({ html }));
    const res = await request({ port, method: 'PUT', path: `/api/drops/${slug}`, headers: auth, body });
    if (res.status !== 200) throw new Error(`republish ${slug}: ${res.status} ${res.text.slice(0, 200)}`);
  }
  return { uploaded, versions: config.drops + config.republish };
}

/**
 * Sequential `GET /api/drops` with two metadata filters: p50 and p99 in ms. Measured with wrk on one connection
 * (BENCH_LIST_SECONDS, after a second of warm-up) when it is on PATH: this process, which has just built 500
 * documents of 100 KB, adds its own garbage collections to what it times (about 0.25 ms at p50 and 1 ms at p99 on
 * the 2-core machine). Without wrk, BENCH_LIST_REQUESTS through node:http, as before.
 * @param {number} port @param {string} token @param {string} dir where wrk's script is written
 */
async function listLatency(port, token, dir) {
  const target = `/api/drops?metadata.kind=${KINDS[0]}&metadata.team=${TEAMS[0]}&pageSize=25`;
  if (onPath('wrk')) {
    const script = path.join(dir, 'list.lua');
    writeFileSync(script, `wrk.headers["Authorization"] = "Bearer ${token}"\n`);
    const run = (/** @type {number} */ seconds) =>
      runWrk({ url: `http://${HOST}:${port}${target}`, script, threads: 1, connections: 1, seconds });
    await run(1);
    const r = await run(config.listSeconds);
    if (r.non2xx > 0 || r.socketErrors > 0)
      throw new Error(`list: ${r.non2xx} non-2xx, ${r.socketErrors} socket errors`);
    return { p50Ms: r.p50Ms, p99Ms: r.p99Ms, requests: r.requests, client: 'wrk -c1' };
  }
  const headers = { authorization: `Bearer ${token}` };
  const samples = [];
  for (let i = 0; i < config.listRequests + 20; i++) {
    const started = performance.now();
    const res = await request({ port, method: 'GET', path: target, headers });
    if (res.status !== 200) throw new Error(`list: ${res.status} ${res.text.slice(0, 200)}`);
    if (i >= 20) samples.push(performance.now() - started);
  }
  return {
    p50Ms: quantile(samples, 0.5),
    p99Ms: quantile(samples, 0.99),
    requests: samples.length,
    client: 'node:http',
  };
}

/** The bytes of every table in the service's PostgreSQL schema (tables, TOAST and indexes). */
async function postgresBytes(url) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('vacuum');
    const { rows } = await client.query(
      'select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as bytes from pg_class c ' +
        "join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relkind = 'r'",
    );
    return Number(rows[0]?.bytes ?? 0);
  } finally {
    await client.end();
  }
}

/** A fresh PostgreSQL schema for one run; returns the URL selecting it and a function dropping it. */
async function freshSchema(url) {
  const { default: pg } = await import('pg');
  const schema = `bench_write_${process.pid}_${Date.now()}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  const separator = url.includes('?') ? '&' : '?';
  return {
    url: `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    async drop() {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    },
  };
}

async function measureStorage(databaseUrl) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-store-'));
  registerTempDir(dataDir);
  const token = mintToken(dataDir, databaseUrl, 'bench-store');
  const first = await startService(dataDir, databaseUrl);
  const { uploaded, versions } = await fillCorpus(first.port, token);
  const list = await listLatency(first.port, token, dataDir);
  const pid = /** @type {number} */ (first.service.child.pid);
  const rssRightAfter = rssMb(pid);
  // What the process rests at once the burst is over: the encoding worker stops after 10 s idle and V8's memory
  // reducer gives back the young generation the burst grew (bench/README.md, "Which figure answers which question").
  await sleep(config.settleSeconds * 1000);
  const rss = rssMb(pid);
  await stopManaged(first.service, 10_000);
  const onDisk = databaseUrl === undefined ? sqliteBytes(dataDir) : await postgresBytes(databaseUrl);
  const starts = [];
  for (let i = 0; i < config.coldStarts; i++) {
    const again = await startService(dataDir, databaseUrl);
    starts.push(again.startMs);
    await stopManaged(again.service, 10_000);
  }
  return {
    uploaded,
    versions,
    onDisk,
    ratio: onDisk / uploaded,
    list,
    rssMb: rss,
    rssRightAfterMb: rssRightAfter,
    coldStartMs: median(starts),
  };
}

// ---------------------------------------------------------------------------------------------------------------------

/** @param {number | null | undefined} value @param {number} [digits] */
function fmt(value, digits = 2) {
  return value === null || value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);
}

async function main() {
  installCleanupHandlers();
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-if-stale.mjs')], { stdio: 'inherit' });
  const load = os.loadavg();
  console.log(
    `bench:write: ${os.cpus().length} CPUs, load ${load.map((l) => l.toFixed(2)).join(' ')}, Node ${process.version}; ` +
      `creates of ~${config.htmlBytes} B with ${config.concurrency} in flight, ${config.rounds} rounds of ` +
      `${config.seconds} s; corpus ${config.drops} drops + ${config.republish} republished`,
  );
  const creates = await measureCreates();
  const storage = await measureStorage(undefined);
  let postgres = null;
  if (DATABASE_URL !== undefined) {
    const schema = await freshSchema(DATABASE_URL);
    try {
      postgres = await measureStorage(schema.url);
    } finally {
      await schema.drop();
    }
  }

  const mb = (/** @type {number} */ bytes) => (bytes / 1e6).toFixed(1);
  console.log('');
  console.log(
    `creates/s (median): htmldrop ${creates.htmldropPerSecond.toFixed(0)}, bare ${creates.barePerSecond.toFixed(0)}; ` +
      `htmldrop/bare per round: median ${fmt(creates.ratio.median)} (quartiles ${fmt(creates.ratio.q1)}-` +
      `${fmt(creates.ratio.q3)}); CPU per create: htmldrop ${fmt(creates.htmldropCpuMs)} ms, bare ` +
      `${fmt(creates.bareCpuMs)} ms (bare/htmldrop ${fmt(creates.cpuRatio)})`,
  );
  for (const [name, s] of /** @type {const} */ ([
    ['SQLite', storage],
    ['PostgreSQL', postgres],
  ])) {
    if (s === null) continue;
    console.log(
      `${name}: ${mb(s.onDisk)} MB on disk for ${mb(s.uploaded)} MB of HTML uploaded (${s.versions} versions): ` +
        `${fmt(s.ratio, 3)}x; list with two tag filters over ${config.drops} drops p50 ${fmt(s.list.p50Ms)} ms, ` +
        `p99 ${fmt(s.list.p99Ms)} ms (${s.list.requests} requests, ${s.list.client}); RSS ${s.rssRightAfterMb.toFixed(0)} MB right after, ${s.rssMb.toFixed(0)} MB ` +
        `${config.settleSeconds} s later; cold start ${(s.coldStartMs / 1000).toFixed(2)} s`,
    );
  }
  const cpuPerCreate = creates.cpuRatio === null || creates.cpuRatio === undefined ? NaN : 1 / creates.cpuRatio;
  const checks = {
    creates: { target: TARGET_CREATES, value: creates.ratio.median, pass: creates.ratio.median >= TARGET_CREATES },
    cpu: { target: TARGET_CPU, value: cpuPerCreate, pass: cpuPerCreate <= TARGET_CPU },
    disk: { target: TARGET_DISK, value: storage.ratio, pass: storage.ratio <= TARGET_DISK },
    listP99: { target: TARGET_LIST_P99_MS, value: storage.list.p99Ms, pass: storage.list.p99Ms < TARGET_LIST_P99_MS },
    rss: {
      target: TARGET_RSS_MB,
      value: storage.rssMb,
      rightAfter: storage.rssRightAfterMb,
      settleSeconds: config.settleSeconds,
      pass: storage.rssMb < TARGET_RSS_MB,
    },
    coldStart: {
      target: TARGET_COLD_START_MS,
      value: storage.coldStartMs,
      pass: storage.coldStartMs < TARGET_COLD_START_MS,
    },
  };
  const verdict = (/** @type {{ pass: boolean }} */ check) => (check.pass ? 'PASS' : 'FAIL');
  console.log('');
  console.log(`creates/s >= ${TARGET_CREATES}x bare: ${verdict(checks.creates)} (${fmt(creates.ratio.median, 3)})`);
  console.log(
    `CPU per create <= ${TARGET_CPU}x bare: ${verdict(checks.cpu)} (${fmt(cpuPerCreate, 3)}: ` +
      `${fmt(creates.htmldropCpuMs)} ms against ${fmt(creates.bareCpuMs)} ms)`,
  );
  if (creates.deferredCpuMs !== null) {
    console.log(
      `with a browser (${CHROMIUM}): then ${fmt(creates.deferredCpuMs)} ms of CPU per create for the screenshots ` +
        'made after each burst (the queue keeps 64; the rest are made when their image is asked for)',
    );
  }
  console.log(`bytes on disk <= ${TARGET_DISK}x uploaded: ${verdict(checks.disk)} (${fmt(storage.ratio, 3)})`);
  console.log(
    `list p99 < ${TARGET_LIST_P99_MS} ms over ${config.drops} drops: ${verdict(checks.listP99)} (${fmt(storage.list.p99Ms)} ms)`,
  );
  console.log(
    `RSS ${config.settleSeconds} s after the workload < ${TARGET_RSS_MB} MB: ${verdict(checks.rss)} ` +
      `(${storage.rssMb.toFixed(0)} MB; ${storage.rssRightAfterMb.toFixed(0)} MB right after its last request)`,
  );
  console.log(
    `cold start < ${TARGET_COLD_START_MS} ms: ${verdict(checks.coldStart)} (${storage.coldStartMs.toFixed(0)} ms)`,
  );
  console.log(
    `create rounds counted: ${creates.quietRounds.length > 0 ? creates.quietRounds.length : creates.disturbedRounds.length}` +
      ` (${creates.quietRounds.length} quiet; ${creates.disturbedRounds.length} disturbed, set aside)`,
  );
  if (creates.quietRounds.length < config.rounds) {
    console.log(
      `WARNING: only ${creates.quietRounds.length} of ${config.rounds} create rounds were quiet` +
        (creates.quietRounds.length === 0 ? ' (every round counted)' : '') +
        ': the machine was shared; rerun on a quiet machine',
    );
  }
  const resultsDir = path.join(BENCH_DIR, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `write-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ timestamp: new Date().toISOString(), loadavg: load, config, creates, storage, postgres, checks }, null, 2)}\n`,
  );
  console.log(`results: ${path.relative(ROOT, file)}`);
  return Object.values(checks).every((check) => check.pass);
}

let exitCode = 0;
try {
  const passed = await main();
  if (process.env.BENCH_STRICT === '1' && !passed) exitCode = 1;
} catch (error) {
  if (interrupted()) await new Promise(() => undefined);
  console.error(`bench:write failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  agent.destroy();
  await cleanup();
}
process.exit(exitCode);
