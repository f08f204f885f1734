/**
 * The fast path over a real socket, in front of a stand-in for the route (status 599), so every answer shows which
 * side gave it: only canonical URLs of cached, open drops are answered before routing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentOrigins } from '../domain/content-origin.js';
import { createRawFastPath } from './fast-path.js';
import { buildFileEntry, buildRawEntry, CACHE_LATEST, CACHE_PINNED } from './raw.js';
import { writeRawAnswer } from './raw-answer.js';
import { createRawCache } from './raw-cache.js';

const ROUTE = 599;
/** Each drop's own origin (docs/api.md, "Each drop on its own origin"): `<label>.localhost:8787`. */
const CONTENT = contentOrigins('http://{id}.localhost:8787');
const labelOf = (slug: string) => `${slug}${'0'.repeat(20 - slug.length)}`;
const contentHost = (slug: string) => `${labelOf(slug)}.localhost:8787`;
const cache = createRawCache();
let server: http.Server;
let port: number;

async function cacheDrop(slug: string, html: string, options: { locked?: boolean; version?: number } = {}) {
  const drop = { slug, accountId: 'u_test', latestVersion: 1, locked: options.locked ?? false, passcodeGeneration: 0 };
  const served = {
    ...drop,
    expiresAt: null,
    contentLabel: labelOf(slug),
    network: 'open' as const,
    visibility: 'public' as const,
    allow: [],
  };
  const entry = await buildRawEntry(served, { version: 1, html }, { contentFrameAncestors: "'self'" });
  cache.set(entry, { slug }, options.version, cache.generation());
  cache.set(entry, { label: labelOf(slug) }, options.version, cache.generation());
}

function get(path: string, method = 'GET', headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let body = '';
      res.setEncoding('latin1');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  const fastPath = createRawFastPath(cache, CONTENT);
  server = http.createServer((request, response) => {
    if (!fastPath(request, response)) response.writeHead(ROUTE).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  await cacheDrop('open1', '<p>open latest</p>');
  await cacheDrop('open1', '<p>open pinned</p>', { version: 1 });
  await cacheDrop('shut1', '<p>secret</p>', { locked: true });
  await cacheFile('open1', 'img/a.png', PNG);
});

/** Bytes of a file: every value 0-255, twice. */
const PNG = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));

/** A file of version 1 of an open drop, cached under the keys a request names it by (docs/api.md, "Many files in one drop"). */
async function cacheFile(slug: string, path: string, bytes: Buffer) {
  const drop = { slug, accountId: 'u_test', latestVersion: 1, locked: false, passcodeGeneration: 0 };
  const served = {
    ...drop,
    expiresAt: null,
    contentLabel: labelOf(slug),
    network: 'open' as const,
    visibility: 'public' as const,
    allow: [],
  };
  const file = { path, sizeBytes: bytes.length, contentType: 'image/png', sha256: 'x'.repeat(64) };
  const entry = await buildFileEntry(served, { version: 1, file, bytes }, { contentFrameAncestors: "'self'" });
  cache.set(entry, { slug }, 1, cache.generation(), path);
  cache.set(entry, { label: labelOf(slug) }, 1, cache.generation(), path);
  cache.set(entry, { label: labelOf(slug) }, undefined, cache.generation(), path);
}
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('raw fast path', () => {
  it('answers the canonical latest and pinned URLs under their cache policies', async () => {
    const latest = await get('/p/open1/raw');
    expect(latest.status).toBe(200);
    expect(latest.body).toContain('open latest');
    expect(latest.headers['cache-control']).toBe(CACHE_LATEST);
    const pinned = await get('/p/open1/raw?v=1');
    expect(pinned.status).toBe(200);
    expect(pinned.body).toContain('open pinned');
    expect(pinned.headers['cache-control']).toBe(CACHE_PINNED);
    const head = await get('/p/open1/raw', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-length']).toBe(latest.headers['content-length']);
    const notModified = await get('/p/open1/raw', 'GET', { 'if-none-match': String(latest.headers.etag) });
    expect(notModified.status).toBe(304);
  });

  it('leaves every other spelling, method and locked drop to the route', async () => {
    for (const path of ['/p/open1/raw/', '/p/open1/raw?v=01', '/p/open1/raw?v=1&x=1', '/p/open1/raw?', '/p/open1']) {
      expect((await get(path)).status, path).toBe(ROUTE);
    }
    expect((await get('/p/open1/raw', 'POST')).status).toBe(ROUTE);
    expect((await get('/p/open1/raw', 'OPTIONS')).status).toBe(ROUTE);
    const locked = await get('/p/shut1/raw');
    expect(locked.status).toBe(ROUTE);
    expect(locked.body).not.toContain('secret');
  });

  it("answers a content host's / and /?v=<n> with its own headers, and nothing else there", async () => {
    const host = contentHost('open1');
    const latest = await get('/', 'GET', { host });
    expect(latest.status).toBe(200);
    expect(latest.body).toContain('open latest');
    expect(latest.headers['content-security-policy']).toContain('allow-same-origin');
    expect(latest.headers['cross-origin-resource-policy']).toBe('same-origin');
    expect((await get('/', 'GET', { host: host.toUpperCase() })).body).toContain('open latest');
    expect((await get('/?v=1', 'GET', { host })).body).toContain('open pinned');
    // The raw path's key is never reached from a content host, nor another spelling, nor a locked drop.
    for (const path of ['/p/open1/raw', '/p/open1/raw?v=1', '/index.html', '/?v=1&x=1']) {
      expect((await get(path, 'GET', { host })).status, path).toBe(ROUTE);
    }
    expect((await get('/', 'GET', { host: contentHost('shut1') })).status).toBe(ROUTE);
    expect((await get('/', 'GET', { host: 'not-a-label.localhost:8787' })).status).toBe(ROUTE);
    // And the raw path on the service's host still answers with the opaque sandbox.
    const raw = await get('/p/open1/raw');
    expect(raw.headers['content-security-policy']).not.toContain('allow-same-origin');
  });

  it('answers a cached file byte for byte, with its 304, 206 and 416, on both surfaces', async () => {
    const host = contentHost('open1');
    for (const [path, headers] of [
      ['/img/a.png', { host }],
      ['/v/1/img/a.png', { host }],
      ['/p/open1/raw/v/1/img/a.png', {}],
    ] as const) {
      const whole = await get(path, 'GET', headers);
      expect([whole.status, whole.headers['content-type']], path).toEqual([200, 'image/png']);
      expect(Buffer.from(whole.body, 'latin1').equals(PNG), path).toBe(true);
      const part = await get(path, 'GET', { ...headers, range: 'bytes=256-259' });
      expect([part.status, part.headers['content-range'], part.body], path).toEqual([
        206,
        'bytes 256-259/512',
        '\u0000\u0001\u0002\u0003',
      ]);
      expect((await get(path, 'GET', { ...headers, range: 'bytes=512-' })).status, path).toBe(416);
      expect((await get(path, 'GET', { ...headers, 'if-none-match': String(whole.headers.etag) })).status).toBe(304);
      const head = await get(path, 'HEAD', { ...headers, range: 'bytes=0-1' });
      expect([head.status, head.headers['content-length'], head.body]).toEqual([206, '2', '']);
    }
    // A grant in the path, a query, or the service's host asking for a content key: the route's.
    for (const [path, headers] of [
      ['/~ticket/v/1/img/a.png', { host }],
      ['/img/a.png?x=1', { host }],
      ['/img/a.png', {}],
      ['/p/open1/raw/img/a.png', {}],
    ] as const) {
      expect((await get(path, 'GET', headers)).status, path).toBe(ROUTE);
    }
  });

  it('refuses to write a locked drop under a shared cache policy', () => {
    const answers = cache.answersFor('/p/shut1/raw');
    expect(answers?.locked).toBe(true);
    const request = { rawHeaders: [], method: 'GET' } as unknown as http.IncomingMessage;
    const response = {} as http.ServerResponse;
    expect(() => writeRawAnswer(request, response, answers as NonNullable<typeof answers>)).toThrow(/privately/);
  });
});
