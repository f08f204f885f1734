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
