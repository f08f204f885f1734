#!/usr/bin/env node
/**
 * `npm run bench:start`: how fast the service starts and how much memory it holds, next to a bare node:http server
 * measured in the same run (node's own start-up, the floor).
 *
 * 1. An existing database: a data directory the service has migrated, with BENCH_DROPS drops in it.
 * 2. Cold start: spawn to the first 200 of `/healthz`, polled every 5 ms, BENCH_STARTS times each for htmldrop and the
 *    bare server, alternating; medians.
 * 3. Memory: htmldrop's resident set right after it answered, and after BENCH_IDLE_SECONDS with nothing to do.
 *
 * Targets (bench/README.md, "Start-up and memory"): cold start < 300 ms, idle RSS well under 120 MB.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  cleanup,
  freePort,
  installCleanupHandlers,
  intEnv,
  median,
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
  starts: intEnv('BENCH_STARTS', 7, 1),
  drops: intEnv('BENCH_DROPS', 200, 0),
  idleSeconds: intEnv('BENCH_IDLE_SECONDS', 5, 0),
};
const TARGET_START_MS = 300;

/** A bare node:http server: the floor every Node service starts from. */
const BARE = `require('node:http').createServer((q, s) => s.end('ok')).listen(+process.argv[1], '${HOST}')`;

const rssMb = (/** @type {number} */ pid) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

/** @param {string} dataDir @param {number} port */
const serviceEnv = (dataDir, port) => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  PORT: String(port),
  HOST,
  HTMLDROP_DATA_DIR: dataDir,
  HTMLDROP_LOG_LEVEL: 'warn',
  HTMLDROP_MAX_WRITES_PER_MINUTE: '1000000',
  HTMLDROP_MAX_WRITES_PER_DAY: '1000000',
});

/** Starts one target and times it to its first 200; returns the managed child and the time. */
async function startOnce(/** @type {'htmldrop' | 'bare'} */ target, /** @type {string} */ dataDir) {
  const port = await freePort();
  const started = performance.now();
  const service =
    target === 'htmldrop'
      ? spawnManaged('htmldrop', process.execPath, [path.join(ROOT, 'packages/server/dist/main.js')], {
          env: serviceEnv(dataDir, port),
        })
      : spawnManaged('bare', process.execPath, ['-e', BARE, String(port)], { env: serviceEnv(dataDir, port) });
  await waitForHttp(`http://${HOST}:${port}/healthz`, service, 60_000, 5);
  return { service, port, ms: performance.now() - started };
}

/** A migrated data directory holding `drops` small drops of one account. */
async function existingDatabase() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-start-'));
  registerTempDir(dataDir);
  const cli = path.join(ROOT, 'packages/server/dist/cli.js');
  const token = execFileSync(process.execPath, [cli, 'token', 'create', '--user', 'bench'], {
    env: serviceEnv(dataDir, 0),
  })
    .toString()
    .trim();
  const { service, port } = await startOnce('htmldrop', dataDir);
  for (let i = 0; i < config.drops; i++) {
    const html = `<!doctype html><title>r${i}</title><p>report ${i}</p>`;
    const response = await fetch(`http://${HOST}:${port}/api/drops`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: `r${i}`, html, metadata: { team: `t${i % 4}` } }),
    });
    if (response.status !== 201) throw new Error(`create answered ${response.status}: ${await response.text()}`);
  }
  await stopManaged(service, 10_000);
  return dataDir;
}

async function main() {
  installCleanupHandlers();
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-if-stale.mjs')], { stdio: 'inherit' });
  console.log(
    `bench:start: ${os.cpus().length} CPUs, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, Node ${process.version}; ${config.starts} starts each on a database of ${config.drops} drops`,
  );
  const dataDir = await existingDatabase();
  /** @type {Record<'htmldrop' | 'bare', number[]>} */
  const times = { htmldrop: [], bare: [] };
  const rss = { started: /** @type {number[]} */ ([]), idle: Number.NaN };
  for (let i = 0; i < config.starts; i++) {
    for (const target of /** @type {const} */ (['bare', 'htmldrop'])) {
      const { service, ms } = await startOnce(target, dataDir);
      times[target].push(ms);
      if (target === 'htmldrop') {
        rss.started.push(rssMb(/** @type {number} */ (service.child.pid)));
        if (i === config.starts - 1 && config.idleSeconds > 0) {
          await sleep(config.idleSeconds * 1000);
          rss.idle = rssMb(/** @type {number} */ (service.child.pid));
        }
      }
      await stopManaged(service, 10_000);
    }
  }
  const htmldrop = median(times.htmldrop);
  const bare = median(times.bare);
  console.log(
    `cold start (median of ${config.starts}): htmldrop ${htmldrop.toFixed(0)} ms, bare node:http ${bare.toFixed(0)} ms`,
  );
  console.log(
    `htmldrop RSS: ${median(rss.started).toFixed(0)} MB at its first answer` +
      (Number.isNaN(rss.idle) ? '' : `, ${rss.idle.toFixed(0)} MB after ${config.idleSeconds} s idle`),
  );
  const pass = htmldrop < TARGET_START_MS;
  console.log(`cold start < ${TARGET_START_MS} ms: ${pass ? 'PASS' : 'FAIL'} (${htmldrop.toFixed(0)} ms)`);
  const file = path.join(BENCH_DIR, 'results', `start-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  execFileSync('mkdir', ['-p', path.dirname(file)]);
  writeFileSync(file, `${JSON.stringify({ config, times, rss, loadavg: os.loadavg() }, null, 2)}\n`);
  console.log(`results: ${path.relative(ROOT, file)}`);
  return pass;
}

let exitCode = 0;
try {
  const pass = await main();
  if (process.env.BENCH_STRICT === '1' && !pass) exitCode = 1;
} catch (error) {
  console.error(`bench:start failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
