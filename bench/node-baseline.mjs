#!/usr/bin/env node
/**
 * Baseline for bench/raw.mjs: a bare node:http server that answers `/p/<slug>/raw` with bytes preloaded in memory.
 *
 *   node bench/node-baseline.mjs <www dir> <port> [host] [--keep-tick-shape] [--headers <dir>]
 *
 * Loads every `<www dir>/p/<slug>/raw` file into a Map keyed by its URL path, then serves them with
 * `content-type: text/html; charset=utf-8`. Prints `listening <port>` on stdout once ready.
 *
 * `--keep-tick-shape` applies the service's process-wide V8 workaround (packages/server/src/serve/tick-shape.ts,
 * from the built server) first, so the baseline cannot land in the slow state it prevents: the strictest ceiling.
 *
 * `--headers <dir>` sends, instead of those two headers, the headers htmldrop sent for the same document, read from
 * `<dir>/<slug>.json` (a flat [name, value, ...] list, without the Date and connection headers node:http adds), as
 * one flat list to `writeHead` like htmldrop's writer: the same bytes on the wire. A diagnostic for bench/raw.mjs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const keepTickShape = args.includes('--keep-tick-shape');
const headersAt = args.indexOf('--headers');
const headersDir = headersAt === -1 ? undefined : args[headersAt + 1];
const [wwwDir, portArg, host = '127.0.0.1'] = args.filter(
  (a, i) => a !== '--keep-tick-shape' && (headersAt === -1 || (i !== headersAt && i !== headersAt + 1)),
);
if (wwwDir === undefined || portArg === undefined || !/^\d+$/.test(portArg) || (headersAt !== -1 && !headersDir)) {
  console.error('usage: node bench/node-baseline.mjs <www dir> <port> [host] [--keep-tick-shape] [--headers <dir>]');
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
/** @type {Map<string, string[]>} htmldrop's headers per URL path (--headers) */
const headerLists = new Map();
for (const slug of readdirSync(pDir)) {
  bodies.set(`/p/${slug}/raw`, readFileSync(path.join(pDir, slug, 'raw')));
  if (headersDir !== undefined) {
    headerLists.set(`/p/${slug}/raw`, JSON.parse(readFileSync(path.join(headersDir, `${slug}.json`), 'utf8')));
  }
}

const CONTENT_TYPE = 'text/html; charset=utf-8';

/** @param {import('node:http').ServerResponse} res */
function notFound(res) {
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'content-length': 10 });
  res.end('not found\n');
}

// Two handlers rather than one with a branch, so the plain baseline runs exactly the code it always ran.
const server = createServer(
  headersDir === undefined
    ? (req, res) => {
        const body = req.url === undefined ? undefined : bodies.get(req.url);
        if (body === undefined) return notFound(res);
        res.writeHead(200, { 'content-type': CONTENT_TYPE, 'content-length': body.length });
        res.end(body);
      }
    : (req, res) => {
        const body = req.url === undefined ? undefined : bodies.get(req.url);
        const headers = req.url === undefined ? undefined : headerLists.get(req.url);
        if (body === undefined || headers === undefined) return notFound(res);
        res.writeHead(200, headers);
        res.end(body);
      },
);
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
