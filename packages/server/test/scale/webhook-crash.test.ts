/**
 * A webhook survives a crash mid-delivery (docs/api.md, "Webhooks"): the built service starts an attempt, is killed
 * with SIGKILL while the receiver holds the request, and restarts on the same database; the event arrives again,
 * with the same `webhook-id` and a valid signature, within a minute of the restart (the claim's lease lapses).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../databases.js';
import { freePort, runCli, startServer } from '../process.js';

const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const database of databases) await database.drop();
});

describe('kill -9 during a webhook delivery', () => {
  it('delivers the event after the restart, with the same webhook-id', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase('sqlite');
    databases.push(database);
    const seen: Array<{ headers: http.IncomingHttpHeaders; body: string; at: number }> = [];
    let holding = true;
    let arrived: () => void = () => undefined;
    const firstArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let secondArrived: () => void = () => undefined;
    const second = new Promise<void>((resolve) => {
      secondArrived = resolve;
    });
    const held: http.ServerResponse[] = [];
    const receiver = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        seen.push({ headers: request.headers, body, at: Date.now() });
        if (holding) {
          // The first attempt is held open: the service is killed while it waits.
          held.push(response);
          arrived();
          return;
        }
        response.writeHead(204).end();
        secondArrived();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const env = { HTMLDROP_DATA_DIR: database.dataDir, HTMLDROP_WEBHOOK_ALLOW_PRIVATE: '1' };
    const token = (await runCli(['token', 'create', '--user', 'crash'], env)).stdout.trim();
    const port = String(await freePort());
    const api = (base: string, method: string, path: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const first = await startServer({ ...env, PORT: port });
    let restarted: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const made = await api(first.baseUrl, 'POST', '/api/webhooks', { url: hookUrl, events: ['drop.created'] });
      expect(made.status).toBe(201);
      const { id, secret } = (await made.json()) as { id: string; secret: string };
      const created = await api(first.baseUrl, 'POST', '/api/drops', { title: 'Crash', html: '<p>x</p>' });
      expect(created.status).toBe(201);
      const { slug } = (await created.json()) as { slug: string };
      await firstArrived;
      await first.stop('SIGKILL');
      for (const response of held) response.destroy();
      holding = false;

      const restartAt = Date.now();
      restarted = await startServer({ ...env, PORT: port });
      await second;
      expect(Date.now() - restartAt).toBeLessThan(60_000);
      expect(seen).toHaveLength(2);
      const [cut, again] = seen;
      expect(again?.headers['webhook-id']).toBe(cut?.headers['webhook-id']);
      const verified = new Webhook(secret).verify(again?.body ?? '', {
        'webhook-id': String(again?.headers['webhook-id']),
        'webhook-timestamp': String(again?.headers['webhook-timestamp']),
        'webhook-signature': String(again?.headers['webhook-signature']),
      }) as { type: string; data: { slug: string } };
      expect(verified).toMatchObject({ type: 'drop.created', data: { slug } });
      // The log shows the attempt that succeeded (the cut one left no record: it never finished).
      let log: Array<{ status: string; http_status: number }> = [];
      for (let i = 0; i < 50 && log.length === 0; i += 1) {
        log = (
          (await (await api(restarted.baseUrl, 'GET', `/api/webhooks/${id}/deliveries`)).json()) as {
            data: typeof log;
          }
        ).data;
        if (log.length === 0) await new Promise<void>((resolve) => setTimeout(resolve, 100));
      }
      expect(log[0]).toMatchObject({ status: 'delivered', http_status: 204 });
    } finally {
      await first.stop('SIGKILL');
      await restarted?.stop();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
