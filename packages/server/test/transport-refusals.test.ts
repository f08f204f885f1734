/**
 * Refusals below the routes, over a real socket (they happen before `inject` could see them): a URL the router
 * cannot decode, a parameter over the router's length cap, and requests the HTTP parser refuses. Each answers in
 * the service's shapes (docs/api.md 7, "Browser paths"): nested JSON under /api/ and for clients, an HTML page for
 * a browser, the drop 404 page under /p/.
 */
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentBodyLimit } from '../src/http/json-body.js';
import { createHarness, type Harness } from './helpers.js';

let h: Harness;
let port: number;

beforeAll(async () => {
  h = await createHarness();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  port = (h.app.server.address() as AddressInfo).port;
});
afterAll(() => h.close());

const BROWSER = 'text/html,application/xhtml+xml,*/*;q=0.8';

interface Answer {
  status: number;
  head: string;
  body: string;
}

/** Sends bytes as they are and reads the answer until the server closes or the answer is complete. */
function exchange(bytes: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    const finish = () => {
      const split = received.indexOf('\r\n\r\n');
      const head = received.slice(0, split);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: received.slice(split + 4) });
    };
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      const split = received.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(received.slice(0, split))?.[1] ?? -1);
      if (split >= 0 && length >= 0 && received.length - split - 4 >= length) {
        socket.destroy();
        finish();
      }
    });
    socket.on('close', finish);
    socket.on('error', reject);
    socket.write(bytes);
  });
}

const get = (path: string, accept?: string) =>
  exchange(`GET ${path} HTTP/1.1\r\nHost: x\r\n${accept === undefined ? '' : `Accept: ${accept}\r\n`}\r\n`);

function expectApiError(answer: Answer, status: number, code: string): void {
  expect(answer.status, answer.head).toBe(status);
  expect(answer.head).toMatch(/content-type: application\/json/i);
  expect(JSON.parse(answer.body)).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
}

function expectPage(answer: Answer, status: number, text: string): void {
  expect(answer.status, answer.head).toBe(status);
  expect(answer.head).toMatch(/content-type: text\/html/i);
  expect(answer.body).toContain(text);
}

const LONG = 'a'.repeat(201);

describe('URLs the router refuses', () => {
  it('bad percent-encoding in a drop path: 400 invalid_slug', async () => {
    expectApiError(await get('/api/drops/%zz'), 400, 'invalid_slug');
    expectApiError(await get('/api/prototypes/%zz'), 400, 'invalid_slug');
  });

  it('a slug over the length cap: 400 invalid_slug, not 414', async () => {
    expectApiError(await get(`/api/drops/${LONG}`), 400, 'invalid_slug');
    expectApiError(await get(`/api/drops/${LONG}/versions`), 400, 'invalid_slug');
  });

  it('a bad token id: 400 invalid_arg', async () => {
    expectApiError(await get('/api/tokens/%zz'), 400, 'invalid_arg');
  });

  it('under /p/: the drop 404 page, for a browser and for curl', async () => {
    for (const path of ['/p/%zz', '/p/%zz/raw', `/p/${LONG}`, `/p/${LONG}/raw`]) {
      expectPage(await get(path, BROWSER), 404, 'This drop does not exist');
      expectPage(await get(path), 404, 'This drop does not exist');
    }
  });

  it('elsewhere: the page-not-found page for a browser, JSON not_found for a client', async () => {
    expectPage(await get('/nope/%zz', BROWSER), 404, 'Page not found');
    expectApiError(await get('/nope/%zz', '*/*'), 404, 'not_found');
    expectApiError(await get('/api/%zz'), 404, 'not_found');
  });
});

describe('requests the HTTP parser refuses', () => {
  it('headers over the size limit: 431 headers_too_large', async () => {
    const big = 'a'.repeat(20_000);
    expectApiError(
      await exchange(`GET /api/me HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`),
      431,
      'headers_too_large',
    );
  });

  it('a malformed request: 400 bad_request', async () => {
    expectApiError(
      await exchange('GET /api/me HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'),
      400,
      'bad_request',
    );
    expectApiError(await exchange('NOT HTTP AT ALL\r\n\r\n'), 400, 'bad_request');
  });

  it('a browser path refused by the parser gets a page', async () => {
    const answer = await exchange(`GET /nope HTTP/1.1\r\nHost: x\r\nAccept: ${BROWSER}\r\nContent-Length: abc\r\n\r\n`);
    expectPage(answer, 400, 'not valid HTTP');
  });
});

describe('request bodies, refused before they are read', () => {
  /** Headers announcing `length` bytes, then only the first bytes of the body: an answer proves no wait for the rest. */
  const partial = (method: string, path: string, length: number, extra = '') =>
    exchange(
      `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n` +
        '{"label":"',
    );

  it('the unauthenticated device-flow start takes at most 1 KiB: 413 body_too_large', async () => {
    const answer = await partial('POST', '/api/auth/start', 16 * 1_048_576);
    expectApiError(answer, 413, 'body_too_large');
    expect(JSON.parse(answer.body).error.details).toEqual({ max_bytes: 1024 });
  });

  it('the same, sent chunked without a length: refused once 1 KiB has arrived', async () => {
    const chunk = 'x'.repeat(2048);
    const answer = await exchange(
      'POST /api/auth/start HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' +
        `${chunk.length.toString(16)}\r\n${chunk}\r\n`,
    );
    expectApiError(answer, 413, 'body_too_large');
  });

  it('an owner route with a bad or missing token answers 401 before reading a 16 MiB body', async () => {
    expectApiError(
      await partial('POST', '/api/drops', 16 * 1_048_576, 'Authorization: Bearer hd_nope\r\n'),
      401,
      'invalid_token',
    );
    expectApiError(await partial('PUT', '/api/drops/abc', 16 * 1_048_576), 401, 'unauthorized');
  });

  it('a route without a document takes 64 KiB; the document routes keep the transport cap, grown to fit a version', async () => {
    const token = await h.token('bodies');
    const auth = `Authorization: Bearer ${token}\r\n`;
    const patch = await partial('PATCH', '/api/drops/abc', 1_048_576, auth);
    expectApiError(patch, 413, 'body_too_large');
    expect(JSON.parse(patch.body).error.details).toEqual({ max_bytes: 65_536 });
    // docs/api.md 8: HTMLDROP_MAX_BODY_BYTES, plus a full version's files in base64 (docs/decisions/0033).
    const cap = documentBodyLimit(h.config.limits);
    const create = await partial('POST', '/api/drops', cap + 1, auth);
    expectApiError(create, 413, 'html_too_large');
    expect(JSON.parse(create.body).error.details).toEqual({ max_bytes: 2_097_152, max_body_bytes: cap });
  });

  it('an unknown path does not read a large body either', async () => {
    const answer = await partial('POST', '/api/nothing', 16 * 1_048_576);
    expect([404, 413]).toContain(answer.status);
    expect(JSON.parse(answer.body).error.code).toMatch(/^(not_found|body_too_large)$/);
  });
});

describe('slow and greedy clients', () => {
  let slow: Harness;
  let slowPort: number;

  beforeAll(async () => {
    slow = await createHarness({
      env: {
        HTMLDROP_HEADERS_TIMEOUT_SECONDS: '1',
        HTMLDROP_REQUEST_TIMEOUT_SECONDS: '2',
        HTMLDROP_MAX_CONNECTIONS_PER_ADDRESS: '3',
      },
    });
    await slow.app.listen({ port: 0, host: '127.0.0.1' });
    slowPort = (slow.app.server.address() as AddressInfo).port;
  });
  afterAll(() => slow.close());

  /** Like `exchange`, against the slow-client service; resolves with the answer and how long it took. */
  function timed(bytes: string): Promise<Answer & { ms: number }> {
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const socket = net.connect(slowPort, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString('latin1');
      });
      socket.on('close', () => {
        const split = received.indexOf('\r\n\r\n');
        const head = received.slice(0, split);
        resolve({
          status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
          head,
          body: received.slice(split + 4),
          ms: Date.now() - started,
        });
      });
      socket.on('error', reject);
      socket.write(bytes);
    });
  }

  it('headers that do not arrive in time: 408 request_timeout, and the connection is closed', async () => {
    const answer = await timed('GET /api/me HTTP/1.1\r\nHost: x\r\n');
    expectApiError(answer, 408, 'request_timeout');
    expect(answer.ms).toBeLessThan(4000);
  });

  it('a body that does not arrive in time: 408 request_timeout', async () => {
    const answer = await timed(
      'POST /api/auth/start HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"lab',
    );
    expectApiError(answer, 408, 'request_timeout');
    expect(answer.ms).toBeLessThan(5000);
  });

  it('a client holding the maximum of open connections gets 429 on one more; closing one frees a slot', async () => {
    const idle = await Promise.all(
      Array.from(
        { length: 3 },
        () =>
          new Promise<net.Socket>((resolve) => {
            const socket = net.connect(slowPort, '127.0.0.1', () => resolve(socket));
          }),
      ),
    );
    // Let the server see all three before the fourth.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const refused = await timed('GET /llms.txt HTTP/1.1\r\nHost: x\r\n\r\n');
    expectApiError(refused, 429, 'rate_limited');
    expect(refused.head).toMatch(/retry-after: 1/i);
    idle[0]?.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const served = await timed('GET /llms.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(served.status).toBe(200);
    for (const socket of idle) socket.destroy();
  });

  it('the cap is off behind a trusted proxy unless set, and on by default otherwise', async () => {
    const { loadConfig } = await import('../src/config.js');
    expect(loadConfig({}).maxConnectionsPerAddress).toBe(256);
    expect(loadConfig({ HTMLDROP_TRUST_PROXY: '1' }).maxConnectionsPerAddress).toBe(0);
    expect(
      loadConfig({ HTMLDROP_TRUST_PROXY: '1', HTMLDROP_MAX_CONNECTIONS_PER_ADDRESS: '500' }).maxConnectionsPerAddress,
    ).toBe(500);
  });
});

describe('shutting down', () => {
  it('a request on a kept-alive connection while the instance closes: 503 shutting_down in the nested shape', async () => {
    const closing = await createHarness();
    await closing.app.listen({ port: 0, host: '127.0.0.1' });
    const closingPort = (closing.app.server.address() as AddressInfo).port;
    const socket = net.connect(closingPort, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    await new Promise((resolve) => socket.once('connect', resolve));
    // A request in flight (its body not complete) keeps the connection busy, so closing waits for it.
    socket.write(
      'POST /api/auth/start HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = closing.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The rest of the first request, and a second one pipelined behind it.
    socket.write('}GET /llms.txt HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => socket.once('close', resolve));
    await closed;
    const answers = received.split(/(?=HTTP\/1\.1 )/);
    expect(answers[0]).toMatch(/^HTTP\/1\.1 200/);
    expect(answers[1]).toMatch(/^HTTP\/1\.1 503/);
    expect(answers[1]).toMatch(/retry-after: 1/i);
    expect(JSON.parse(answers[1]?.split('\r\n\r\n')[1] ?? '{}')).toEqual({
      error: expect.objectContaining({ code: 'shutting_down' }),
    });
  });
});
