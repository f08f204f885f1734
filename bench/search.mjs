#!/usr/bin/env node
/**
 * `npm run bench:search`: full-text search (docs/api.md, "Search") over BENCH_DROPS report-like drops of about
 * BENCH_HTML_BYTES each (bench/report-corpus.mjs, every one distinct, each with a reference word of its own), on
 * SQLite and, with BENCH_DATABASE_URL, on PostgreSQL (a fresh schema, dropped afterwards). In one run per database:
 *
 * 1. Fills a fresh service with POST /api/drops (BENCH_CONCURRENCY in flight); prints creates/s (informational: the
 *    create path's own benchmark is bench:write).
 * 2. Ten kinds of query, each BENCH_QUERIES times, one request at a time, `GET /api/drops?q=...&pageSize=20`: p50 and
 *    p99 in ms, and the drops each kind matches. The plain listing (no `q`) is measured beside them for comparison.
 *
 * The target (bench/README.md): p99 < 20 ms on SQLite for every kind. See bench/README.md ("Search") for the knobs.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
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
  mapLimit,
  quantile,
  registerTempDir,
  serviceEnv,
  spawnManaged,
  stopManaged,
  waitForHttp,
} from './lib.mjs';
import { reportHtml } from './report-corpus.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const HOST = '127.0.0.1';

const config = {
  drops: intEnv('BENCH_DROPS', 10_000, 20),
  htmlBytes: intEnv('BENCH_HTML_BYTES', 20_000, 2000),
  concurrency: intEnv('BENCH_CONCURRENCY', 8, 1),
  queries: intEnv('BENCH_QUERIES', 200, 10),
  warmup: intEnv('BENCH_WARMUP_QUERIES', 20, 0),
};
const DATABASE_URL = process.env.BENCH_DATABASE_URL?.trim() || undefined;
const TARGET_SQLITE_P99_MS = 20;
const TEAMS = ['red', 'blue', 'green', 'gold'];

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** A word of letters only, distinct per drop: `ref` and the index in base 26. */
function referenceWord(i) {
  let n = i;
  let word = '';
  do {
    word = String.fromCharCode(97 + (n % 26)) + word;
    n = Math.floor(n / 26);
  } while (n > 0);
  return `ref${word}`;
}

/** The document of drop `i`: a report with a paragraph naming its reference word and a few accented words. */
const documentOf = (i) =>
  reportHtml(i, config.htmlBytes).replace(
    '</body>',
    `<p>Reference ${referenceWord(i)}: the café crème budget of the Zürich office.</p></body>`,
  );

/**
 * The ten kinds of query, each a function of the request's number (so a kind spreads over many drops where it can).
 * The words come from the corpus's vocabulary (bench/report-corpus.mjs), where most appear in every report: a common
 * word matches every drop, the worst case for ranking.
 */
const KINDS = [
  ['one rare word (one drop)', (n) => `q=${referenceWord((n * 7919) % config.drops)}`],
  ['one common word (every drop)', () => 'q=revenue'],
  ['two common words', () => 'q=churn%20latency'],
  ['prefix of a common word', () => 'q=retent'],
  ['prefix of two letters', () => 'q=re'],
  [
    'five words, one drop',
    (n) => `q=reference%20${referenceWord((n * 104_729) % config.drops)}%20cafe%20creme%20zurich`,
  ],
  ['no match', () => 'q=xylophone'],
  ['accents and case folded', () => 'q=CAF%C3%89%20CR%C3%88ME'],
  ['common word and a tag', (n) => `q=forecast&metadata.team=${TEAMS[n % TEAMS.length]}`],
  ['common word, sorted by date', () => 'q=margin&sortBy=updated_at'],
];

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

/** A fresh PostgreSQL schema for one run; returns the URL selecting it and a function dropping it. */
async function freshSchema(url) {
  const { default: pg } = await import('pg');
  const schema = `bench_search_${process.pid}_${Date.now()}`;
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

/**
 * PostgreSQL: fresh statistics for the planner, as autovacuum would gather them after a fill like this one (a server
 * run with autovacuum off, as this project's test server is, would otherwise plan for the empty tables it analyzed last).
 */
async function analyze(url) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('analyze');
  } finally {
    await client.end();
  }
}

/** p50 and p99 (ms) of one request kind, sequential, after a warm-up; and how many drops the last answer matched. */
async function latency(port, headers, queryOf) {
  const samples = [];
  let matched = 0;
  for (let n = 0; n < config.warmup + config.queries; n++) {
    const target = `/api/drops?pageSize=20&${queryOf(n)}`;
    const started = performance.now();
    const res = await request({ port, method: 'GET', path: target, headers });
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${target}: ${res.status} ${res.text.slice(0, 200)}`);
    if (n >= config.warmup) samples.push(ms);
    matched = JSON.parse(res.text).pagination.total_items;
  }
  return { p50Ms: quantile(samples, 0.5), p99Ms: quantile(samples, 0.99), matched };
}

/** One database: fill a fresh service, then time every kind of query. */
async function run(label, databaseUrl) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-search-'));
  registerTempDir(dataDir);
  const token = execFileSync(
    process.execPath,
    [path.join(ROOT, 'packages/server/dist/cli.js'), 'token', 'create', '--user', 'bench-search'],
    { env: serviceEnv({ host: HOST, port: 0, dataDir, databaseUrl }) },
  )
    .toString()
    .trim();
  const port = await freePort();
  const service = spawnManaged(
    `htmldrop (${label})`,
    process.execPath,
    [path.join(ROOT, 'packages/server/dist/main.js')],
    {
      env: serviceEnv({ host: HOST, port, dataDir, databaseUrl }),
    },
  );
  try {
    await waitForHttp(`http://${HOST}:${port}/healthz`, service, 60_000, 20);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const started = performance.now();
    await mapLimit(
      Array.from({ length: config.drops }, (_, i) => i),
      config.concurrency,
      async (i) => {
        const body = Buffer.from(
          JSON.stringify({ title: `Report ${i}`, metadata: { team: TEAMS[i % TEAMS.length] }, html: documentOf(i) }),
        );
        const res = await request({ port, method: 'POST', path: '/api/drops', headers: auth, body });
        if (res.status !== 201) throw new Error(`create ${i}: ${res.status} ${res.text.slice(0, 200)}`);
      },
    );
    const createsPerSecond = config.drops / ((performance.now() - started) / 1000);
    console.log(`${label}: ${config.drops} drops created, ${createsPerSecond.toFixed(0)} creates/s`);
    if (databaseUrl !== undefined) await analyze(databaseUrl);
    const headers = { authorization: `Bearer ${token}` };
    const kinds = [];
    for (const [name, queryOf] of KINDS) {
      const measured = await latency(port, headers, queryOf);
      kinds.push({ name, ...measured });
      console.log(
        `  ${name.padEnd(30)} p50 ${measured.p50Ms.toFixed(2).padStart(7)} ms  p99 ${measured.p99Ms.toFixed(2).padStart(7)} ms  (${measured.matched} found)`,
      );
    }
    const list = await latency(port, headers, () => 'sortBy=created_at');
    console.log(
      `  ${'(the listing, no q)'.padEnd(30)} p50 ${list.p50Ms.toFixed(2).padStart(7)} ms  p99 ${list.p99Ms.toFixed(2).padStart(7)} ms`,
    );
    return { label, createsPerSecond, kinds, list };
  } finally {
    await stopManaged(service);
  }
}

async function main() {
  installCleanupHandlers();
  const load = os.loadavg();
  console.log(
    `bench:search: ${config.drops} drops of about ${config.htmlBytes} bytes, ${config.queries} queries per kind ` +
      `(load average ${load.map((l) => l.toFixed(1)).join(' ')})`,
  );
  const results = [await run('sqlite', undefined)];
  if (DATABASE_URL === undefined) {
    console.log('postgres: skipped (set BENCH_DATABASE_URL=postgres://... to measure it too)');
  } else {
    const schema = await freshSchema(DATABASE_URL);
    try {
      results.push(await run('postgres', schema.url));
    } finally {
      await schema.drop();
    }
  }
  const sqlite = results[0];
  const worst = Math.max(...sqlite.kinds.map((k) => k.p99Ms));
  const pass = worst < TARGET_SQLITE_P99_MS;
  console.log('');
  console.log(
    `SQLite p99 < ${TARGET_SQLITE_P99_MS} ms for every kind: ${pass ? 'PASS' : 'FAIL'} (worst ${worst.toFixed(2)} ms)`,
  );
  const resultsDir = path.join(BENCH_DIR, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `search-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim();
  } catch {
    // not a git checkout
  }
  writeFileSync(
    file,
    `${JSON.stringify({ timestamp: new Date().toISOString(), commit, loadavg: load, config, results, pass }, null, 2)}\n`,
  );
  console.log(`results: ${path.relative(ROOT, file)}`);
  return pass;
}

let exitCode = 0;
try {
  const passed = await main();
  if (process.env.BENCH_STRICT === '1' && !passed) exitCode = 1;
} catch (error) {
  if (interrupted()) await new Promise(() => undefined);
  console.error(`bench:search failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  agent.destroy();
  await cleanup();
}
process.exit(exitCode);
