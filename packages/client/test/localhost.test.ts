/**
 * `*.localhost` names reach the loopback host from the SDK and the CLI, as in a browser (RFC 6761): a drop's own
 * origin on a real local service (`content_url`, `http://<label>.localhost:<port>/`) answers the document, and a
 * service is reached as `http://htmldrop.localhost:<port>`. Other names still go to the global fetch.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createClient } from '../src/client.js';
import { createLocalhostFetch, isUnderLocalhost, localhostFetch } from '../src/localhost-fetch.js';
import { PAGE, run, sandbox } from './run.js';
import { startService, useService } from './service.js';

const service = useService();
const portOf = () => new URL(service.baseUrl).port;

describe('*.localhost names', () => {
  it('are the names under localhost, and only those', () => {
    for (const name of ['a.localhost', 'k3x9q2.LOCALHOST', 'a.b.localhost', 'x.localhost.']) {
      expect(isUnderLocalhost(name), name).toBe(true);
    }
    for (const name of ['localhost', 'localhost.example.com', 'evil-localhost', '127.0.0.1', 'example.com']) {
      expect(isUnderLocalhost(name), name).toBe(false);
    }
  });

  it("the SDK fetches a drop from its content_url, the drop's own origin on a local service", async () => {
    const client = createClient({ server: service.baseUrl, token: await service.mintToken('localhost-user') });
    const drop = await client.createDrop({ title: 'Own origin', html: PAGE('on its own origin') });
    expect(drop.content_url).toMatch(new RegExp(`^http://[a-z0-9]+\\.localhost:${portOf()}/$`));
    const served = await localhostFetch(String(drop.content_url));
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await served.text()).toContain('on its own origin');
    const pinned = await localhostFetch(new URL('?v=1', String(drop.content_url)));
    expect(pinned.status).toBe(200);
  });

  it('the SDK and the CLI reach a service whose address is under .localhost', async () => {
    // Without own origins: with them, every name under .localhost would be a drop's host.
    const named = await startService({ HTMLDROP_CONTENT_ORIGIN: 'off' });
    try {
      const server = `http://htmldrop.localhost:${new URL(named.baseUrl).port}`;
      const token = await named.mintToken('localhost-user');
      const client = createClient({ server, token });
      const drop = await client.createDrop({ title: 'Under localhost', html: PAGE('reached') });
      expect((await client.getDrop(drop.slug)).title).toBe('Under localhost');
      expect(await client.getRawHtml(drop.slug)).toContain('reached');
      const listed = await run(sandbox(server, { HTMLDROP_TOKEN: token }), ['list', '--json']);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(drop.slug);
    } finally {
      await named.stop();
    }
  });

  it('follows redirects, honours manual redirects and aborts, like fetch', async () => {
    const seen: string[] = [];
    const server = http.createServer((request, response) => {
      seen.push(`${request.method} ${request.headers.host} ${request.url}`);
      if (request.url === '/moved') response.writeHead(303, { location: '/here' }).end();
      else if (request.url === '/slow') setTimeout(() => response.end('late'), 5_000).unref();
      else response.end(`at ${request.url}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://redirects.localhost:${(server.address() as AddressInfo).port}`;
    try {
      const followed = await localhostFetch(`${base}/moved`, { method: 'POST', body: 'x=1' });
      expect(await followed.text()).toBe('at /here');
      expect(followed.url).toBe(`${base}/here`);
      const manual = await localhostFetch(`${base}/moved`, { redirect: 'manual' });
      expect(manual.status).toBe(303);
      expect(manual.headers.get('location')).toBe('/here');
      await expect(localhostFetch(`${base}/slow`, { signal: AbortSignal.timeout(50) })).rejects.toMatchObject({
        name: 'TimeoutError',
      });
      expect(seen.slice(0, 2)).toEqual([
        `POST redirects.localhost:${(server.address() as AddressInfo).port} /moved`,
        `GET redirects.localhost:${(server.address() as AddressInfo).port} /here`,
      ]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('hands every other name to the global fetch', async () => {
    const calls: string[] = [];
    const fallback = (async (input: string | URL | Request) => {
      calls.push(String(input));
      return new Response('from the fallback');
    }) as typeof fetch;
    const wrapped = createLocalhostFetch(() => fallback);
    expect(await (await wrapped('http://127.0.0.1:9/x')).text()).toBe('from the fallback');
    expect(await (await wrapped('https://example.com/')).text()).toBe('from the fallback');
    expect(calls).toEqual(['http://127.0.0.1:9/x', 'https://example.com/']);
  });
});
