/**
 * A cap on open connections per client (an IPv4 address or an IPv6 /64), so one client cannot hold every socket of
 * the process with slow or idle connections. Counted per connection, not per request: the raw path pays nothing.
 * Behind a trusted proxy every connection comes from the proxy, so the cap is off there unless set
 * (docs/api.md 8).
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { clientGroup } from '../domain/client-address.js';
import { ApiError } from '../errors.js';

const REFUSAL = (() => {
  const body = JSON.stringify(
    new ApiError('rate_limited', {
      message: 'Too many open connections from this address; close some and retry.',
      retryAfterSeconds: 1,
    }).toBody(),
  );
  return (
    'HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\nRetry-After: 1\r\n' +
    `Cache-Control: no-store\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
})();

/** Refuses (429, then closes) a connection beyond `max` open ones from the same client. */
export function limitConnectionsPerClient(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const client = clientGroup(socket.remoteAddress ?? '');
    const count = (open.get(client) ?? 0) + 1;
    if (count > max) {
      socket.end(REFUSAL);
      socket.destroySoon?.();
      return;
    }
    open.set(client, count);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left <= 0) open.delete(client);
      else open.set(client, left);
    });
  });
}
