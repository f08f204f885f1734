/**
 * Helpers for bench/raw.mjs: child processes that are always cleaned up, HTTP without compression, wrk runs and
 * their parsing, statistics.
 */
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

/** @typedef {import('node:child_process').ChildProcess} ChildProcess */

/**
 * @typedef {object} Managed
 * @property {string} name
 * @property {ChildProcess} child
 * @property {() => string} output last ~64 KB of stdout + stderr
 * @property {Promise<{ code: number | null, signal: string | null }>} exited
 */

/** @type {Set<Managed>} */
const children = new Set();
/** @type {Set<string>} */
const tempDirs = new Set();
let cleaning = false;

/** @param {ChildProcess} child */
const running = (child) => child.exitCode === null && child.signalCode === null;

/**
 * Spawns a child process that `cleanup()` (and process exit, SIGINT, SIGTERM) will stop.
 * @param {string} name
 * @param {string} command
 * @param {string[]} args
 * @param {import('node:child_process').SpawnOptions} [options]
 * @returns {Managed}
 */
export function spawnManaged(name, command, args, options = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  let buffer = '';
  /** @param {Buffer} chunk */
  const keep = (chunk) => {
    buffer += chunk.toString('utf8');
    if (buffer.length > 65_536) buffer = buffer.slice(-65_536);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  /** @type {Promise<{ code: number | null, signal: string | null }>} */
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => {
      keep(Buffer.from(`spawn error: ${error.message}\n`));
      resolve({ code: -1, signal: null });
    });
  });
  /** @type {Managed} */
  const managed = { name, child, output: () => buffer, exited };
  children.add(managed);
  exited.then(() => children.delete(managed));
  return managed;
}

/**
 * Stops one child: SIGTERM, then SIGKILL after `graceMs`.
 * @param {Managed} managed
 * @param {number} [graceMs]
 */
export async function stopManaged(managed, graceMs = 3000) {
  if (running(managed.child)) {
    const timer = setTimeout(() => managed.child.kill('SIGKILL'), graceMs);
    managed.child.kill('SIGTERM');
    await managed.exited;
    clearTimeout(timer);
  }
  children.delete(managed);
}

/** @param {string} dir a temporary directory removed by `cleanup()` and on exit */
export function registerTempDir(dir) {
  tempDirs.add(dir);
}

/** Whether SIGINT/SIGTERM started the cleanup (errors from killed children are expected then). */
export const interrupted = () => cleaning;

/** Stops every child still running and removes the temporary directories. Safe to call more than once. */
export async function cleanup() {
  await Promise.all([...children].map((managed) => stopManaged(managed)));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Installs exit/SIGINT/SIGTERM handlers so children and temp dirs never outlive the benchmark. */
export function installCleanupHandlers() {
  process.on('exit', () => {
    // Last resort, synchronous: SIGTERM (not SIGKILL) so nginx's master still takes its worker down.
    for (const { child } of children) if (running(child)) child.kill('SIGTERM');
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });
  for (const [signal, code] of /** @type {const} */ ([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ])) {
    process.on(signal, () => {
      if (cleaning) return;
      cleaning = true;
      console.error(`\n${signal}: stopping child processes and removing temp dirs`);
      cleanup().finally(() => process.exit(code));
    });
  }
}

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @returns {Promise<number>} a port that was free a moment ago on 127.0.0.1 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/**
 * @typedef {object} HttpResult
 * @property {number} status
 * @property {import('node:http').IncomingHttpHeaders} headers
 * @property {string[]} rawHeaders names and values as received, in order
 * @property {Buffer} body
 */

/**
 * A plain GET with no Accept-Encoding, so the body is exactly what wrk receives.
 * @param {string} url
 * @param {http.Agent} [agent]
 * @param {string} [host] a Host header other than the URL's (a content host, while connecting to the URL's address)
 * @returns {Promise<HttpResult>}
 */
export function httpGet(url, agent, host) {
  return new Promise((resolve, reject) => {
    const headers = host === undefined ? undefined : { host };
    const req = http.get(url, { agent, headers, timeout: 10_000 }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          body: Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: GET ${url}`)));
    req.on('error', reject);
  });
}

/**
 * Polls `url` until it answers 200; fails early if the child exits.
 * @param {string} url
 * @param {Managed} managed
 * @param {number} [timeoutMs]
 * @param {number} [pollMs] how often to ask (the resolution of a start-up time measured with it)
 */
export async function waitForHttp(url, managed, timeoutMs = 30_000, pollMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!running(managed.child)) {
      throw new Error(`${managed.name} exited before answering ${url}:\n${managed.output()}`);
    }
    try {
      const res = await httpGet(url);
      if (res.status === 200) return;
      last = `status ${res.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await sleep(pollMs);
  }
  throw new Error(
    `${managed.name} did not answer 200 at ${url} within ${timeoutMs} ms (${last}):\n${managed.output()}`,
  );
}

/**
 * Runs `items` through `work` with at most `limit` in flight; results keep the input order.
 * @template T, R
 * @param {readonly T[]} items
 * @param {number} limit
 * @param {(item: T, index: number) => Promise<R>} work
 * @returns {Promise<R[]>}
 */
export async function mapLimit(items, limit, work) {
  /** @type {R[]} */
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(/** @type {T} */ (items[index]), index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Like `command -v name`: whether an executable of that name is on PATH.
 * @param {string} name
 */
export function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(path.join(dir, name), constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

/**
 * First line a version flag prints (on stdout or stderr), or 'unknown'.
 * @param {string} command
 * @param {string} flag
 */
export function versionOf(command, flag) {
  const res = spawnSync(command, [flag], { encoding: 'utf8' });
  const text = `${res.stdout ?? ''}${res.stderr ?? ''}`.trim();
  return text.split('\n')[0] || 'unknown';
}

/**
 * @typedef {object} WrkResult
 * @property {number} rps requests/s
 * @property {number} p50Ms
 * @property {number} p90Ms
 * @property {number} p99Ms
 * @property {number} requests
 * @property {number} bytesRead
 * @property {number} non2xx Non-2xx or 3xx responses
 * @property {number} socketErrors connect + read + write + timeout
 * @property {string} output wrk's full output
 */

const TIME_UNITS_MS = /** @type {Record<string, number>} */ ({ us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 });
const BYTE_UNITS = /** @type {Record<string, number>} */ ({
  B: 1,
  KB: 1024,
  MB: 1024 ** 2,
  GB: 1024 ** 3,
  TB: 1024 ** 4,
});

/**
 * Parses `wrk --latency` output.
 * @param {string} output
 * @returns {WrkResult}
 */
export function parseWrk(output) {
  const rps = output.match(/^Requests\/sec:\s+([\d.]+)/m);
  if (rps?.[1] === undefined) throw new Error(`cannot find Requests/sec in wrk output:\n${output}`);
  /** @param {string} pct */
  const latency = (pct) => {
    const m = output.match(new RegExp(`^\\s+${pct}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, 'm'));
    if (m?.[1] === undefined || m[2] === undefined)
      throw new Error(`cannot find ${pct}% latency in wrk output:\n${output}`);
    return Number(m[1]) * (TIME_UNITS_MS[m[2]] ?? Number.NaN);
  };
  const total = output.match(/(\d+) requests in [\d.]+\w+, ([\d.]+)(B|KB|MB|GB|TB) read/);
  const non2xx = output.match(/Non-2xx or 3xx responses: (\d+)/);
  const sock = output.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  return {
    rps: Number(rps[1]),
    p50Ms: latency('50'),
    p90Ms: latency('90'),
    p99Ms: latency('99'),
    requests: Number(total?.[1] ?? 0),
    bytesRead: Math.round(Number(total?.[2] ?? 0) * (BYTE_UNITS[total?.[3] ?? 'B'] ?? 1)),
    non2xx: Number(non2xx?.[1] ?? 0),
    socketErrors: sock === null ? 0 : sock.slice(1).reduce((sum, n) => sum + Number(n), 0),
    output,
  };
}

/**
 * Runs wrk once against `url` with the Lua `script` and returns the parsed result.
 * @param {{ url: string, script: string, threads: number, connections: number, seconds: number }} run
 * @returns {Promise<WrkResult>}
 */
export async function runWrk({ url, script, threads, connections, seconds }) {
  const args = ['-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--latency', '-s', script, url];
  const managed = spawnManaged('wrk', 'wrk', args);
  const timer = setTimeout(() => managed.child.kill('SIGKILL'), (seconds + 30) * 1000);
  const { code, signal } = await managed.exited;
  clearTimeout(timer);
  if (code !== 0)
    throw new Error(`wrk ${args.join(' ')} failed (code ${code}, signal ${signal}):\n${managed.output()}`);
  return parseWrk(managed.output());
}

/**
 * The `q` quantile (0..1) of `values`, interpolating linearly between the closest ranks; NaN when empty.
 * @param {readonly number[]} values
 * @param {number} q
 */
export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const at = (sorted.length - 1) * q;
  const below = sorted[Math.floor(at)] ?? Number.NaN;
  const above = sorted[Math.ceil(at)] ?? Number.NaN;
  return below + (above - below) * (at - Math.floor(at));
}

/**
 * @param {readonly number[]} values
 */
export const median = (values) => quantile(values, 0.5);

/**
 * Integer from the environment, or `fallback`; exits with a message when malformed.
 * @param {string} name
 * @param {number} fallback
 * @param {number} [min]
 */
export function intEnv(name, fallback, min = 0) {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) {
    console.error(`${name} must be an integer >= ${min}, got "${raw}"`);
    process.exit(2);
  }
  return Number(raw);
}

// ---------------------------------------------------------------------------------------------------------------------
// CPU accounting from /proc (Linux), to see how much of the two cores went to the server, to wrk, and to anything else
// running on the machine at the same time. Everything is in clock ticks; `null` where /proc is not available.

/** Clock ticks per second for /proc times (USER_HZ, 100 on Linux). */
export const TICKS_PER_SECOND = 100;

/** @returns {number | null} busy ticks of all CPUs together (total minus idle and iowait) */
export function machineBusyTicks() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = fields.reduce((sum, n) => sum + n, 0);
    return total - (fields[3] ?? 0) - (fields[4] ?? 0);
  } catch {
    return null;
  }
}

/**
 * utime + stime (+ cutime + cstime when `withReaped`) of one process, from /proc/<pid>/stat.
 * @param {number | string} pid
 * @param {boolean} [withReaped]
 * @returns {number | null}
 */
function processTicks(pid, withReaped = false) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
    const own = Number(fields[11]) + Number(fields[12]);
    return withReaped ? own + Number(fields[13]) + Number(fields[14]) : own;
  } catch {
    return null;
  }
}

/**
 * CPU ticks of a process and all its descendants (e.g. nginx master + worker), those that ended and were waited for
 * included: each process's own and its reaped children's, so the sum never goes back when a child exits (a
 * screenshot browser's renderer, for one).
 * @param {number} pid
 * @returns {number | null}
 */
export function treeTicks(pid) {
  const own = processTicks(pid, true);
  if (own === null) return null;
  let total = own;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      for (const kid of kids === '' ? [] : kids.split(/\s+/)) total += treeTicks(Number(kid)) ?? 0;
    }
  } catch {
    // children listing unavailable: the process itself only
  }
  return total;
}

/** @returns {number | null} this process plus its reaped children (wrk runs end up here once they exit) */
export function selfAndReapedTicks() {
  return processTicks('self', true);
}

/**
 * The environment of a benchmarked service: hermetic (nothing from the caller's HTMLDROP_* settings, e.g. a database
 * URL, leaks in), production mode, quiet logs, and write limits and the drop quota out of the way; on `host`:`port`
 * with `dataDir`, PostgreSQL at `databaseUrl` when given, and each drop on its own origin `<label>.localhost:<port>`
 * when `contentOrigin` (the loopback default, set explicitly so a target never depends on how the default is derived),
 * and previews' screenshots made by the Chromium at `chromium` when given.
 *
 * Without NODE_EXTRA_CA_CERTS, as bench:start starts its processes: Node reads and parses that bundle before it runs
 * anything, about 55 ms on the 2-core machine whose environment sets it (`node -e 0`: 98 against 26 ms), a cost of
 * the machine's setup that would be counted as the service's start-up (bench/README.md, "The write path").
 * @param {{ host: string, port: number, dataDir: string, databaseUrl?: string, contentOrigin?: boolean,
 *   chromium?: string }} options
 * @returns {NodeJS.ProcessEnv}
 */
export function serviceEnv({ host, port, dataDir, databaseUrl, contentOrigin = false, chromium }) {
  /** @type {NodeJS.ProcessEnv} */
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('HTMLDROP_') && key !== 'NODE_EXTRA_CA_CERTS') env[key] = value;
  }
  return {
    ...env,
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: host,
    HTMLDROP_BASE_URL: `http://${host}:${port}`,
    ...(contentOrigin ? { HTMLDROP_CONTENT_ORIGIN: `http://{id}.localhost:${port}` } : {}),
    HTMLDROP_DATA_DIR: dataDir,
    HTMLDROP_LOG_LEVEL: 'warn',
    HTMLDROP_MAX_WRITES_PER_MINUTE: '10000000',
    HTMLDROP_MAX_WRITES_PER_DAY: '10000000',
    HTMLDROP_MAX_DROPS_PER_ACCOUNT: '10000000',
    ...(databaseUrl === undefined ? {} : { HTMLDROP_DATABASE_URL: databaseUrl }),
    ...(chromium === undefined ? {} : { HTMLDROP_CHROMIUM: chromium }),
  };
}
