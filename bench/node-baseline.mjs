#!/usr/bin/env node
/**
 * Baseline for bench/raw.mjs: a bare node:http server that answers `/p/<slug>/raw` with bytes preloaded in memory.
 *
 *   node bench/node-baseline.mjs <www dir> <port> [host] [--keep-tick-shape]
 *
 * Loads every `<www dir>/p/<slug>/raw` file into a Map keyed by its URL path, then serves them with
 * `content-type: text/html; charset=utf-8`. Prints `listening <port>` on stdout once ready.
 *
 * `--keep-tick-shape` applies the service's process-wide V8 workaround (packages/server/src/serve/tick-shape.ts,
 * from the built server) first, so the baseline cannot land in the slow state it prevents: the strictest ceiling.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const keepTickShape = args.includes('--keep-tick-shape');
const [wwwDir, portArg, host = '127.0.0.1'] = args.filter((a) => a !== '--keep-tick-shape');
if (wwwDir === undefined || portArg === undefined || !/^\d+$/.test(portArg)) {
  console.error('usage: node bench/node-baseline.mjs <www dir> <port> [host] [--keep-tick-shape]');
  process.exit(2);
}
if (keepTickShape) {
  const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'server', 'dist');
  const { keepTickObjectShape } = await import(path.join(dist, 'serve', 'tick-shape.js'));
  if (!keepTickObjectShape()) throw new Error('keepTickObjectShape() found no tick entry');
}

/** @type {Map<string, Buffer>} */
const bodies = new Map();
const pDir = path.join(wwwDir, 'p');
for (const slug of readdirSync(pDir)) {
  bodies.set(`/p/${slug}/raw`, readFileSync(path.join(pDir, slug, 'raw')));
}

const CONTENT_TYPE = 'text/html; charset=utf-8';

const server = createServer((req, res) => {
  const body = req.url === undefined ? undefined : bodies.get(req.url);
  if (body === undefined) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'content-length': 10 });
    res.end('not found\n');
    return;
  }
  res.writeHead(200, { 'content-type': CONTENT_TYPE, 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 65_000;

server.listen(Number(portArg), host, () => {
  process.stdout.write(`listening ${portArg} (${bodies.size} documents)\n`);
});

for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
