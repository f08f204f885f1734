/** The operator command and the real server process, over a real socket. */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKyselyStore } from '../src/storage/kysely-store.js';
import { openSqlite } from '../src/storage/sqlite.js';
import { page, tempDir } from './helpers.js';
import { type RunningServer, runCli, startServer } from './process.js';

let dataDir: string;
let server: RunningServer;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = tempDir();
  env = { HTMLDROP_DATA_DIR: dataDir };
  server = await startServer(env);
});
afterAll(async () => {
  await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const api = (token: string, path: string, init: RequestInit = {}) =>
  fetch(`${server.baseUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
  });

describe('htmldrop-server token create', () => {
  it('prints one line, a token that works against the running server, for a new account', async () => {
    const result = await runCli(['token', 'create', '--user', 'ops-alice', '--label', 'ci'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^hd_[0-9A-Za-z]{38,}\n$/);
    const token = result.stdout.trim();
    const me = await api(token, '/api/me');
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ login: 'ops-alice', token: { label: 'ci' } });

    const created = await api(token, '/api/drops', {
      method: 'POST',
      body: JSON.stringify({ title: 'Hi', html: page('socket') }),
    });
    expect(created.status).toBe(201);
    const drop = (await created.json()) as { url: string; raw_url: string };
    expect(drop.url.startsWith(server.baseUrl)).toBe(true);
    const raw = await fetch(drop.raw_url);
    expect(raw.status).toBe(200);
    expect(await raw.text()).toContain('<p>socket</p>');
  });

  it('gives a second, independent token to the same account', async () => {
    const one = (await runCli(['token', 'create', '--user', 'ops-bob'], env)).stdout.trim();
    const two = (await runCli(['token', 'create', '--user', 'ops-bob'], env)).stdout.trim();
    expect(one).not.toBe(two);
    const a = (await (await api(one, '/api/me')).json()) as { user_id: string; token: { id: string } };
    const b = (await (await api(two, '/api/me')).json()) as { user_id: string; token: { id: string } };
    expect(a.user_id).toBe(b.user_id);
    expect(a.token.id).not.toBe(b.token.id);

    const revoked = await runCli(['token', 'revoke', a.token.id], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await api(one, '/api/me')).status).toBe(401);
    expect((await api(two, '/api/me')).status).toBe(200);
  });

  it('lists users, and explains bad usage with exit code 2', async () => {
    const list = await runCli(['user', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('ops-alice');
    const missing = await runCli(['token', 'create'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--user');
    const unknown = await runCli(['token', 'revoke', 'abc'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('the server process', () => {
  it('refuses to start the local provider on a non-loopback HOST, exiting 2 (configuration)', async () => {
    await expect(startServer({ ...env, HOST: '0.0.0.0' })).rejects.toThrow(/exited with 2: .*refusing to listen/s);
  });

  it('exits cleanly on SIGTERM, keeping token last-use times', async () => {
    const dir = tempDir();
    const own = await startServer({ HTMLDROP_DATA_DIR: dir, HTMLDROP_FLUSH_INTERVAL_MS: '600000' });
    const token = (await runCli(['token', 'create', '--user', 'u1'], { HTMLDROP_DATA_DIR: dir })).stdout.trim();
    expect((await fetch(`${own.baseUrl}/api/me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(await own.stop('SIGTERM')).toBe(0);
    const store = createKyselyStore(openSqlite(dir));
    const [account] = await store.findAccountsByLogin('u1');
    const [stored] = await store.listActiveTokens(account?.id ?? '');
    expect(stored?.lastUsedAt).toEqual(expect.any(Number));
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
