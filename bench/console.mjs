/**
 * `npm run bench:console`: how long each console page takes with an account of 500 drops (docs/console.md,
 * "Speed"). Starts the built service (temporary SQLite, or PostgreSQL with BENCH_DATABASE_URL), creates the drops
 * through the API, signs in through the local provider as a browser does, then requests each page sequentially
 * over loopback. Loopback latency is an upper bound of the server's time for the page. Baselines in the same run:
 * `GET /healthz` (the floor of a request) and `GET /api/drops` with the same query as the list page (the same
 * database work, answered as JSON).
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  cleanup,
  freePort,
  installCleanupHandlers,
  intEnv,
  mapLimit,
  quantile,
  registerTempDir,
  spawnManaged,
  waitForHttp,
} from './lib.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DROPS = intEnv('BENCH_DROPS', 500, 1);
const REQUESTS = intEnv('BENCH_REQUESTS', 200, 10);
const TARGET_MS = 50;

/** One request's loopback latency in ms, checking the status. */
async function timed(url, headers) {
  const started = performance.now();
  const response = await fetch(url, { headers, redirect: 'manual' });
  await response.arrayBuffer();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status}`);
  return ms;
}

/** Signs in through the local provider: /console/login, the provider's form, the callback; returns the cookie. */
async function consoleCookie(base, login) {
  const start = await fetch(`${base}/console/login`, { redirect: 'manual' });
  const signin = (start.headers.getSetCookie()[0] ?? '').split(';')[0];
  const state = new URL(start.headers.get('location'), base).searchParams.get('state');
  const done = await fetch(`${base}/verify/callback`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: signin, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ state, username: login }),
  });
  const cookie = done.headers.getSetCookie().find((c) => c.startsWith('hd_web='));
  if (cookie === undefined) throw new Error(`sign-in failed: HTTP ${done.status}`);
  return cookie.split(';')[0];
}

installCleanupHandlers();
try {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-console-'));
  registerTempDir(dataDir);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const database = process.env.BENCH_DATABASE_URL;
  const service = spawnManaged('htmldrop', process.execPath, [path.join(ROOT, 'packages/server/dist/main.js')], {
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HTMLDROP_BASE_URL: base,
      HTMLDROP_DATA_DIR: dataDir,
      HTMLDROP_LOG_LEVEL: 'warn',
      HTMLDROP_MAX_WRITES_PER_MINUTE: '100000',
      HTMLDROP_MAX_WRITES_PER_DAY: '100000',
      HTMLDROP_MAX_DROPS_PER_ACCOUNT: String(Math.max(500, DROPS)),
      ...(database === undefined ? {} : { HTMLDROP_DATABASE_URL: database }),
    },
  });
  await waitForHttp(`${base}/healthz`, service);
  const cookie = await consoleCookie(base, 'bench');
  // A token for the same account, minted by approving a device request in the console's own browser session is
  // more than a bench needs: the operator command does it.
  const { execFileSync } = await import('node:child_process');
  const token = execFileSync(
    process.execPath,
    [path.join(ROOT, 'packages/server/dist/cli.js'), 'token', 'create', '--user', 'bench'],
    {
      env: {
        PATH: process.env.PATH,
        HTMLDROP_DATA_DIR: dataDir,
        ...(database === undefined ? {} : { HTMLDROP_DATABASE_URL: database }),
      },
    },
  )
    .toString()
    .trim();
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const slugs = await mapLimit(
    Array.from({ length: DROPS }, (_, i) => i),
    8,
    async (i) => {
      const body = {
        title: `${['Revenue report', 'Churn analysis', 'Latency dashboard', 'Prototype'][i % 4]} ${i}`,
        html: `<!doctype html><title>${i}</title><h1>Drop ${i}</h1>${'<p>lorem ipsum dolor sit amet</p>'.repeat(200)}`,
        metadata: { project: ['acme', 'globex', 'initech', 'umbrella'][i % 4], n: String(i) },
      };
      const response = await fetch(`${base}/api/drops`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
      if (response.status !== 201) throw new Error(`create: HTTP ${response.status}`);
      return (await response.json()).slug;
    },
  );
  const slug = slugs[0];
  for (let v = 0; v < 5; v++) {
    await fetch(`${base}/api/drops/${slug}`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ html: `<p>${v}</p>` }),
    });
  }
  const lastPage = Math.ceil(DROPS / 25);
  const targets = [
    ['baseline: GET /healthz', '/healthz', {}],
    ['baseline: GET /api/drops (25, by updated_at)', '/api/drops?pageSize=25&sortBy=updated_at', auth],
    ['/console', '/console', { cookie }],
    [`/console?page=${lastPage}`, `/console?page=${lastPage}`, { cookie }],
    ['/console?q=report', '/console?q=report', { cookie }],
    ['/console?tags=project=acme', '/console?tags=project%3Dacme', { cookie }],
    ['/console?sort=views', '/console?sort=views', { cookie }],
    ['/console/drops/<slug> (6 versions)', `/console/drops/${slug}`, { cookie }],
    ['/console/drops/<slug>/delete', `/console/drops/${slug}/delete`, { cookie }],
    ['/console/tokens', '/console/tokens', { cookie }],
  ];
  console.log(
    `${DROPS} drops, ${REQUESTS} sequential requests per page, ${database === undefined ? 'SQLite' : 'PostgreSQL'}`,
  );
  const rows = [];
  for (const [name, url, headers] of targets) {
    for (let i = 0; i < 20; i++) await timed(base + url, headers);
    const samples = [];
    for (let i = 0; i < REQUESTS; i++) samples.push(await timed(base + url, headers));
    rows.push({ name, p50: quantile(samples, 0.5), p95: quantile(samples, 0.95), max: Math.max(...samples) });
  }
  const api = rows[1].p50;
  let over = 0;
  for (const row of rows) {
    const ratio = row.name.startsWith('baseline') ? '' : `  ${(row.p50 / api).toFixed(2)}x the API list`;
    const flag = !row.name.startsWith('baseline') && row.p95 > TARGET_MS ? '  OVER TARGET' : '';
    if (flag !== '') over += 1;
    console.log(
      `${row.name.padEnd(46)} p50 ${row.p50.toFixed(2).padStart(6)} ms  p95 ${row.p95.toFixed(2).padStart(6)} ms  max ${row.max.toFixed(1).padStart(6)} ms${ratio}${flag}`,
    );
  }
  console.log(
    over === 0 ? `every console page: p95 under ${TARGET_MS} ms` : `${over} page(s) over ${TARGET_MS} ms at p95`,
  );
  process.exitCode = over === 0 ? 0 : 1;
} finally {
  await cleanup();
}
