#!/usr/bin/env node
/**
 * `npm run bench:instructions`: the instructions a drop's file (a 50 KB PNG on the drop's own origin) costs per
 * request, counted by valgrind's callgrind, against the bare node:http server of `bench:files` answering the same
 * bytes. Counts are the same from run to run whatever else the machine does, where requests/s on our shared 2-core
 * machines move by more than the 0.9x target's margin (decision 0046; bench/README.md, "Files").
 *
 * Each server runs under callgrind with counting off. The service is filled first without valgrind and then started
 * again under it on the same data. wrk warms the server up until V8 has compiled the hot code. Counting goes on for a
 * second wrk run and is dumped after it, so the count is of those requests alone. The main thread (JavaScript,
 * node:http, libuv) is reported apart from V8's helper threads (garbage collection, compilation). Kernel time, the
 * `writev` of the bytes, is the same for both and not counted.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BASELINE, fileScripts, HOST, ROOT, SERVER_MAIN, startFileService, writeBaselineFiles } from './file-drops.mjs';
import {
  cleanup,
  freePort,
  installCleanupHandlers,
  intEnv,
  interrupted,
  onPath,
  registerTempDir,
  runWrk,
  spawnManaged,
  stopManaged,
  waitForHttp,
} from './lib.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const config = {
  drops: intEnv('BENCH_DROPS', 100, 1),
  fileBytes: intEnv('BENCH_FILE_BYTES', 51_200, 64),
  warmupSeconds: intEnv('BENCH_CG_WARMUP', 40, 1),
  seconds: intEnv('BENCH_CG_SECONDS', 15, 1),
  connections: intEnv('BENCH_CONNECTIONS', 10, 1),
};
/** Main-thread instructions of the bare server over the service's at which the file's target (0.9x) is met. */
const TARGET_RATIO = 0.9;

/**
 * valgrind and callgrind_control meet through files named after the user and the host, read from the environment
 * (`…-by-???-on-???` when it lacks them; the service's HOST, its listening address, counts as the host name too), so
 * both run with the same environment.
 */
const VGDB_NAMES = { USER: os.userInfo().username, LOGNAME: os.userInfo().username, HOSTNAME: os.hostname() };

/**
 * Runs `args` (a node command line) under callgrind, warms it up with `script`, counts one wrk run, and returns the
 * instructions per request of its main thread and of its other threads.
 * @param {{ name: string, args: string[], env?: NodeJS.ProcessEnv, readyUrl: string, url: string, script: string, tmp: string }} target
 */
async function count({ name, args, env, readyUrl, url, script, tmp }) {
  const out = path.join(tmp, `callgrind-${name.replace(/[^a-z]+/gi, '-')}`);
  mkdirSync(out);
  const valgrindEnv = { ...(env ?? process.env), ...VGDB_NAMES };
  const managed = spawnManaged(
    `${name} under callgrind`,
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--separate-threads=yes',
      `--callgrind-out-file=${path.join(out, 'cg.%p')}`,
      process.execPath,
      ...args,
    ],
    { cwd: ROOT, env: valgrindEnv },
  );
  await waitForHttp(readyUrl, managed, 600_000, 1_000);
  const pid = String(managed.child.pid);
  const control = (/** @type {string[]} */ flags) =>
    promisify(execFile)('callgrind_control', [...flags, pid], { env: valgrindEnv });
  const load = { url, script, threads: 1, connections: config.connections };
  await runWrk({ ...load, seconds: config.warmupSeconds });
  await control(['-i', 'on']);
  const run = await runWrk({ ...load, seconds: config.seconds });
  await control(['-d']);
  await control(['-i', 'off']);
  await stopManaged(managed, 10_000);
  // One file per thread of the dump: cg.<pid>.1-01 is the main thread.
  let main = 0;
  let others = 0;
  for (const file of readdirSync(out).filter((f) => /\.1-\d+$/.test(f))) {
    const total = Number(/^summary: (\d+)$/m.exec(readFileSync(path.join(out, file), 'utf8'))?.[1] ?? 0);
    if (file.endsWith('.1-01')) main += total;
    else others += total;
  }
  if (run.requests === 0 || main === 0) {
    throw new Error(`${name}: nothing counted (${run.requests} requests; ${readdirSync(out).join(', ')})`);
  }
  return { name, requests: run.requests, main: main / run.requests, others: others / run.requests };
}

async function main() {
  const missing = ['valgrind', 'callgrind_control', 'wrk'].filter((command) => !onPath(command));
  if (missing.length > 0) {
    console.error(
      `bench:instructions needs ${missing.join(', ')} on PATH. On Debian/Ubuntu: apt-get install valgrind wrk`,
    );
    process.exit(1);
  }
  installCleanupHandlers();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-instructions-'));
  registerTempDir(tmp);
  console.log(
    `bench:instructions  node ${process.version}; ${config.drops} drops with a ${config.fileBytes} B PNG; ` +
      `callgrind, wrk -t1 -c${config.connections}, ${config.warmupSeconds} s to warm up, ${config.seconds} s counted`,
  );
  const service = await startFileService(tmp, config);
  await stopManaged(service.managed, 10_000);
  const dir = writeBaselineFiles(tmp, service.drops);
  const scripts = fileScripts(tmp, service.drops);
  const nodePort = await freePort();
  const results = [
    await count({
      name: 'content host /img/chart.png',
      args: [SERVER_MAIN],
      env: service.env,
      readyUrl: `${service.baseUrl}/llms.txt`,
      url: `${service.baseUrl}/`,
      script: scripts.content,
      tmp,
    }),
    await count({
      name: 'node:http',
      args: ['-e', BASELINE, dir, String(nodePort)],
      readyUrl: `http://${HOST}:${nodePort}/f/${service.drops[0]?.slug}`,
      url: `http://${HOST}:${nodePort}/`,
      script: scripts.node,
      tmp,
    }),
  ];
  const [content, node] = results;
  if (content === undefined || node === undefined) throw new Error('a target was not counted');
  console.log('');
  for (const r of results) {
    console.log(
      `${r.name.padEnd(30)} ${String(r.requests).padStart(7)} requests counted  main thread ` +
        `${Math.round(r.main).toLocaleString('en-US').padStart(7)} instructions/request  other threads ` +
        `${Math.round(r.others).toLocaleString('en-US').padStart(7)}`,
    );
  }
  const ratio = node.main / content.main;
  const pass = ratio >= TARGET_RATIO;
  console.log(
    `main thread, node:http's over the content host's: ${ratio.toFixed(3)} (>= ${TARGET_RATIO}: ${pass ? 'PASS' : 'FAIL'})`,
  );
  const resultsDir = path.join(BENCH_DIR, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `instructions-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ timestamp: new Date().toISOString(), config, results, ratio, pass }, null, 2)}\n`,
  );
  console.log(`results: ${path.relative(ROOT, file)}`);
}

let exitCode = 0;
try {
  await main();
} catch (error) {
  if (interrupted()) await new Promise(() => undefined);
  console.error(
    `bench:instructions failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
