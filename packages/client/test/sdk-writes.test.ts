/**
 * The SDK's conditional and idempotent writes against stand-ins that misbehave on purpose: the headers sent, the
 * retries of a write with the same Idempotency-Key (and only of such writes), 412 as version_conflict, what
 * onResponse reports.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createClient, type ResponseInfo, type RetryNotice } from '../src/client.js';
import { exitCodeFor } from '../src/exit-codes.js';
import { failure } from './failure.js';
import { PAGE } from './run.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A stand-in: `answer` gets each request (in order, from 0) and its body, and answers it. */
async function standIn(answer: (n: number, seen: Seen, response: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body };
      seen.push(entry);
      answer(seen.length - 1, entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const DROP = { slug: 'abc', title: 't', latest_version: 3, metadata: {}, expires_at: null };

function json(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

function apiError(response: http.ServerResponse, status: number, code: string, details?: unknown) {
  json(response, status, { error: { code, message: `${code} from the stand-in`, ...(details ? { details } : {}) } });
}

describe('idempotent writes', () => {
  it('create and PUT send a new random Idempotency-Key per call; a given key is sent as is', async () => {
    const stand = await standIn((_n, _seen, response) => json(response, 200, DROP));
    try {
      const client = createClient({ server: stand.url, token: 'hd_x' });
      await client.createDrop({ title: 't', html: PAGE('a') });
      await client.createDrop({ title: 't', html: PAGE('a') });
      await client.updateDrop('abc', { html: PAGE('b') }, { idempotencyKey: 'my-key-1' });
      await client.patchDrop('abc', { title: 'x' });
      const keys = stand.seen.map((s) => s.headers['idempotency-key']);
      expect(keys[0]).toMatch(/^[\x21-\x7e]{1,255}$/);
      expect(keys[1]).toMatch(/^[\x21-\x7e]{1,255}$/);
      expect(keys[0]).not.toBe(keys[1]);
      expect(keys.slice(2)).toEqual(['my-key-1', undefined]);
      await expect(client.createDrop({ title: 't', html: PAGE('a') }, { idempotencyKey: 'has space' })).rejects.toThrow(
        /visible ASCII/,
      );
    } finally {
      await stand.close();
    }
  });

  it('retries a create with the same key and body after a dropped connection, a 503 and a 409 request_in_progress', async () => {
    const stand = await standIn((n, _seen, response) => {
      if (n === 0) response.socket?.destroy();
      else if (n === 1) apiError(response, 503, 'unavailable');
      else if (n === 2) apiError(response, 409, 'request_in_progress');
      else json(response, 201, DROP, { 'idempotent-replayed': 'true', etag: '"3"' });
    });
    try {
      const notices: RetryNotice[] = [];
      const answers: ResponseInfo[] = [];
      const client = createClient({ server: stand.url, token: 'hd_x', onRetry: (n) => notices.push(n) });
      const drop = await client.createDrop(
        { title: 't', html: PAGE('a') },
        { onResponse: (info) => answers.push(info) },
      );
      expect(drop.slug).toBe('abc');
      expect(stand.seen).toHaveLength(4);
      const key = stand.seen[0]?.headers['idempotency-key'];
      expect(new Set(stand.seen.map((s) => s.headers['idempotency-key']))).toEqual(new Set([key]));
      expect(new Set(stand.seen.map((s) => s.body)).size).toBe(1);
      expect(notices.map((n) => [n.attempt, n.code, n.idempotencyKey])).toEqual([
        [1, 'network_error', key],
        [2, 'unavailable', key],
        [3, 'request_in_progress', key],
      ]);
      for (const n of notices) expect(n.waitSeconds).toBeGreaterThan(0);
      expect(answers).toEqual([{ status: 201, etagVersion: 3, replayed: true, requestId: undefined }]);
    } finally {
      await stand.close();
    }
  });

  it('gives up after maxWriteRetries, and never retries a write without a key (PATCH, restore) or a 500', async () => {
    const stand = await standIn((_n, seen, response) =>
      seen.method === 'GET' ? apiError(response, 500, 'internal') : apiError(response, 503, 'unavailable'),
    );
    try {
      const client = createClient({ server: stand.url, token: 'hd_x', maxWriteRetries: 1 });
      expect((await failure(client.updateDrop('abc', { html: PAGE('a') }))).code).toBe('unavailable');
      expect(stand.seen).toHaveLength(2);
      expect((await failure(client.patchDrop('abc', { title: 'x' }))).code).toBe('unavailable');
      expect((await failure(client.restore('abc', 1))).code).toBe('unavailable');
      expect((await failure(client.getDrop('abc'))).code).toBe('internal');
      expect(stand.seen).toHaveLength(5);
      const none = createClient({ server: stand.url, token: 'hd_x', maxWriteRetries: 0 });
      await failure(none.createDrop({ title: 't', html: PAGE('a') }));
      expect(stand.seen).toHaveLength(6);
    } finally {
      await stand.close();
    }
  });

  it('does not retry a refused key (422 idempotency_key_reused): exit 7', async () => {
    const stand = await standIn((_n, _seen, response) => apiError(response, 422, 'idempotency_key_reused'));
    try {
      const error = await failure(
        createClient({ server: stand.url, token: 'hd_x' }).createDrop({ title: 't', html: 'x' }),
      );
      expect(error).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
      expect(exitCodeFor(error)).toBe(7);
      expect(stand.seen).toHaveLength(1);
    } finally {
      await stand.close();
    }
  });
});

describe('conditional writes', () => {
  it('sends If-Match "<n>" (or *) on PUT, PATCH, DELETE and restore, and nothing without ifMatch', async () => {
    const stand = await standIn((_n, seen, response) => {
      if (seen.method === 'DELETE') {
        response.writeHead(204);
        response.end();
      } else json(response, 200, DROP, { etag: '"3"' });
    });
    try {
      const client = createClient({ server: stand.url, token: 'hd_x' });
      const answers: ResponseInfo[] = [];
      await client.updateDrop('abc', { html: PAGE('a') }, { ifMatch: 2, onResponse: (i) => answers.push(i) });
      await client.patchDrop('abc', { expires_at: null }, { ifMatch: '*' });
      await client.deleteDrop('abc', { ifMatch: 7 });
      await client.restore('abc', 1, { ifMatch: 3 });
      await client.getDrop('abc', { onResponse: (i) => answers.push(i) });
      await client.updateDrop('abc', { html: PAGE('a') });
      expect(stand.seen.map((s) => [s.method, s.url, s.headers['if-match']])).toEqual([
        ['PUT', '/api/drops/abc', '"2"'],
        ['PATCH', '/api/drops/abc', '*'],
        ['DELETE', '/api/drops/abc', '"7"'],
        ['POST', '/api/drops/abc/v/1/restore', '"3"'],
        ['GET', '/api/drops/abc', undefined],
        ['PUT', '/api/drops/abc', undefined],
      ]);
      expect(JSON.parse(stand.seen[1]?.body ?? '{}')).toEqual({ expires_at: null });
      expect(answers.map((a) => [a.etagVersion, a.replayed])).toEqual([
        [3, false],
        [3, false],
      ]);
      await expect(client.updateDrop('abc', { html: 'x' }, { ifMatch: 0 })).rejects.toThrow(/whole number from 1/);
    } finally {
      await stand.close();
    }
  });

  it('turns 412 into version_conflict with latestVersion, exit 7, not retried; also without an error body', async () => {
    const stand = await standIn((n, _seen, response) => {
      if (n === 0) apiError(response, 412, 'version_conflict', { latest_version: 5 });
      else {
        response.writeHead(412, { 'content-type': 'text/plain' });
        response.end('Precondition Failed');
      }
    });
    try {
      const client = createClient({ server: stand.url, token: 'hd_x' });
      const error = await failure(client.updateDrop('abc', { html: PAGE('a') }, { ifMatch: 4 }));
      expect(error).toMatchObject({ code: 'version_conflict', status: 412, latestVersion: 5 });
      expect(exitCodeFor(error)).toBe(7);
      const bare = await failure(client.deleteDrop('abc', { ifMatch: 4 }));
      expect(bare).toMatchObject({ code: 'version_conflict', status: 412, latestVersion: undefined });
      expect(stand.seen).toHaveLength(2);
    } finally {
      await stand.close();
    }
  });
});

describe('diff', () => {
  it('asks GET /api/drops/<slug>/diff with from and to only when given', async () => {
    const body = { from: 1, to: 2, unified: '', added: 0, removed: 0 };
    const stand = await standIn((_n, _seen, response) => json(response, 200, body));
    try {
      const client = createClient({ server: stand.url, token: 'hd_x' });
      expect(await client.diff('abc')).toEqual(body);
      await client.diff('abc', { from: 1, to: 3 });
      await client.diff('abc', { to: 2 });
      expect(stand.seen.map((s) => s.url)).toEqual([
        '/api/drops/abc/diff',
        '/api/drops/abc/diff?from=1&to=3',
        '/api/drops/abc/diff?to=2',
      ]);
    } finally {
      await stand.close();
    }
  });
});
