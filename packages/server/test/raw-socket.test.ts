/**
 * The raw path over a real socket: a cache hit (answered before routing) is byte-for-byte the answer to the miss
 * that filled the cache (answered by the Fastify route through the same writer).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, page } from './helpers.js';

let h: Harness;
let port: number;
let token: string;

beforeAll(async () => {
  h = await createHarness({ limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 } });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  port = (h.app.server.address() as AddressInfo).port;
  token = await h.token('socket');
});
afterAll(() => h.close());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A raw HTTP request (fetch would decompress and hide content-encoding). */
function request(
  path: string,
  given: Readonly<Record<string, string | readonly string[]>> = {},
  method = 'GET',
): Promise<Answer> {
  // An array value sends one header line per element.
  const headers = Object.fromEntries(Object.entries(given).map(([k, v]) => [k, typeof v === 'string' ? v : [...v]]));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Headers that may differ between two answers of the same content. */
function stable(headers: http.IncomingHttpHeaders) {
  const { date: _d, connection: _c, 'keep-alive': _k, ...rest } = headers;
  return rest;
}

async function publish(html: string, extra: Record<string, unknown> = {}) {
  return (await h.call('POST', '/api/drops', { token, body: { title: 't', html, ...extra } })).json.slug as string;
}

describe('raw path over a socket', () => {
  for (const [name, headers, method, encoding] of [
    ['plain GET', {}, 'GET', undefined],
    ['brotli', { 'accept-encoding': 'gzip, deflate, br' }, 'GET', 'br'],
    ['gzip', { 'accept-encoding': 'gzip' }, 'GET', 'gzip'],
    ['header name in another case', { 'ACCEPT-Encoding': 'gzip' }, 'GET', 'gzip'],
    ['repeated Accept-Encoding lines', { 'accept-encoding': ['identity', 'br'] }, 'GET', 'br'],
    ['refused coding', { 'accept-encoding': 'br;q=0, gzip' }, 'GET', 'gzip'],
    ['HEAD', {}, 'HEAD', undefined],
  ] as const) {
    it(`answers a ${name} from the cache exactly as the first (uncached) answer`, async () => {
      const slug = await publish(page('cached '.repeat(200)));
      for (const path of [`/p/${slug}/raw`, `/p/${slug}/raw?v=1`]) {
        const version = path.endsWith('v=1') ? 1 : undefined;
        h.services.rawCache.invalidate(slug);
        expect(h.services.rawCache.get({ slug }, version)).toBeUndefined();
        const miss = await request(path, headers, method);
        expect(h.services.rawCache.get({ slug }, version)).toBeDefined();
        const hit = await request(path, headers, method);
        expect(hit.status).toBe(200);
        expect(hit.headers['content-encoding']).toBe(encoding);
        expect(stable(hit.headers)).toEqual(stable(miss.headers));
        expect(hit.body.equals(miss.body)).toBe(true);
        // Raw documents carry no request id, whichever path answered (error pages still do).
        expect(miss.headers['x-request-id']).toBeUndefined();
      }
    });
  }

  it('answers 304 from the cache', async () => {
    const slug = await publish(page());
    const first = await request(`/p/${slug}/raw`);
    const again = await request(`/p/${slug}/raw`, { 'if-none-match': String(first.headers.etag) });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    // Several If-None-Match lines count as one list (RFC 9110 5.3).
    const listed = await request(`/p/${slug}/raw`, { 'If-None-Match': ['"other"', String(first.headers.etag)] });
    expect(listed.status).toBe(304);
    expect((await request(`/p/${slug}/raw`, { 'if-none-match': '"other"' })).status).toBe(200);
  });

  it('serves a new version immediately after a PUT, and 404 after a delete', async () => {
    const slug = await publish(page('old'));
    expect((await request(`/p/${slug}/raw`)).body.toString()).toContain('old');
    expect((await request(`/p/${slug}/raw`)).body.toString()).toContain('old');
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('new') } });
    expect((await request(`/p/${slug}/raw`)).body.toString()).toContain('new');
    await h.call('DELETE', `/api/drops/${slug}`, { token });
    expect((await request(`/p/${slug}/raw`)).status).toBe(404);
  });

  it('never answers a locked drop from the cache without a capability', async () => {
    const slug = await publish(page('secret'));
    await request(`/p/${slug}/raw`);
    await h.call('POST', `/api/drops/${slug}/passcode`, { token, body: { passcode: 'abcd' } });
    for (let i = 0; i < 2; i++) {
      const answer = await request(`/p/${slug}/raw`);
      expect(answer.status).toBe(401);
      expect(answer.body.toString()).not.toContain('secret');
    }
  });
});
