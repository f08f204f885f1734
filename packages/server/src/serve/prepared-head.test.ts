/**
 * Prepared heads over real sockets: whatever the connection, the bytes on the wire are the ones `writeHead` would have
 * sent (the Date line aside), and where the module does not know node:http's answer it steps aside.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { headCheck, prepareHead, writePreparedHead } from './prepared-head.js';

const BODY = Buffer.from('0123456789');
const HEADERS = ['content-type', 'image/png', 'etag', '"f-1"', 'content-length', String(BODY.length)];
const HEAD = prepareHead(HEADERS);

let server: http.Server | undefined;
/** Whether each answered request used the prepared head, in order. */
let prepared: boolean[] = [];
/** Calls of a replaced writeHead. */
let watched = 0;

/**
 * A server answering every request with BODY: through a prepared head, or `writeHead` when the path is `/plain`
 * (the reference), or after a header was set when it is `/preset`.
 */
async function start(tune: (server: http.Server) => void = () => undefined): Promise<number> {
  prepared = [];
  server = http.createServer((request, response) => {
    if (request.url === '/preset') response.setHeader('x-early', '1');
    if (request.url === '/watched') {
      const own = response.writeHead.bind(response);
      response.writeHead = ((...args: Parameters<typeof own>) => {
        watched += 1;
        return own(...args);
      }) as typeof own;
    }
    const used = request.url !== '/plain' && writePreparedHead(response, HEAD);
    prepared.push(used);
    if (!used) response.writeHead(200, HEADERS);
    response.end(request.method === 'HEAD' ? undefined : BODY);
  });
  tune(server);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

afterEach(async () => {
  const running = server;
  server = undefined;
  if (running === undefined) return;
  running.closeAllConnections();
  await new Promise((resolve) => running.close(resolve));
});

/** Sends raw request text on one connection and reads until `answers` heads (and their bodies) have arrived. */
function exchange(port: number, text: string, answers: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    const done = () => {
      socket.destroy();
      resolve(received);
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const heads = received.split('HTTP/1.1 ').length - 1;
      if (heads >= answers && (received.endsWith(BODY.toString('latin1')) || received.endsWith('\r\n\r\n'))) done();
    });
    socket.on('end', done);
    socket.on('error', reject);
    socket.write(text);
  });
}

/** One answer's text with its Date line made comparable. */
const undated = (text: string) => text.replace(/\r\nDate: [^\r\n]+\r\n/g, '\r\nDate: -\r\n');
const get = (path: string, extra = '', method = 'GET') =>
  `${method} ${path} HTTP/1.1\r\nHost: example.test\r\n${extra}\r\n`;

describe('prepared heads', () => {
  it('are in use on this Node: its writeHead builds the same head', () => {
    expect(headCheck()).toBe(true);
  });

  it('send the bytes writeHead sends, on a kept-alive connection, for GET and HEAD', async () => {
    const port = await start();
    for (const method of ['GET', 'HEAD']) {
      const fast = await exchange(port, get('/f', '', method), 1);
      const plain = await exchange(port, get('/plain', '', method), 1);
      expect(undated(fast)).toBe(undated(plain));
      expect(fast).toMatch(/\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n/);
    }
    expect(prepared).toEqual([true, false, true, false]);
  });

  it('follow the server keep-alive settings, and several requests on one connection are each answered', async () => {
    const port = await start((s) => {
      s.keepAliveTimeout = 65_000;
      s.maxRequestsPerSocket = 100;
    });
    const fast = await exchange(port, get('/a') + get('/b') + get('/c'), 3);
    const plain = await exchange(port, get('/plain') + get('/plain') + get('/plain'), 3);
    expect(undated(fast)).toBe(undated(plain));
    expect(fast.split('Keep-Alive: timeout=65, max=100\r\n')).toHaveLength(4);
    expect(fast.split(BODY.toString('latin1'))).toHaveLength(4);
    expect(prepared).toEqual([true, true, true, false, false, false]);
  });

  it('step aside where node:http closes the connection or already holds headers', async () => {
    const port = await start((s) => {
      s.maxRequestsPerSocket = 2;
    });
    const closing = await exchange(port, get('/f', 'Connection: close\r\n'), 1);
    expect(closing).toMatch(/\r\nConnection: close\r\n/);
    const old = await exchange(port, 'GET /f HTTP/1.0\r\nHost: example.test\r\n\r\n', 1);
    expect(old).toMatch(/\r\nConnection: close\r\n/);
    const preset = await exchange(port, get('/preset'), 1);
    expect(preset).toMatch(/\r\nx-early: 1\r\n/);
    // A response whose writeHead is replaced (as an injected request's is) gets its writeHead called.
    await exchange(port, get('/watched'), 1);
    expect(watched).toBe(1);
    // The second request of two allowed on a connection is told the connection closes.
    const last = await exchange(port, get('/a') + get('/b'), 2);
    expect(last.split('Connection: close\r\n')).toHaveLength(2);
    expect(prepared).toEqual([false, false, false, false, true, false]);
  });

  it('are checked as writeHead checks them, and carry what node:http must not add', () => {
    expect(() => prepareHead(['x-bad', 'a\r\nset-cookie: b', 'content-length', '1'])).toThrow();
    expect(() => prepareHead(['bad name', 'a', 'content-length', '1'])).toThrow();
    expect(() => prepareHead(['content-type', 'text/plain'])).toThrow(/Content-Length/);
    expect(() => prepareHead(['connection', 'close', 'content-length', '1'])).toThrow(/connection/);
    expect(HEAD).toBe(`HTTP/1.1 200 OK\r\ncontent-type: image/png\r\netag: "f-1"\r\ncontent-length: 10\r\n`);
  });
});
