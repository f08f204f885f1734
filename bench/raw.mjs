#!/usr/bin/env node
/**
 * `npm run bench:raw`: requests/s and p99 latency of the public raw path `/p/<slug>/raw` of htmldrop, and of the same
 * documents on each drop's own origin (`GET /` with `Host: <label>.localhost:<port>`), against a bare node:http server
 * (as is, and with the service's V8 tick-shape workaround) and (when installed) nginx serving the same bytes, measured
 * in the same run with wrk.
 * See bench/README.md for the knobs and how to read the output.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  cleanup,
  freePort,
  httpGet,
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
  TICKS_PER_SECOND,
  treeTicks,
  versionOf,
  waitForHttp,
} from './lib.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const SERVER_DIST = path.join(ROOT, 'packages', 'server', 'dist');
const HOST = '127.0.0.1';

const config = {
  drops: intEnv('BENCH_DROPS', 3000, 1),
  htmlBytes: intEnv('BENCH_HTML_BYTES', 20_000, 200),
  seconds: intEnv('BENCH_DURATION', 4, 1),
  warmupSeconds: intEnv('BENCH_WARMUP', 1, 0),
  firstWarmupSeconds: intEnv('BENCH_FIRST_WARMUP', 5, 0),
  connections: intEnv('BENCH_CONNECTIONS', 50, 1),
  threads: intEnv('BENCH_THREADS', 1, 1),
  rounds: intEnv('BENCH_ROUNDS', 9, 1),
  /** Extra rounds allowed to replace disturbed ones (a run during which other processes used the CPU). */
  extraRounds: intEnv('BENCH_EXTRA_ROUNDS', 9, 0),
  seedConcurrency: 16,
};
const truthy = (/** @type {string | undefined} */ value) =>
  ['1', 'true', 'yes'].includes((value ?? '').trim().toLowerCase());
const STRICT = truthy(process.env.BENCH_STRICT);
/** Diagnostic targets: htmldrop's fast path alone in a process, and after traffic through Fastify (bench/README.md). */
const ISOLATE = truthy(process.env.BENCH_ISOLATE);
/** The content host target: the same drops as `GET /` on their own origins (on unless BENCH_CONTENT_HOST=0). */
const CONTENT_HOST = !['0', 'false', 'no'].includes((process.env.BENCH_CONTENT_HOST ?? '').trim().toLowerCase());
/** The service answering the same drops on their content hosts. */
const CONTENT = 'htmldrop content host';
/** The bare baseline with the service's tick-shape workaround (node-baseline.mjs --keep-tick-shape). */
const PINNED_NODE = 'node:http+tickfix';
/** The same, sending htmldrop's headers (diagnostic, BENCH_ISOLATE). */
const HEADERS_NODE = 'node:http+tickfix+headers';
/** Headers node:http adds by itself, left out of the lists the diagnostic baseline sends. */
const NODE_OWN_HEADERS = new Set(['date', 'connection', 'keep-alive']);

/**
 * htmldrop's headers as a flat [name, value, ...] list, without those node:http adds.
 * @param {string[]} rawHeaders
 */
function ownHeaders(rawHeaders) {
  const list = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = /** @type {string} */ (rawHeaders[i]);
    if (!NODE_OWN_HEADERS.has(name.toLowerCase())) list.push(name, /** @type {string} */ (rawHeaders[i + 1]));
  }
  return list;
}
const ISOLATE_REQUESTS = intEnv('BENCH_ISOLATE_REQUESTS', 3000, 1);

/** Targets htmldrop must reach, relative to the node:http baseline measured in the same run. */
const TARGET_RATIO_NODE = 0.85;
const TARGET_P99_MS = 5;

// ---------------------------------------------------------------------------------------------------------------------
// Seed content

const WORDS = (
  'drop html page agent render layout table chart canvas script style section header footer article figure caption ' +
  'summary details token upload version viewer sandbox policy latency throughput cache buffer stream socket kernel'
).split(' ');

/**
 * A deterministic, self-contained HTML document of about `bytes` bytes, distinct per `index`.
 * @param {number} index
 * @param {number} bytes
 */
function makeHtml(index, bytes) {
  let seed = (index + 1) * 2_654_435_761;
  const rand = () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed;
  };
  const head =
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    `<title>Bench drop ${index}</title>\n` +
    '<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;line-height:1.5;color:#222}' +
    'h2{border-bottom:1px solid #ddd}table{border-collapse:collapse}td{border:1px solid #ccc;padding:.2rem .5rem}</style>\n' +
    `</head>\n<body>\n<h1>Bench drop ${index} — résumé ✓</h1>\n`;
  const tail = `<script>document.body.dataset.drop = '${index}';</script>\n</body>\n</html>\n`;
  const parts = [head];
  let size = Buffer.byteLength(head) + tail.length;
  for (let section = 1; size < bytes; section++) {
    const words = Array.from({ length: 40 + (rand() % 40) }, () => WORDS[rand() % WORDS.length]);
    const cells = Array.from({ length: 4 }, () => `<td>${rand() % 100_000}</td>`).join('');
    const chunk = `<h2>Section ${section}</h2>\n<p>${words.join(' ')}.</p>\n<table><tr>${cells}</tr></table>\n`;
    parts.push(chunk);
    size += Buffer.byteLength(chunk);
  }
  parts.push(tail);
  return parts.join('');
}

// ---------------------------------------------------------------------------------------------------------------------
// Processes

/**
 * @param {string} dir nginx prefix directory
 * @param {string} www document root
 * @param {number} port
 */
function nginxConf(dir, www, port) {
  const tmp = path.join(dir, 'tmp');
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(path.join(tmp, sub), { recursive: true });
  mkdirSync(path.join(dir, 'logs'), { recursive: true }); // builds with relative default log paths
  return `worker_processes 1;
daemon off;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections ${Math.max(1024, config.connections * 2 + 64)}; }
http {
  access_log off;
  server_tokens off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 65;
  keepalive_requests 1000000;
  open_file_cache max=${Math.max(1000, config.drops * 2)} inactive=120s;
  open_file_cache_valid 120s;
  types { }
  default_type text/html;
  charset utf-8;
  client_body_temp_path ${path.join(tmp, 'body')};
  proxy_temp_path ${path.join(tmp, 'proxy')};
  fastcgi_temp_path ${path.join(tmp, 'fastcgi')};
  uwsgi_temp_path ${path.join(tmp, 'uwsgi')};
  scgi_temp_path ${path.join(tmp, 'scgi')};
  server {
    listen ${HOST}:${port};
    root ${www};
    location / { try_files $uri =404; }
  }
}
`;
}

// ---------------------------------------------------------------------------------------------------------------------
// CPU accounting (Linux /proc): who used the two cores during a measured run

/** Cores used by other processes above which a run is flagged as disturbed. */
const OTHER_LOAD_WARN_CORES = 0.2;

/**
 * Cores in use on the whole machine over the next `ms`, or null without /proc.
 * @param {number} ms
 */
async function busyCores(ms) {
  const start = machineBusyTicks();
  const t0 = performance.now();
  await sleep(ms);
  const end = machineBusyTicks();
  if (start === null || end === null) return null;
  return (end - start) / TICKS_PER_SECOND / ((performance.now() - t0) / 1000);
}

/** @typedef {{ server: number, wrk: number, other: number }} CpuShare cores used during one run */

/** @param {number | undefined} pid */
function cpuSnapshot(pid) {
  return {
    t: performance.now(),
    busy: machineBusyTicks(),
    self: selfAndReapedTicks(),
    server: pid === undefined ? null : treeTicks(pid),
  };
}

/**
 * Cores used since `before` by the server (process tree), wrk (reaped child of this process, plus this driver's own
 * negligible time) and everything else on the machine.
 * @param {ReturnType<typeof cpuSnapshot>} before
 * @param {number | undefined} pid
 * @returns {CpuShare | null}
 */
function cpuSince(before, pid) {
  const after = cpuSnapshot(pid);
  if (before.busy === null || after.busy === null || before.self === null || after.self === null) return null;
  if (before.server === null || after.server === null) return null;
  const seconds = ((after.t - before.t) / 1000) * TICKS_PER_SECOND;
  const server = (after.server - before.server) / seconds;
  const wrk = (after.self - before.self) / seconds;
  const other = Math.max(0, (after.busy - before.busy) / seconds - server - wrk);
  return { server, wrk, other };
}

// ---------------------------------------------------------------------------------------------------------------------
// Output

/** @param {number} n */
const fmtInt = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
/**
 * @param {number} n
 * @param {number} [digits]
 */
const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/**
 * @param {string[][]} rows first row is the header
 * @param {boolean[]} rightAlign per column
 */
function table(rows, rightAlign) {
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length))) ?? [];
  const line = (/** @type {string[]} */ row) =>
    row
      .map((cell, col) => (rightAlign[col] ? cell.padStart(widths[col] ?? 0) : cell.padEnd(widths[col] ?? 0)))
      .join('  ');
  const [header, ...body] = rows;
  return [line(header ?? []), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------------

async function main() {
  if (!onPath('wrk')) {
    console.error('bench:raw needs wrk (https://github.com/wg/wrk) on PATH. On Debian/Ubuntu: apt-get install wrk');
    process.exit(1);
  }
  installCleanupHandlers();
  const haveNginx = onPath('nginx');
  const loadStart = os.loadavg();
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    wrk: versionOf('wrk', '-v'),
    nginx: haveNginx ? versionOf('nginx', '-v') : null,
    loadavgStart: loadStart,
    /** @type {number | null} */
    busyCoresBeforeStart: null,
  };
  console.log(
    `bench:raw  ${machine.cpus} CPU (${machine.cpuModel}), node ${machine.node}, ${machine.wrk.split(' Copyright')[0]}`,
  );
  console.log(
    `  drops=${config.drops} html~${config.htmlBytes}B  wrk -t${config.threads} -c${config.connections} ` +
      `-d${config.seconds}s --latency, warmup ${config.firstWarmupSeconds}s once then ${config.warmupSeconds}s per run, ` +
      `rounds=${config.rounds}`,
  );
  const idleBusy = await busyCores(1000);
  if (idleBusy !== null) {
    console.log(`  machine busy before start: ${fmt(idleBusy)} of ${machine.cpus} cores (other processes)`);
    machine.busyCoresBeforeStart = idleBusy;
    if (idleBusy > OTHER_LOAD_WARN_CORES)
      console.log('  WARNING: something else is using the CPU: results will be noisy');
  }
  if (!haveNginx) console.log('nginx: not installed, skipped');

  const tmp = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-'));
  registerTempDir(tmp);
  chmodSync(tmp, 0o755); // nginx workers may run as another user when started as root
  const dataDir = path.join(tmp, 'data');
  const www = path.join(tmp, 'www');
  mkdirSync(dataDir);
  mkdirSync(path.join(www, 'p'), { recursive: true });

  // --- htmldrop ------------------------------------------------------------------------------------------------------
  const servicePort = await freePort();
  const env = serviceEnv({ host: HOST, port: servicePort, dataDir, contentOrigin: true });
  const baseUrl = env.HTMLDROP_BASE_URL ?? '';
  const service = spawnManaged('htmldrop', process.execPath, [path.join(SERVER_DIST, 'main.js')], { cwd: ROOT, env });
  await waitForHttp(`${baseUrl}/llms.txt`, service);
  const { stdout: tokenOut } = await promisify(execFile)(
    process.execPath,
    [path.join(SERVER_DIST, 'cli.js'), 'token', 'create', '--user', 'bench'],
    { cwd: ROOT, env },
  );
  const token = tokenOut.trim().split('\n').pop()?.trim() ?? '';
  if (token === '') throw new Error('token create printed nothing');

  // --- seed ----------------------------------------------------------------------------------------------------------
  const seedStart = performance.now();
  const created = await mapLimit(
    Array.from({ length: config.drops }, (_, i) => i),
    config.seedConcurrency,
    async (i) => {
      const res = await fetch(`${baseUrl}/api/drops`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ title: `Bench drop ${i}`, html: makeHtml(i, config.htmlBytes) }),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`POST /api/drops #${i}: ${res.status} ${text.slice(0, 500)}`);
      const json = /** @type {{ slug?: unknown, raw_url?: unknown, content_url?: unknown }} */ (JSON.parse(text));
      if (typeof json.slug !== 'string' || !/^[A-Za-z0-9_-]+$/.test(json.slug) || typeof json.raw_url !== 'string') {
        throw new Error(`POST /api/drops #${i}: unexpected answer ${text.slice(0, 500)}`);
      }
      // `http://<label>.localhost:<port>/`: its host is what wrk sends, to HOST:<port>.
      const contentHost =
        typeof json.content_url === 'string'
          ? /^http:\/\/([0-9a-z]{20}\.localhost:\d+)\/$/.exec(json.content_url)?.[1]
          : undefined;
      if (contentHost === undefined) {
        throw new Error(
          `POST /api/drops #${i}: content_url ${JSON.stringify(json.content_url)}, expected http://<label>.localhost:<port>/ ` +
            '(is a content origin configured?)',
        );
      }
      return { slug: json.slug, rawUrl: json.raw_url, contentHost };
    },
  );
  const seedSeconds = (performance.now() - seedStart) / 1000;

  // --- the exact bytes the service sends (no Accept-Encoding, like wrk) -------------------------------------------------
  const agent = new http.Agent({ keepAlive: true, maxSockets: config.seedConcurrency });
  // htmldrop's own headers per document, for the diagnostic baseline that sends them (BENCH_ISOLATE).
  const headersDir = path.join(tmp, 'headers');
  if (ISOLATE) mkdirSync(headersDir);
  /** @type {import('node:http').IncomingHttpHeaders | undefined} */
  let serviceHeaders;
  const bodies = await mapLimit(created, config.seedConcurrency, async ({ slug, rawUrl }) => {
    const res = await httpGet(rawUrl, agent);
    if (res.status !== 200) throw new Error(`GET ${rawUrl}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
    if (res.headers['content-encoding'] !== undefined) {
      throw new Error(`GET ${rawUrl} without Accept-Encoding came back ${res.headers['content-encoding']}`);
    }
    serviceHeaders ??= res.headers;
    mkdirSync(path.join(www, 'p', slug));
    writeFileSync(path.join(www, 'p', slug, 'raw'), res.body);
    if (ISOLATE) writeFileSync(path.join(headersDir, `${slug}.json`), JSON.stringify(ownHeaders(res.rawHeaders)));
    return res.body;
  });
  agent.destroy();
  const paths = created.map(({ slug }) => `/p/${slug}/raw`);
  // The stored documents, for the fast-path-only targets (they inject the same way the service does).
  const htmlDir = path.join(tmp, 'html');
  if (ISOLATE) {
    mkdirSync(htmlDir);
    for (const [i, { slug }] of created.entries()) {
      writeFileSync(path.join(htmlDir, `${slug}.html`), makeHtml(i, config.htmlBytes));
    }
  }
  const avgBodyBytes = bodies.reduce((sum, b) => sum + b.length, 0) / bodies.length;
  console.log(
    `seeded ${config.drops} drops in ${seedSeconds.toFixed(1)} s (${(config.drops / seedSeconds).toFixed(0)}/s), ` +
      `raw bodies avg ${fmtInt(avgBodyBytes)} B`,
  );

  // --- baselines -----------------------------------------------------------------------------------------------------
  /** @type {{ name: string, url: string, pid: number | undefined }[]} */
  const targets = [{ name: 'htmldrop', url: baseUrl, pid: service.child.pid }];
  // The same process answering the same documents on their content hosts (wrk sends each drop's Host to baseUrl).
  if (CONTENT_HOST) targets.push({ name: CONTENT, url: baseUrl, pid: service.child.pid });
  /**
   * Starts a baseline on a free port, waits until it serves the first path and adds it to the targets.
   * @param {string} name
   * @param {(port: number) => string[]} argsFor node arguments (script first) for the port
   * @param {number} [timeoutMs]
   */
  const addNodeTarget = async (name, argsFor, timeoutMs) => {
    const port = await freePort();
    const managed = spawnManaged(name, process.execPath, argsFor(port));
    const url = `http://${HOST}:${port}`;
    await waitForHttp(`${url}${paths[0]}`, managed, timeoutMs);
    targets.push({ name, url, pid: managed.child.pid });
  };
  const baseline =
    (/** @type {string[]} */ ...flags) =>
    (/** @type {number} */ port) => [path.join(BENCH_DIR, 'node-baseline.mjs'), www, String(port), HOST, ...flags];
  await addNodeTarget('node:http', baseline());
  // The same bare server with the service's V8 tick-shape workaround: the strictest ceiling (bench/README.md).
  await addNodeTarget(PINNED_NODE, baseline('--keep-tick-shape'));
  if (ISOLATE) {
    // The strict baseline sending htmldrop's headers: what the same bytes on the wire cost node:http.
    await addNodeTarget(HEADERS_NODE, baseline('--keep-tick-shape', '--headers', headersDir));
    for (const [name, extra] of /** @type {const} */ ([
      ['fast path', []],
      ['fast path after Fastify', ['--fastify-requests', String(ISOLATE_REQUESTS)]],
    ])) {
      const fastPathOnly = (/** @type {number} */ port) => [
        path.join(BENCH_DIR, 'fast-path-only.mjs'),
        htmlDir,
        String(port),
        ...extra,
      ];
      await addNodeTarget(name, fastPathOnly, 120_000);
    }
  }

  if (haveNginx) {
    const nginxDir = path.join(tmp, 'nginx');
    mkdirSync(nginxDir);
    const nginxPort = await freePort();
    const confPath = path.join(nginxDir, 'nginx.conf');
    writeFileSync(confPath, nginxConf(nginxDir, www, nginxPort));
    const nginx = spawnManaged('nginx', 'nginx', ['-p', nginxDir, '-c', confPath]);
    const nginxUrl = `http://${HOST}:${nginxPort}`;
    await waitForHttp(`${nginxUrl}${paths[0]}`, nginx);
    targets.push({ name: 'nginx', url: nginxUrl, pid: nginx.child.pid });
  }

  // Every target must send the same bytes, for a spread of paths.
  const step = Math.max(1, Math.floor(paths.length / 25));
  for (let i = 0; i < paths.length; i += step) {
    /** @type {string | undefined} htmldrop's headers for this path (targets[0] is htmldrop) */
    let expectedHeaders;
    for (const target of targets) {
      if (target.name === CONTENT) continue; // checked below, for every drop
      const res = await httpGet(`${target.url}${paths[i]}`);
      const sent = JSON.stringify(ownHeaders(res.rawHeaders));
      expectedHeaders ??= sent;
      if (target.name === HEADERS_NODE && sent !== expectedHeaders) {
        throw new Error(`${target.name} ${paths[i]}: sent headers ${sent}, htmldrop sent ${expectedHeaders}`);
      }
      const type = String(res.headers['content-type']).toLowerCase().replace(/\s+/g, '');
      if (
        res.status !== 200 ||
        !res.body.equals(/** @type {Buffer} */ (bodies[i])) ||
        type !== 'text/html;charset=utf-8'
      ) {
        throw new Error(
          `${target.name} ${paths[i]}: status ${res.status}, content-type ${res.headers['content-type']}, ` +
            `${res.body.length} bytes; expected 200, text/html; charset=utf-8, the same ${bodies[i]?.length} bytes as htmldrop`,
        );
      }
    }
  }

  // The content host must send every drop's document, byte for byte as its raw path does. This also loads every
  // content host's entry into the cache, as fetching every raw_url did for the raw path.
  /** @type {string[]} htmldrop's own headers on a content host (first drop), for the record */
  let contentHeaders = [];
  if (CONTENT_HOST) {
    const contentAgent = new http.Agent({ keepAlive: true, maxSockets: config.seedConcurrency });
    await mapLimit(created, config.seedConcurrency, async ({ contentHost }, i) => {
      const res = await httpGet(`${baseUrl}/`, contentAgent, contentHost);
      const type = String(res.headers['content-type']).toLowerCase().replace(/\s+/g, '');
      if (
        res.status !== 200 ||
        !res.body.equals(/** @type {Buffer} */ (bodies[i])) ||
        type !== 'text/html;charset=utf-8' ||
        res.headers['content-encoding'] !== undefined
      ) {
        throw new Error(
          `${CONTENT} GET / Host: ${contentHost}: status ${res.status}, content-type ${res.headers['content-type']}, ` +
            `content-encoding ${res.headers['content-encoding']}, ${res.body.length} bytes; expected 200, ` +
            `text/html; charset=utf-8, the same ${bodies[i]?.length} bytes as ${paths[i]}`,
        );
      }
      if (i === 0) contentHeaders = ownHeaders(res.rawHeaders);
    });
    contentAgent.destroy();
    console.log(`content hosts: all ${created.length} answer GET / with the raw path's bytes`);
  }

  // --- wrk -----------------------------------------------------------------------------------------------------------
  const seed = Date.now() % 2_147_483_647;
  const script = path.join(tmp, 'random-paths.lua');
  writeFileSync(
    script,
    `local paths = {\n${paths.map((p) => `  "${p}",`).join('\n')}\n}\nlocal n = #paths\nmath.randomseed(${seed})\n` +
      'request = function()\n  return wrk.format(nil, paths[math.random(n)])\nend\n',
  );
  // The content host: `GET /` to the same address, with a random drop's Host per request. One prepared header
  // table per drop, as the raw script has one path string per drop (wrk.format only sets Content-Length to nil in it).
  const contentScript = path.join(tmp, 'random-hosts.lua');
  writeFileSync(
    contentScript,
    `local hosts = {\n${created.map(({ contentHost }) => `  { Host = "${contentHost}" },`).join('\n')}\n}\n` +
      `local n = #hosts\nmath.randomseed(${seed})\n` +
      'request = function()\n  return wrk.format(nil, "/", hosts[math.random(n)])\nend\n',
  );

  /** @type {{ round: number, target: string, rps: number, p50Ms: number, p90Ms: number, p99Ms: number, requests: number, bytesPerResponse: number, non2xx: number, socketErrors: number, cpu: CpuShare | null, cpuUsPerRequest: number | null }[]} */
  const runs = [];
  const nameWidth = Math.max(...targets.map((t) => t.name.length));
  /** @param {{ name: string, url: string }} target */
  const wrkOptions = (target) => ({
    url: `${target.url}/`,
    script: target.name === CONTENT ? contentScript : script,
    threads: config.threads,
    connections: config.connections,
  });
  // Every target is loaded once before any measurement (JIT tiers, caches, connection pools settle).
  if (config.firstWarmupSeconds > 0) {
    for (const target of targets) await runWrk({ ...wrkOptions(target), seconds: config.firstWarmupSeconds });
  }
  console.log('');
  // A round in which any run was disturbed (other processes, or a neighbour on the host, took CPU) is set aside and
  // replaced by an extra round, up to config.extraRounds: a disturbed run skews its round's ratios either way.
  /** @type {Set<number>} */
  const disturbedRounds = new Set();
  const isDisturbed = (/** @type {{ cpu: CpuShare | null }} */ run) => (run.cpu?.other ?? 0) > OTHER_LOAD_WARN_CORES;
  for (
    let round = 1;
    round - disturbedRounds.size <= config.rounds && round <= config.rounds + config.extraRounds;
    round++
  ) {
    // Short runs, every target once per round, the order rotated each round: the machine's drift (which moves a
    // single server by 20-30% within a minute here) hits the runs of one round alike, and no target always runs
    // right after the same neighbour. The ratios are taken within each round (see the summary).
    const shift = (round - 1) % targets.length;
    for (const target of [...targets.slice(shift), ...targets.slice(0, shift)]) {
      const common = wrkOptions(target);
      if (config.warmupSeconds > 0) await runWrk({ ...common, seconds: config.warmupSeconds });
      const before = cpuSnapshot(target.pid);
      const r = await runWrk({ ...common, seconds: config.seconds });
      const cpu = cpuSince(before, target.pid);
      const run = {
        round,
        target: target.name,
        rps: r.rps,
        p50Ms: r.p50Ms,
        p90Ms: r.p90Ms,
        p99Ms: r.p99Ms,
        requests: r.requests,
        bytesPerResponse: r.requests > 0 ? Math.round(r.bytesRead / r.requests) : 0,
        non2xx: r.non2xx,
        socketErrors: r.socketErrors,
        cpu,
        // The server's CPU time per request: steadier than requests/s when wrk or the machine is the one slowing.
        cpuUsPerRequest: cpu === null || r.rps <= 0 ? null : (cpu.server / r.rps) * 1e6,
      };
      runs.push(run);
      const errors = r.non2xx + r.socketErrors > 0 ? `  !! non-2xx ${r.non2xx}, socket errors ${r.socketErrors}` : '';
      console.log(
        `round ${round}${round > config.rounds ? '+' : `/${config.rounds}`}  ${target.name.padEnd(nameWidth)} ` +
          `${fmtInt(r.rps).padStart(8)} req/s  ` +
          `p50 ${fmt(r.p50Ms)} ms  p99 ${fmt(r.p99Ms)} ms  ~${fmtInt(run.bytesPerResponse)} B/resp` +
          (cpu === null
            ? ''
            : `  cpu: server ${fmt(cpu.server)} wrk ${fmt(cpu.wrk)} other ${fmt(cpu.other)}` +
              `  ${fmt(run.cpuUsPerRequest ?? Number.NaN, 1)} µs/req`) +
          errors,
      );
      if (isDisturbed(run)) disturbedRounds.add(round);
    }
    if (disturbedRounds.has(round)) console.log(`round ${round}: disturbed, set aside`);
  }
  const quietRounds = [...new Set(runs.map((r) => r.round))].filter((round) => !disturbedRounds.has(round));
  // Only quiet rounds count; if none was quiet, every round does (with a warning below).
  const countedRounds = new Set(quietRounds.length > 0 ? quietRounds : runs.map((r) => r.round));
  const counted = runs.filter((r) => countedRounds.has(r.round));

  // --- summary -------------------------------------------------------------------------------------------------------
  const summary = Object.fromEntries(
    targets.map(({ name }) => {
      const mine = counted.filter((r) => r.target === name);
      return [
        name,
        {
          medianRps: median(mine.map((r) => r.rps)),
          medianP99Ms: median(mine.map((r) => r.p99Ms)),
          minRps: Math.min(...mine.map((r) => r.rps)),
          maxRps: Math.max(...mine.map((r) => r.rps)),
          errors: mine.reduce((sum, r) => sum + r.non2xx + r.socketErrors, 0),
          medianServerCores: median(mine.flatMap((r) => (r.cpu === null ? [] : [r.cpu.server]))),
          medianCpuUsPerRequest: median(mine.flatMap((r) => (r.cpuUsPerRequest === null ? [] : [r.cpuUsPerRequest]))),
          maxOtherCores: Math.max(...mine.map((r) => r.cpu?.other ?? 0)),
        },
      ];
    }),
  );
  const htmldrop = summary.htmldrop;
  if (htmldrop === undefined) throw new Error('no htmldrop runs');
  // htmldrop's requests/s over each target's, within each round (the runs of a round are seconds apart), then the
  // median over the rounds, with the quartiles to show the spread.
  /**
   * Per target, the median over the rounds of `of(htmldrop's run, the target's run)` within each round, with the
   * quartiles; rounds where `of` gives null are skipped. `me`: whose runs are htmldrop's (the raw path by default,
   * or the content host).
   * @param {(mine: (typeof runs)[number], theirs: (typeof runs)[number]) => number | null} of
   * @param {string} [me]
   */
  const perRound = (of, me = 'htmldrop') =>
    Object.fromEntries(
      targets.map(({ name }) => {
        const values = [];
        for (const round of countedRounds) {
          const mine = counted.find((r) => r.round === round && r.target === me);
          const theirs = counted.find((r) => r.round === round && r.target === name);
          const value = mine === undefined || theirs === undefined ? null : of(mine, theirs);
          if (value !== null && Number.isFinite(value)) values.push(value);
        }
        return [name, { median: median(values), q1: quantile(values, 0.25), q3: quantile(values, 0.75), values }];
      }),
    );
  /** @type {(mine: (typeof runs)[number], theirs: (typeof runs)[number]) => number | null} */
  const rpsRatio = (mine, theirs) => (theirs.rps > 0 ? mine.rps / theirs.rps : null);
  // The same comparison in server CPU time per request: the target's over htmldrop's (below 1: htmldrop costs more).
  /** @type {(mine: (typeof runs)[number], theirs: (typeof runs)[number]) => number | null} */
  const cpuRatio = (mine, theirs) =>
    mine.cpuUsPerRequest === null || theirs.cpuUsPerRequest === null
      ? null
      : theirs.cpuUsPerRequest / mine.cpuUsPerRequest;
  const roundRatios = perRound(rpsRatio);
  const cpuRatios = perRound(cpuRatio);
  // The content host's requests/s over each target's (the same baselines, in the same rounds).
  const contentRoundRatios = CONTENT_HOST ? perRound(rpsRatio, CONTENT) : {};
  const contentCpuRatios = CONTENT_HOST ? perRound(cpuRatio, CONTENT) : {};
  /** @param {string} name */
  const ratioTo = (name) => roundRatios[name]?.median ?? null;
  /** @param {string} name */
  const contentRatioTo = (name) => contentRoundRatios[name]?.median ?? null;
  const ratios = {
    'htmldrop/node': ratioTo('node:http'),
    'htmldrop/node:http+tickfix': ratioTo(PINNED_NODE),
    'htmldrop/nginx': ratioTo('nginx'),
    'content/node': contentRatioTo('node:http'),
    'content/node:http+tickfix': contentRatioTo(PINNED_NODE),
    'content/nginx': contentRatioTo('nginx'),
    'content/htmldrop': contentRatioTo('htmldrop'),
  };
  const checks = {
    ratioVsNode: {
      target: TARGET_RATIO_NODE,
      value: ratios['htmldrop/node'],
      pass: (ratios['htmldrop/node'] ?? 0) >= TARGET_RATIO_NODE,
    },
    // The same target against the baseline that cannot land in V8's slow tick state (bench/README.md).
    ratioVsNodeTickfix: {
      target: TARGET_RATIO_NODE,
      value: ratios['htmldrop/node:http+tickfix'],
      pass: (ratios['htmldrop/node:http+tickfix'] ?? 0) >= TARGET_RATIO_NODE,
    },
    p99: { targetMs: TARGET_P99_MS, valueMs: htmldrop.medianP99Ms, pass: htmldrop.medianP99Ms < TARGET_P99_MS },
  };
  // The same targets for the content host: reported, not part of BENCH_STRICT (the raw path stays the headline).
  const contentSummary = summary[CONTENT];
  const contentChecks =
    contentSummary === undefined
      ? null
      : {
          ratioVsNode: {
            target: TARGET_RATIO_NODE,
            value: ratios['content/node'],
            pass: (ratios['content/node'] ?? 0) >= TARGET_RATIO_NODE,
          },
          ratioVsNodeTickfix: {
            target: TARGET_RATIO_NODE,
            value: ratios['content/node:http+tickfix'],
            pass: (ratios['content/node:http+tickfix'] ?? 0) >= TARGET_RATIO_NODE,
          },
          p99: {
            targetMs: TARGET_P99_MS,
            valueMs: contentSummary.medianP99Ms,
            pass: contentSummary.medianP99Ms < TARGET_P99_MS,
          },
        };

  const rows = [
    [
      'target',
      'req/s (median)',
      'min-max req/s',
      'p99 ms (median)',
      'server cores',
      'htmldrop/target',
      'quartiles',
      'cpu µs/req',
      'cpu ratio',
      'content/target',
      'quartiles',
      'cpu ratio',
    ],
  ];
  const names = ['htmldrop', CONTENT, 'node:http', PINNED_NODE, 'nginx', ...targets.map((t) => t.name)];
  for (const name of new Set(names)) {
    const s = summary[name];
    if (s === undefined) {
      rows.push([name, 'skipped', '', '', '', '', '', '', '', '', '', '']);
      continue;
    }
    const ratio = roundRatios[name];
    const contentRatio = contentRoundRatios[name];
    rows.push([
      name,
      fmtInt(s.medianRps),
      `${fmtInt(s.minRps)}-${fmtInt(s.maxRps)}`,
      fmt(s.medianP99Ms),
      fmt(s.medianServerCores),
      ratio === undefined ? '' : fmt(ratio.median),
      ratio === undefined ? '' : `${fmt(ratio.q1)}-${fmt(ratio.q3)}`,
      fmt(s.medianCpuUsPerRequest, 1),
      fmt(cpuRatios[name]?.median ?? Number.NaN),
      contentRatio === undefined ? '' : fmt(contentRatio.median),
      contentRatio === undefined ? '' : `${fmt(contentRatio.q1)}-${fmt(contentRatio.q3)}`,
      contentRatio === undefined ? '' : fmt(contentCpuRatios[name]?.median ?? Number.NaN),
    ]);
  }
  console.log(`\n${table(rows, [false, ...Array.from({ length: 11 }, () => true)])}`);
  console.log(
    'htmldrop/target: the median over the rounds of the ratio within each round; quartiles of those ratios\n' +
      "cpu µs/req: the server's CPU time per request; cpu ratio: the target's over htmldrop's, per round, median " +
      '(the same comparison in CPU cost, steadier when the load generator or the machine is what slows a run)\n' +
      `content/target, quartiles, cpu ratio: the same with the content host's runs (${CONTENT}: GET / with ` +
      "Host: <label>.localhost:<port>) in place of the raw path's\n",
  );
  console.log(
    `htmldrop/node:  ${fmt(ratios['htmldrop/node'] ?? Number.NaN)}` +
      (ratios['htmldrop/nginx'] === null
        ? '   htmldrop/nginx: - (nginx skipped)'
        : `   htmldrop/nginx: ${fmt(ratios['htmldrop/nginx'])}`),
  );
  console.log(`htmldrop/${PINNED_NODE}: ${fmt(ratios['htmldrop/node:http+tickfix'] ?? Number.NaN)}`);
  // Three digits in the verdicts: a ratio printed as 0.85 above may be 0.848 and fail.
  const verdict = (/** @type {{ pass: boolean, value: number | null }} */ check) =>
    `${check.pass ? 'PASS' : 'FAIL'} (${fmt(check.value ?? Number.NaN, 3)})`;
  console.log(`htmldrop >= ${TARGET_RATIO_NODE}x node:http: ${verdict(checks.ratioVsNode)}`);
  console.log(
    `htmldrop >= ${TARGET_RATIO_NODE}x ${PINNED_NODE} (strict: a baseline that cannot land in the slow state): ` +
      verdict(checks.ratioVsNodeTickfix),
  );
  console.log(`p99 < ${TARGET_P99_MS} ms at ${config.connections} connections: ${checks.p99.pass ? 'PASS' : 'FAIL'}`);
  if (contentChecks !== null) {
    console.log(
      `content host/node: ${fmt(ratios['content/node'] ?? Number.NaN)}   ` +
        `content host/${PINNED_NODE}: ${fmt(ratios['content/node:http+tickfix'] ?? Number.NaN)}   ` +
        `content host/raw path: ${fmt(ratios['content/htmldrop'] ?? Number.NaN)}` +
        (ratios['content/nginx'] === null ? '' : `   content host/nginx: ${fmt(ratios['content/nginx'])}`),
    );
    console.log(`content host >= ${TARGET_RATIO_NODE}x node:http: ${verdict(contentChecks.ratioVsNode)}`);
    console.log(`content host >= ${TARGET_RATIO_NODE}x ${PINNED_NODE}: ${verdict(contentChecks.ratioVsNodeTickfix)}`);
    console.log(
      `content host p99 < ${TARGET_P99_MS} ms at ${config.connections} connections: ` +
        `${contentChecks.p99.pass ? 'PASS' : 'FAIL'} (not part of BENCH_STRICT)`,
    );
  }
  const totalErrors = Object.values(summary).reduce((sum, s) => sum + s.errors, 0);
  if (totalErrors > 0)
    console.log(`WARNING: ${totalErrors} non-2xx responses or socket errors during the runs (see above)`);
  console.log(
    `rounds counted: ${countedRounds.size} (${quietRounds.length} quiet` +
      (disturbedRounds.size > 0
        ? `; ${disturbedRounds.size} disturbed, set aside: ${[...disturbedRounds].join(', ')}`
        : '') +
      ')',
  );
  if (quietRounds.length < config.rounds) {
    console.log(
      `WARNING: other processes used more than ${OTHER_LOAD_WARN_CORES} cores during runs of ` +
        `${disturbedRounds.size} rounds and only ${quietRounds.length} of ${config.rounds} rounds were quiet` +
        (quietRounds.length === 0 ? ' (every round counted)' : '') +
        ': numbers are disturbed; rerun on a quiet machine',
    );
  }
  const loadEnd = os.loadavg();

  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const resultsDir = path.join(BENCH_DIR, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `raw-${stamp}.json`);
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        timestamp: new Date().toISOString(),
        machine: { ...machine, loadavgEnd: loadEnd },
        config,
        contentHost: CONTENT_HOST,
        seeding: { drops: config.drops, seconds: seedSeconds, avgBodyBytes, serviceHeaders, contentHeaders },
        runs,
        summary,
        ratios,
        roundRatios,
        cpuRatios,
        contentRoundRatios,
        contentCpuRatios,
        disturbedRounds: [...disturbedRounds],
        countedRounds: [...countedRounds],
        checks,
        contentChecks,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`results: ${path.relative(ROOT, file)}`);
  return checks.ratioVsNode.pass && checks.ratioVsNodeTickfix.pass && checks.p99.pass;
}

let exitCode = 0;
try {
  const passed = await main();
  if (STRICT && !passed) exitCode = 1;
} catch (error) {
  if (interrupted()) await new Promise(() => undefined); // the signal handler cleans up and exits
  console.error(`bench:raw failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
