#!/usr/bin/env node
/**
 * npm run bench:bodies: the service's memory under large unauthenticated bodies. 100 clients at once each stream a
 * 16 MiB body (real bytes, as fast as loopback takes them) to an unauthenticated or badly authenticated endpoint,
 * while the service's resident memory (VmRSS of its process) is sampled every 20 ms. Prints the baseline, the peak
 * per target and what the clients got back. The service must refuse each body before reading it (docs/api.md 8),
 * so the peak stays near the baseline. Loopback only; bounded: one pass per target, 60 s at most each.
 *
 *   BENCH_BODY_CLIENTS (100)  BENCH_BODY_MIB (16)
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  cleanup,
  freePort,
  installCleanupHandlers,
  intEnv,
  registerTempDir,
  sleep,
  spawnManaged,
  waitForHttp,
} from './lib.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLIENTS = intEnv('BENCH_BODY_CLIENTS', 100, 1);
const BODY_BYTES = intEnv('BENCH_BODY_MIB', 16, 1) * 1_048_576;
const CHUNK = Buffer.alloc(65_536, 0x61);

/** Resident memory of a process, in MB. */
function rssMb(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? 0 : Number(match[1]) / 1024;
}

/** Streams BODY_BYTES to `target`; resolves with the status (0 when the connection closed without an answer). */
function send(port, target) {
  return new Promise((resolve) => {
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: target.method,
      path: target.path,
      headers: { 'content-type': 'application/json', 'content-length': BODY_BYTES, ...target.headers },
      timeout: 60_000,
    });
    let status = 0;
    request.on('response', (response) => {
      status = response.statusCode ?? 0;
      response.resume();
      response.on('end', () => resolve(status));
    });
    request.on('error', () => resolve(status));
    request.on('timeout', () => request.destroy());
    let sent = 0;
    const pump = () => {
      while (sent < BODY_BYTES) {
        const size = Math.min(CHUNK.length, BODY_BYTES - sent);
        sent += size;
        if (!request.write(size === CHUNK.length ? CHUNK : CHUNK.subarray(0, size))) {
          request.once('drain', pump);
          return;
        }
      }
      request.end();
    };
    pump();
  });
}

const TARGETS = [
  { name: 'POST /api/auth/start (no credentials)', method: 'POST', path: '/api/auth/start', headers: {} },
  {
    name: 'POST /api/drops (bad token)',
    method: 'POST',
    path: '/api/drops',
    headers: { authorization: 'Bearer hd_notatoken' },
  },
  { name: 'POST /nowhere (unknown path)', method: 'POST', path: '/nowhere', headers: {} },
];

installCleanupHandlers();
try {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-bench-bodies-'));
  registerTempDir(dataDir);
  const port = await freePort();
  const service = spawnManaged('htmldrop', process.execPath, [path.join(ROOT, 'packages/server/dist/main.js')], {
    env: { PATH: process.env.PATH, PORT: String(port), HTMLDROP_DATA_DIR: dataDir, HTMLDROP_LOG_LEVEL: 'warn' },
  });
  await waitForHttp(`http://127.0.0.1:${port}/llms.txt`, service);
  const pid = service.child.pid;
  await sleep(500);
  const baseline = rssMb(pid);
  console.log(`service RSS at rest: ${baseline.toFixed(0)} MB; ${CLIENTS} clients x ${BODY_BYTES / 1_048_576} MiB`);
  for (const target of TARGETS) {
    let peak = rssMb(pid);
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(pid));
    }, 20);
    const started = performance.now();
    const statuses = await Promise.all(Array.from({ length: CLIENTS }, () => send(port, target)));
    clearInterval(sampler);
    const counts = {};
    for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `${target.name}: peak RSS ${peak.toFixed(0)} MB (+${(peak - baseline).toFixed(0)}), ${seconds} s, answers ${JSON.stringify(counts)}`,
    );
  }
} finally {
  await cleanup();
}
