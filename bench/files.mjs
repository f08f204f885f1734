#!/usr/bin/env node
/**
 * `npm run bench:files`: requests/s and p99 latency of a drop's file (a 50 KB PNG) on the drop's own origin
 * (`GET /img/chart.png` with `Host: <label>.localhost:<port>`), and on the raw folder (`/p/<slug>/raw/v/1/img/chart.png`),
 * against a bare node:http server answering the same bytes with the same Content-Type, measured in the same run with
 * wrk, rounds interleaved. See bench/README.md ("Files") for the knobs and how to read the output.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASELINE, fileScripts, HOST, startFileService, writeBaselineFiles } from './file-drops.mjs';
import {
  cleanup,
  freePort,
  httpGet,
  installCleanupHandlers,
  intEnv,
  interrupted,
  machineBusyTicks,
  median,
  onPath,
  quantile,
  registerTempDir,
  runWrk,
  selfAndReapedTicks,
  spawnManaged,
  TICKS_PER_SECOND,
  treeTicks,
  waitForHttp,
} from './lib.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');

const config = {
  drops: intEnv('BENCH_DROPS', 300, 1),
  fileBytes: intEnv('BENCH_FILE_BYTES', 51_200, 64),
  seconds: intEnv('BENCH_DURATION', 4, 1),
  warmupSeconds: intEnv('BENCH_WARMUP', 1, 0),
  firstWarmupSeconds: intEnv('BENCH_FIRST_WARMUP', 3, 0),
  connections: intEnv('BENCH_CONNECTIONS', 50, 1),
  threads: intEnv('BENCH_THREADS', 1, 1),
  rounds: intEnv('BENCH_ROUNDS', 7, 1),
  extraRounds: intEnv('BENCH_EXTRA_ROUNDS', 7, 0),
};
const STRICT = ['1', 'true', 'yes'].includes((process.env.BENCH_STRICT ?? '').trim().toLowerCase());
/** The headline: htmldrop's content host against the bare server (the brief of decision 0033). */
const TARGET_RATIO = 0.9;
const CONTENT = 'content host /img/chart.png';
const RAW = 'raw folder /p/…/raw/v/1/img/chart.png';
const NODE = 'node:http';
/** Other processes' CPU above which a run is disturbed and its round set aside. */
const OTHER_LOAD_WARN_CORES = 0.2;

/** @param {number | undefined} pid */
function cpuSnapshot(pid) {
  return { t: performance.now(), busy: machineBusyTicks(), self: selfAndReapedTicks(), server: treeTicks(pid ?? 0) };
}

/**
 * Since `before`: the cores used by everything but the server and wrk (the machine's other load), and the server's
 * CPU seconds; null without /proc.
 * @param {ReturnType<typeof cpuSnapshot>} before
 * @param {number | undefined} pid
 */
function cpuSince(before, pid) {
  const after = cpuSnapshot(pid);
  if ([before.busy, after.busy, before.self, after.self, before.server, after.server].includes(null)) return null;
  const ticks = ((after.t - before.t) / 1000) * TICKS_PER_SECOND;
  const used = (Number(after.busy) - Number(before.busy)) / ticks;
  const serverTicks = Number(after.server) - Number(before.server);
  const wrk = (Number(after.self) - Number(before.self)) / ticks;
  return { other: Math.max(0, used - serverTicks / ticks - wrk), serverSeconds: serverTicks / TICKS_PER_SECOND };
}

/** @param {string} tmp @param {Array<{ slug: string, bytes: Buffer }>} drops */
async function startBaseline(tmp, drops) {
  const dir = writeBaselineFiles(tmp, drops);
  const port = await freePort();
  const managed = spawnManaged(NODE, process.execPath, ['-e', BASELINE, dir, String(port)]);
  const url = `http://${HOST}:${port}`;
  await waitForHttp(`${url}/f/${drops[0]?.slug}`, managed);
  for (const { slug, bytes } of drops.slice(0, 20)) {
    if (!(await httpGet(`${url}/f/${slug}`)).body.equals(bytes)) throw new Error(`baseline /f/${slug}: other bytes`);
  }
  return { url, pid: managed.child.pid };
}

/** @param {number} n @param {number} [digits] */
const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

async function main() {
  if (!onPath('wrk')) {
    console.error('bench:files needs wrk (https://github.com/wg/wrk) on PATH. On Debian/Ubuntu: apt-get install wrk');
    process.exit(1);
  }
  installCleanupHandlers();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-files-'));
  registerTempDir(tmp);
  console.log(
    `bench:files  ${os.cpus().length} CPU, node ${process.version}; ${config.drops} drops with a ${config.fileBytes} B ` +
      `PNG; wrk -t${config.threads} -c${config.connections} -d${config.seconds}s, rounds=${config.rounds}`,
  );
  const service = await startFileService(tmp, config);
  const baseline = await startBaseline(tmp, service.drops);
  console.log('every file answers its bytes on both surfaces and on the baseline');
  const lua = fileScripts(tmp, service.drops);
  const scripts = { [CONTENT]: lua.content, [RAW]: lua.raw, [NODE]: lua.node };
  const targets = [
    { name: CONTENT, url: service.baseUrl, pid: service.pid },
    { name: RAW, url: service.baseUrl, pid: service.pid },
    { name: NODE, url: baseline.url, pid: baseline.pid },
  ];
  const options = (/** @type {{ name: string, url: string }} */ target) => ({
    url: `${target.url}/`,
    script: scripts[target.name],
    threads: config.threads,
    connections: config.connections,
  });
  for (const target of targets) await runWrk({ ...options(target), seconds: config.firstWarmupSeconds });

  /** @type {Array<{ round: number, target: string, rps: number, p99Ms: number, errors: number, other: number | null, cpuUsPerRequest: number | null }>} */
  const runs = [];
  /** @type {Map<number, Record<string, number>>} */
  const rounds = new Map();
  /** @type {Map<number, Record<string, number>>} the server's CPU µs per request, by target, in each counted round */
  const cpuRounds = new Map();
  let quiet = 0;
  for (let round = 1; quiet < config.rounds && round <= config.rounds + config.extraRounds; round++) {
    const shift = (round - 1) % targets.length;
    /** @type {Record<string, number>} */
    const rps = {};
    /** @type {Record<string, number>} */
    const cpuUs = {};
    let disturbed = false;
    for (const target of [...targets.slice(shift), ...targets.slice(0, shift)]) {
      if (config.warmupSeconds > 0) await runWrk({ ...options(target), seconds: config.warmupSeconds });
      const before = cpuSnapshot(target.pid);
      const r = await runWrk({ ...options(target), seconds: config.seconds });
      const cpu = cpuSince(before, target.pid);
      const other = cpu?.other ?? null;
      // The server's CPU time per request: steadier than req/s when wrk or the machine is what slows a run.
      const cpuUsPerRequest = cpu === null || r.requests === 0 ? null : (cpu.serverSeconds * 1e6) / r.requests;
      disturbed ||= (other ?? 0) > OTHER_LOAD_WARN_CORES;
      rps[target.name] = r.rps;
      cpuUs[target.name] = cpuUsPerRequest ?? Number.NaN;
      const errors = r.non2xx + r.socketErrors;
      runs.push({ round, target: target.name, rps: r.rps, p99Ms: r.p99Ms, errors, other, cpuUsPerRequest });
      console.log(
        `round ${round}  ${target.name.padEnd(38)} ${Math.round(r.rps).toLocaleString('en-US').padStart(8)} req/s  ` +
          `p99 ${fmt(r.p99Ms)} ms  cpu ${fmt(cpuUsPerRequest ?? Number.NaN, 1)} µs/req${errors > 0 ? `  ${errors} errors` : ''}  other cores ${fmt(other ?? Number.NaN)}`,
      );
    }
    if (disturbed) console.log(`round ${round}: disturbed, set aside`);
    else {
      quiet++;
      rounds.set(round, rps);
      cpuRounds.set(round, cpuUs);
    }
  }
  if (rounds.size === 0) {
    console.log('WARNING: no quiet round; every round counted');
    for (const run of runs) {
      rounds.set(run.round, { ...rounds.get(run.round), [run.target]: run.rps });
      cpuRounds.set(run.round, { ...cpuRounds.get(run.round), [run.target]: run.cpuUsPerRequest ?? Number.NaN });
    }
  }
  const ratios = (/** @type {string} */ name) =>
    [...rounds.values()].map((r) => (r[name] ?? 0) / (r[NODE] ?? Number.NaN)).filter(Number.isFinite);
  const p99 = (/** @type {string} */ name) => median(runs.filter((r) => r.target === name).map((r) => r.p99Ms));
  const rpsOf = (/** @type {string} */ name) => median([...rounds.values()].map((r) => r[name] ?? 0));
  // node:http's CPU per request over the target's, per round: above 1 when the target spends less.
  const cpuRatio = (/** @type {string} */ name) =>
    median(
      [...cpuRounds.values()].map((r) => (r[NODE] ?? Number.NaN) / (r[name] ?? Number.NaN)).filter(Number.isFinite),
    );
  const cpuOf = (/** @type {string} */ name) =>
    median([...cpuRounds.values()].map((r) => r[name] ?? Number.NaN).filter(Number.isFinite));
  const summary = Object.fromEntries(
    targets.map(({ name }) => [
      name,
      {
        medianRps: rpsOf(name),
        medianP99Ms: p99(name),
        ratio: name === NODE ? 1 : median(ratios(name)),
        q1: name === NODE ? 1 : quantile(ratios(name), 0.25),
        q3: name === NODE ? 1 : quantile(ratios(name), 0.75),
        cpuUsPerRequest: cpuOf(name),
        cpuRatio: name === NODE ? 1 : cpuRatio(name),
      },
    ]),
  );
  console.log('');
  for (const [name, s] of Object.entries(summary)) {
    console.log(
      `${name.padEnd(38)} ${Math.round(s.medianRps).toLocaleString('en-US').padStart(8)} req/s  p99 ${fmt(s.medianP99Ms)} ms` +
        `  vs node:http ${fmt(s.ratio)} (quartiles ${fmt(s.q1)}-${fmt(s.q3)})` +
        `  cpu ${fmt(s.cpuUsPerRequest, 1)} µs/req, node:http's over it ${fmt(s.cpuRatio)}`,
    );
  }
  const pass = (summary[CONTENT]?.ratio ?? 0) >= TARGET_RATIO;
  console.log(
    `content host >= ${TARGET_RATIO}x node:http: ${pass ? 'PASS' : 'FAIL'} (${fmt(summary[CONTENT]?.ratio ?? Number.NaN, 3)}); rounds counted: ${rounds.size}`,
  );
  const resultsDir = path.join(BENCH_DIR, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `files-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ timestamp: new Date().toISOString(), config, runs, summary, pass }, null, 2)}\n`,
  );
  console.log(`results: ${path.relative(ROOT, file)}`);
  return pass;
}

let exitCode = 0;
try {
  if (!(await main()) && STRICT) exitCode = 1;
} catch (error) {
  if (interrupted()) await new Promise(() => undefined);
  console.error(`bench:files failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
