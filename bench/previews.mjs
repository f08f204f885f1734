#!/usr/bin/env node
/**
 * `npm run bench:previews`: what the screenshot browser costs (docs/api.md, "Previews and embeds";
 * docs/decisions/0038-previews-and-embeds.md). The built service runs with HTMLDROP_CHROMIUM (BENCH_CHROMIUM,
 * default /usr/bin/chromium):
 *
 * 1. RSS of the service before any preview is asked for: no browser process may exist then.
 * 2. BENCH_PREVIEW_DROPS creates of a 20 KB report; for each, the time from its 201 to its stored screenshot
 *    (`X-Preview: screenshot`, polled every 50 ms), and how long the 201 itself took.
 * 3. RSS with the browser idle (the service, and the service plus its browser's processes: resident set and PSS).
 * 4. After the browser's idle time (30 s, BENCH_PREVIEW_IDLE_WAIT seconds of waiting): no browser process again.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
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
const CHROMIUM = process.env.BENCH_CHROMIUM ?? '/usr/bin/chromium';
const config = {
  drops: intEnv('BENCH_PREVIEW_DROPS', 5, 1),
  idleWaitSeconds: intEnv('BENCH_PREVIEW_IDLE_WAIT', 35, 0),
};

/** A process's resident set and proportional set size, in MB. */
function memoryOf(/** @type {number} */ pid) {
  try {
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    const pss = Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) / 1024;
    return { rss, pss };
  } catch {
    return { rss: 0, pss: 0 };
  }
}

/** Every descendant of `pid` (through /proc/<pid>/task/<tid>/children). */
function descendants(/** @type {number} */ pid) {
  /** @type {number[]} */
  const found = [];
  const pending = [pid];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${next}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${next}/task/${task}/children`, 'utf8');
      } catch {}
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        found.push(child);
        pending.push(child);
      }
    }
  }
  return found;
}

/** The service's memory, and with its browser's processes. */
function treeMemory(/** @type {number} */ pid) {
  const own = memoryOf(pid);
  const browser = descendants(pid).filter((child) => {
    try {
      return readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('chrom');
    } catch {
      return false;
    }
  });
  const sum = browser.map(memoryOf).reduce((a, b) => ({ rss: a.rss + b.rss, pss: a.pss + b.pss }), { rss: 0, pss: 0 });
  return { service: own, browserProcesses: browser.length, browser: sum };
}

const report = (/** @type {number} */ i) =>
  `<!doctype html><html><head><title>Report ${i}</title><style>body{font:16px sans-serif;margin:40px}td{padding:4px 8px}</style></head><body><h1>Report ${i}</h1>${'<p>The quarter closed with steady growth in every region, and the details follow below.</p>'.repeat(60)}<table>${'<tr><td>North</td><td>12</td><td>ok</td></tr>'.repeat(80)}</table></body></html>`;

async function main() {
  installCleanupHandlers();
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (BENCH_CHROMIUM)`);
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-if-stale.mjs')], { stdio: 'inherit' });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-previews-'));
  registerTempDir(dataDir);
  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    HOST,
    HTMLDROP_DATA_DIR: dataDir,
    HTMLDROP_LOG_LEVEL: 'warn',
    HTMLDROP_CHROMIUM: CHROMIUM,
  };
  const cli = path.join(ROOT, 'packages/server/dist/cli.js');
  const token = execFileSync(process.execPath, [cli, 'token', 'create', '--user', 'bench'], { env }).toString().trim();
  const service = spawnManaged('htmldrop', process.execPath, [path.join(ROOT, 'packages/server/dist/main.js')], {
    env,
  });
  const base = `http://${HOST}:${port}`;
  try {
    await waitForHttp(`${base}/healthz`, service, 60_000, 20);
    const pid = /** @type {number} */ (service.child.pid);
    await sleep(1000);
    const before = treeMemory(pid);
    /** @type {number[]} */
    const createMs = [];
    /** @type {number[]} */
    const readyMs = [];
    for (let i = 0; i < config.drops; i++) {
      const started = performance.now();
      const created = await fetch(`${base}/api/drops`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: `Report ${i}`, html: report(i) }),
      });
      if (created.status !== 201) throw new Error(`create answered ${created.status}`);
      createMs.push(performance.now() - started);
      const { slug } = /** @type {{ slug: string }} */ (await created.json());
      for (;;) {
        const preview = await fetch(`${base}/p/${slug}/preview.png`);
        await preview.arrayBuffer();
        if (preview.headers.get('x-preview') === 'screenshot') break;
        if (performance.now() - started > 30_000) throw new Error(`no screenshot of ${slug} after 30 s`);
        await sleep(50);
      }
      readyMs.push(performance.now() - started);
    }
    await sleep(1000);
    const idle = treeMemory(pid);
    let after;
    if (config.idleWaitSeconds > 0) {
      await sleep(config.idleWaitSeconds * 1000);
      after = treeMemory(pid);
    }
    const mb = (/** @type {number} */ n) => `${n.toFixed(0)} MB`;
    console.log(
      `bench:previews: ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(2)}, Node ${process.version}`,
    );
    console.log(
      `before any preview: service RSS ${mb(before.service.rss)}, browser processes ${before.browserProcesses}`,
    );
    console.log(
      `create (201) median ${median(createMs).toFixed(1)} ms; 201 to stored screenshot median ${median(readyMs).toFixed(0)} ms (first, with the browser's start: ${readyMs[0]?.toFixed(0)} ms)`,
    );
    console.log(
      `browser idle: service RSS ${mb(idle.service.rss)}; ${idle.browserProcesses} browser processes, RSS ${mb(idle.browser.rss)} (PSS ${mb(idle.browser.pss)}); service and browser PSS ${mb(idle.service.pss + idle.browser.pss)}`,
    );
    if (after !== undefined) {
      console.log(
        `after ${config.idleWaitSeconds} s without work: service RSS ${mb(after.service.rss)}, browser processes ${after.browserProcesses}`,
      );
    }
  } finally {
    await stopManaged(service, 10_000);
  }
}

let exitCode = 0;
try {
  await main();
} catch (error) {
  console.error(`bench:previews failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
