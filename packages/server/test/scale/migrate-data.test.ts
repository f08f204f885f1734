/** htmldrop-server migrate-data: a SQLite deployment moved to PostgreSQL, nothing lost, then served from there. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/storage/index.js';
import { createTestDatabase, type TestDatabase } from '../databases.js';
import { page, tempDir } from '../helpers.js';
import { runCli, startServer } from '../process.js';

let sqliteDir: string;
let target: TestDatabase;

beforeAll(async () => {
  sqliteDir = tempDir();
  target = await createTestDatabase('postgres');
});
afterAll(async () => {
  fs.rmSync(sqliteDir, { recursive: true, force: true });
  await target.drop();
});

const FILES = {
  'img/a.png': { content: randomBytes(5000).toString('base64'), encoding: 'base64' },
  'style.css': { content: `p{color:red}${' .x{margin:0}'.repeat(200)}` },
};

const call = (base: string, token: string, method: string, p: string, body?: unknown) =>
  fetch(`${base}${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('migrate-data', () => {
  it('copies every drop, version, token and setting, verifies them, and the PostgreSQL service serves them', async () => {
    const env = { HTMLDROP_DATA_DIR: sqliteDir };
    const token = (await runCli(['token', 'create', '--user', 'mover', '--label', 'old box'], env)).stdout.trim();
    const before = await startServer(env);
    const slugs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await call(before.baseUrl, token, 'POST', '/api/drops', {
        title: `drop ${i}`,
        html: page(`content ${i} é 😀`),
        metadata: { n: String(i) },
        context: i === 0 ? 'why' : undefined,
        passcode: i === 2 ? 'secret-code' : undefined,
        // docs/api.md, "Many files in one drop": a file kept as it is and one stored compressed.
        files: i === 1 ? FILES : undefined,
      });
      slugs.push(((await created.json()) as { slug: string }).slug);
    }
    // The second version carries a list of addresses: its findings (version_warnings) move with it.
    const customers = Array.from({ length: 10 }, (_, i) => `c${i}@mail.example.net`).join('\n');
    await call(before.baseUrl, token, 'PUT', `/api/drops/${slugs[0]}`, {
      html: page('second version'),
      context: customers,
    });
    await call(before.baseUrl, token, 'POST', `/api/drops/${slugs[0]}/comments`, { body: 'kept across databases' });
    // A webhook endpoint (docs/api.md, "Webhooks"), its sealed secret moving as it is.
    const hook = await call(before.baseUrl, token, 'POST', '/api/webhooks', {
      url: 'https://93.184.215.14/hook',
      events: ['drop.deleted'],
    });
    expect(hook.status).toBe(201);
    await fetch(`${before.baseUrl}/p/${slugs[1]}`);
    const filesBefore = await (await call(before.baseUrl, token, 'GET', `/api/drops/${slugs[1]}/v/1`)).json();
    await before.stop();
    // A version's screenshot (docs/decisions/0038-previews-and-embeds.md): its row and its body move with it.
    const shot = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(2000)]);
    const store = await openStore(loadConfig(env));
    expect(await store.keepPreview(slugs[1] as string, 1, shot, Date.now())).toBe(true);
    await store.close();
    const listBefore = await (async () => {
      const again = await startServer(env);
      const list = await (await call(again.baseUrl, token, 'GET', '/api/drops?sortOrder=asc')).json();
      await again.stop();
      return list;
    })();

    const migrated = await runCli(
      ['migrate-data', '--from', path.join(sqliteDir, 'htmldrop.sqlite'), '--to', target.databaseUrl ?? ''],
      {},
    );
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stderr).toContain('verified versions: 4 rows');
    expect(migrated.stderr).toContain('verified version_warnings: 1 rows');
    expect(migrated.stderr).toContain('verified version_files: 2 rows');
    expect(migrated.stderr).toContain('verified webhooks: 1 rows');
    expect(migrated.stderr).toContain('indexed 3 drops for search');
    expect(migrated.stderr).toContain('verified version_previews: 1 rows');
    expect(migrated.stdout).toMatch(/migrated and verified \d+ rows/);

    const after = await startServer({
      HTMLDROP_DATABASE_URL: target.databaseUrl ?? '',
      HTMLDROP_DATA_DIR: target.dataDir,
    });
    try {
      const listAfter = await (await call(after.baseUrl, token, 'GET', '/api/drops?sortOrder=asc')).json();
      const strip = (l: { data: Array<Record<string, unknown>> }) =>
        l.data.map(({ url: _u, raw_url: _r, content_url: _c, ...rest }) => rest);
      expect(strip(listAfter as never)).toEqual(strip(listBefore as never));
      expect(await (await fetch(`${after.baseUrl}/p/${slugs[0]}/raw?v=1`)).text()).toContain('content 0 é 😀');
      expect(await (await fetch(`${after.baseUrl}/p/${slugs[0]}/raw`)).text()).toContain('second version');
      expect((await fetch(`${after.baseUrl}/p/${slugs[2]}/raw`)).status).toBe(401);
      const version = (await (await call(after.baseUrl, token, 'GET', `/api/drops/${slugs[0]}/v/1`)).json()) as {
        context: string;
      };
      expect(version.context).toBe('why');
      const filesAfter = await (await call(after.baseUrl, token, 'GET', `/api/drops/${slugs[1]}/v/1`)).json();
      expect((filesAfter as { files: unknown[] }).files).toHaveLength(2);
      expect(filesAfter).toEqual(filesBefore);
      const preview = await fetch(`${after.baseUrl}/p/${slugs[1]}/preview.png?v=1`);
      expect(preview.headers.get('x-preview')).toBe('screenshot');
      expect(Buffer.from(await preview.arrayBuffer()).equals(shot)).toBe(true);
      const feedback = (await (await call(after.baseUrl, token, 'GET', `/api/drops/${slugs[0]}/comments`)).json()) as {
        data: Array<{ body: string }>;
      };
      expect(feedback.data.map((c) => c.body)).toEqual(['kept across databases']);
      const me = (await (await call(after.baseUrl, token, 'GET', '/api/me')).json()) as {
        login: string;
        drop_count: number;
      };
      expect(me).toMatchObject({ login: 'mover', drop_count: 3 });
      // docs/api.md, "Search": the index was rebuilt on PostgreSQL from the copied drops (the latest version's text).
      const found = (await (await call(after.baseUrl, token, 'GET', '/api/drops?q=second%20version')).json()) as {
        data: Array<{ slug: string; match: { fields: string[] } }>;
      };
      expect(found.data.map((d) => [d.slug, d.match.fields])).toEqual([[slugs[0], ['content']]]);
      const old = (await (await call(after.baseUrl, token, 'GET', '/api/drops?q=content%200')).json()) as {
        data: unknown[];
      };
      expect(old.data).toEqual([]);
    } finally {
      await after.stop();
    }

    const again = await runCli(
      ['migrate-data', '--from', path.join(sqliteDir, 'htmldrop.sqlite'), '--to', target.databaseUrl ?? ''],
      {},
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already holds htmldrop data');
  });

  it('explains bad usage', async () => {
    const missing = await runCli(
      ['migrate-data', '--from', '/nonexistent.sqlite', '--to', target.databaseUrl ?? ''],
      {},
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no SQLite database');
    const noTarget = await runCli(['migrate-data', '--from', 'x.sqlite'], {});
    expect(noTarget.code).toBe(2);
  });
});
