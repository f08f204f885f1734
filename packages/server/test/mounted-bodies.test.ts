/**
 * The body cap of the routes whose answer is written outside Fastify (the OAuth endpoints, answered by the MCP SDK's
 * Express handlers: docs/api.md, "Remote MCP and OAuth"), over a real socket: a declared Content-Length over the cap
 * is refused at once, before the body is sent, and a chunked body is read no further than about the cap, then the
 * connection is closed. Each in the service's error shape (docs/api.md 7).
 */
import type { AddressInfo, Socket } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_ENDPOINTS } from '../src/http/routes/oauth.js';
import { createHarness, type Harness } from './helpers.js';

let h: Harness;
let port: number;

beforeAll(async () => {
  h = await createHarness({ limits: { maxAuthStartsPerMinute: 1000 } });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  port = (h.app.server.address() as AddressInfo).port;
});
afterAll(() => h.close());

const CAP = 65_536;

interface Outcome {
  readonly status: number;
  readonly body: string;
  /** Whether the server closed the connection (rather than the test giving up). */
  readonly closed: boolean;
  /** Bytes the server read from this connection. */
  readonly serverRead: number;
}

/**
 * Sends `head`, then `chunk` over and over (at most `maxBytes` of it) while the connection stays open, and reads
 * the answer. Gives up after `giveUpMs` without the server closing.
 */
function send(head: string, chunk: Buffer | undefined, maxBytes: number, giveUpMs = 3000): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const serverSide = new Promise<Socket>((found) => h.app.server.once('connection', found));
    let received = '';
    let sent = 0;
    let closed = false;
    const finish = async () => {
      clearTimeout(timer);
      socket.destroy();
      const server = await serverSide;
      const split = received.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
      resolve({ status, body: received.slice(split + 4), closed, serverRead: server.bytesRead });
    };
    const timer = setTimeout(finish, giveUpMs);
    socket.on('data', (data) => {
      received += data.toString('latin1');
    });
    socket.on('end', () => {
      closed = true;
      finish();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') {
        closed = true;
        finish();
      } else reject(error);
    });
    const pump = () => {
      while (chunk !== undefined && !socket.destroyed && sent < maxBytes) {
        sent += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.write(head, pump);
  });
}

function expectBodyTooLarge(outcome: Outcome): void {
  expect(outcome.status, outcome.body).toBe(413);
  expect(JSON.parse(outcome.body)).toEqual({
    error: expect.objectContaining({ code: 'body_too_large', details: { max_bytes: CAP } }),
  });
}

const TYPES = ['application/x-www-form-urlencoded', 'application/json'];
const CASES = BODY_ENDPOINTS.flatMap((path) => TYPES.map((type) => [path, type] as const));

describe.each(CASES)('POST %s with %s, answered outside Fastify', (path, type) => {
  it('refuses a declared Content-Length of 1 GiB at once, without the body being sent', async () => {
    const started = Date.now();
    const outcome = await send(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\n` + `Content-Length: ${2 ** 30}\r\n\r\ngrant_type=`,
      undefined,
      0,
    );
    expectBodyTooLarge(outcome);
    expect(outcome.closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('stops reading a chunked body at about the cap: 413, and the connection is closed', async () => {
    const data = Buffer.alloc(16_384, 'a');
    const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    const outcome = await send(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nTransfer-Encoding: chunked\r\n\r\n`,
      chunk,
      32 * 1_048_576,
    );
    expectBodyTooLarge(outcome);
    expect(outcome.closed).toBe(true);
    // The cap, a read buffer of slack (Node reads 64 KiB at a time), and the headers.
    expect(outcome.serverRead).toBeLessThan(CAP + 2 * 65_536);
  });

  it('still takes a body under the cap', async () => {
    const outcome = await send(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      undefined,
      0,
    );
    expect(outcome.status).toBe(400);
    expect(JSON.parse(outcome.body).error).toMatch(/^invalid_/);
  });
});

describe.each(BODY_ENDPOINTS)('OPTIONS %s (a preflight), answered outside Fastify', (path) => {
  it('does not read a body either', async () => {
    const started = Date.now();
    const outcome = await send(
      `OPTIONS ${path} HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${2 ** 30}\r\n\r\nx`,
      undefined,
      0,
    );
    expect(outcome.status, outcome.body).toBe(413);
    expect(outcome.closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('GET /oauth/authorize, answered outside Fastify', () => {
  /** A valid authorization request, so that it reaches the SDK's handler. */
  async function authorizePath(): Promise<string> {
    const registered = await fetch(`http://127.0.0.1:${port}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Bodies', redirect_uris: ['http://127.0.0.1:9/cb'] }),
    });
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:9/cb',
      code_challenge: 'a'.repeat(43),
      code_challenge_method: 'S256',
    });
    return `/oauth/authorize?${query}`;
  }

  it('takes no body: a declared Content-Length is refused at once', async () => {
    const started = Date.now();
    const outcome = await send(
      `GET ${await authorizePath()} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        `Content-Length: ${2 ** 30}\r\n\r\nclient_id=`,
      undefined,
      0,
    );
    expect(outcome.status, outcome.body).toBe(413);
    expect(JSON.parse(outcome.body)).toEqual({
      error: expect.objectContaining({ code: 'body_too_large', details: { max_bytes: 0 } }),
    });
    expect(outcome.closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('nor a chunked one: refused, not read', async () => {
    const data = Buffer.alloc(16_384, 'a');
    const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    const outcome = await send(
      `GET ${await authorizePath()} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        'Transfer-Encoding: chunked\r\n\r\n',
      chunk,
      32 * 1_048_576,
    );
    expect(outcome.status, outcome.body).toBe(413);
    expect(outcome.closed).toBe(true);
    expect(outcome.serverRead).toBeLessThan(CAP + 2 * 65_536);
  });
});

describe('a route that answers before reading the body it was sent', () => {
  /** Announces a large body, sends 16 MiB of it, and sees how much the server took after its answer. */
  const flood = (head: string) =>
    send(`${head}Content-Length: ${2 ** 30}\r\n\r\n`, Buffer.alloc(65_536, 'a'), 16 * 1_048_576);

  it.each([
    ['a GET with a body', 'GET /healthz HTTP/1.1\r\nHost: x\r\n', 200],
    ['the MCP endpoint without a token', 'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n', 401],
    ['GET /mcp with a malformed token', 'GET /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer hd_x\r\n', 401],
  ])('%s: answers, then closes the connection instead of reading the rest', async (_name, head, status) => {
    const outcome = await flood(head);
    expect(outcome.status, outcome.body).toBe(status);
    expect(outcome.closed).toBe(true);
    expect(outcome.serverRead).toBeLessThan(CAP + 2 * 65_536);
  });
});
