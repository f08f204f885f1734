#!/usr/bin/env node
/**
 * Diagnostic target for bench/raw.mjs (BENCH_ISOLATE=1): htmldrop's own raw fast path (serve/fast-path.ts over a
 * raw-cache.ts cache filled from the bodies on disk), in a process that does nothing else, or that first runs the
 * full service on another port and sends it `--fastify-requests` requests. `<html dir>` holds `<slug>.html`, the
 * documents as stored (the entries are built, injected and compressed exactly as the service does). Both apply the
 * service's tick-shape workaround. Against the baselines they separate the fast path's own cost from the state of
 * a process that also serves other traffic (see bench/README.md).
 *
 *   node bench/fast-path-only.mjs <html dir> <port> [--fastify-requests N]
 *
 * Needs the built server (npm run build). Prints `listening <port>` once ready.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'server', 'dist');
const [htmlDir, portArg, flag, countArg] = process.argv.slice(2);
if (htmlDir === undefined || portArg === undefined || (flag !== undefined && flag !== '--fastify-requests')) {
  console.error('usage: node bench/fast-path-only.mjs <html dir> <port> [--fastify-requests N]');
  process.exit(2);
}
const fastifyRequests = Number(countArg ?? 0);

const { createRawCache } = await import(path.join(DIST, 'serve', 'raw-cache.js'));
const { buildRawEntry } = await import(path.join(DIST, 'serve', 'raw.js'));
const { createRawFastPath } = await import(path.join(DIST, 'serve', 'fast-path.js'));
const { keepTickObjectShape } = await import(path.join(DIST, 'serve', 'tick-shape.js'));
keepTickObjectShape(); // as the service does at start-up

if (fastifyRequests > 0) {
  // The full service in this process, on its own port and data dir; its Fastify routes answer the requests.
  const { loadConfig } = await import(path.join(DIST, 'config.js'));
  const { startServer } = await import(path.join(DIST, 'server.js'));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'htmldrop-fastpath-'));
  // Removed on the way out (raw.mjs stops this process with SIGTERM, handled below by process.exit).
  process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', HTMLDROP_DATA_DIR: dataDir, HTMLDROP_LOG_LEVEL: 'warn' });
  const { app } = await startServer(config);
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const get = (/** @type {string} */ url) =>
    new Promise((resolve, reject) => {
      http.get(url, { agent }, (res) => res.resume().on('end', resolve).on('error', reject)).on('error', reject);
    });
  for (let i = 0; i < fastifyRequests; i++) await get(`http://127.0.0.1:${port}/p/no-such-drop-${i}/raw`);
  agent.destroy();
}

const cache = createRawCache({});
for (const file of readdirSync(htmlDir)) {
  const slug = file.replace(/\.html$/, '');
  const html = readFileSync(path.join(htmlDir, file), 'utf8');
  const drop = { slug, latestVersion: 1, locked: false, passcodeGeneration: 0 };
  cache.set(await buildRawEntry(drop, { version: 1, html }), undefined, cache.generation(slug));
}
const fastPath = createRawFastPath(cache);
const server = http.createServer((req, res) => {
  if (!fastPath(req, res)) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('not found\n');
  }
});
server.listen(Number(portArg), '127.0.0.1', () => process.stdout.write(`listening ${portArg}\n`));
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) process.on(signal, () => process.exit(0));
