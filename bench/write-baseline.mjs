#!/usr/bin/env node
/**
 * Baseline for bench/write.mjs: a bare node:http server that takes `POST /api/drops` with the same JSON as htmldrop,
 * parses it (`JSON.parse`) and inserts a drop row and its first version into better-sqlite3 (WAL,
 * `synchronous=FULL`, as the service opens it) in one transaction, then answers 201 with the slug. No
 * authentication, no validation, no rate limits, no compression: what a create cannot do without.
 *
 *   node bench/write-baseline.mjs <data dir> <port>
 *
 * Prints `listening <port>` on stdout once ready.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';

const [dataDir, portArg] = process.argv.slice(2);
if (dataDir === undefined || portArg === undefined || !/^\d+$/.test(portArg)) {
  console.error('usage: node bench/write-baseline.mjs <data dir> <port>');
  process.exit(2);
}

const db = new Database(path.join(dataDir, 'baseline.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`create table if not exists drops (slug text primary key, title text not null, metadata text not null,
  created_at integer not null);
create table if not exists versions (slug text not null, version integer not null, html text not null,
  size_bytes integer not null, created_at integer not null, primary key (slug, version));`);
const insertDrop = db.prepare('insert into drops (slug, title, metadata, created_at) values (?, ?, ?, ?)');
const insertVersion = db.prepare(
  'insert into versions (slug, version, html, size_bytes, created_at) values (?, 1, ?, ?, ?)',
);
const create = db.transaction((slug, body, now) => {
  insertDrop.run(slug, body.title, JSON.stringify(body.metadata ?? {}), now);
  insertVersion.run(slug, body.html, Buffer.byteLength(body.html), now);
});

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/api/drops') {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const slug = randomBytes(8).toString('base64url');
    create(slug, body, Date.now());
    const answer = JSON.stringify({ slug });
    res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(portArg), '127.0.0.1', () => process.stdout.write(`listening ${portArg}\n`));

for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => {
      db.close();
      process.exit(0);
    });
  });
}
