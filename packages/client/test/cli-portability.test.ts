/**
 * Moving an account with two commands (docs/api.md, "Export and import"): `htmldrop export` on a service on the
 * embedded SQLite, `htmldrop import` on one on PostgreSQL, and the drops look and diff the same there; the operator's
 * `htmldrop-server export --user` and `import --user` do the same without a token.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../server/test/databases.js';
import { runCli } from '../../server/test/process.js';
import type { ImportResult } from '../src/types.js';
import { PAGE, removeTempDirs, run, runJson, type Sandbox, tempDir } from './run.js';
import { type Service, startService } from './service.js';

const WRITES = { HTMLDROP_MAX_WRITES_PER_MINUTE: '1000' };
let database: TestDatabase;
let from: Service;
let to: Service;
let here: Sandbox & { token: string };
let there: Sandbox & { token: string };
const slugs: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase('postgres');
  [from, to] = await Promise.all([
    startService(WRITES),
    startService({ ...WRITES, HTMLDROP_DATABASE_URL: database.databaseUrl ?? '' }),
  ]);
  [here, there] = await Promise.all([from.signedIn('mover'), to.signedIn('mover')]);
  const api = async (method: string, url: string, body: unknown) => {
    const response = await fetch(`${from.baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${here.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status, await response.clone().text()).toBeLessThan(300);
    return (await response.json()) as { slug: string };
  };
  const report = await api('POST', '/api/drops', { title: 'Report', html: PAGE('one\ntwo\nthree'), context: '# why' });
  await api('PUT', `/api/drops/${report.slug}`, {
    html: PAGE('one\n2\nthree'),
    files: { 'style.css': { content: 'p { color: red }' } },
  });
  const locked = await api('POST', '/api/drops', { title: 'Locked', html: PAGE('secret'), passcode: 'hunter22' });
  slugs.push(report.slug, locked.slug);
}, 120_000);
afterAll(async () => {
  await Promise.all([from?.stop(), to?.stop()]);
  await database?.drop();
  removeTempDirs();
});

describe('htmldrop export and htmldrop import', () => {
  let imported: ImportResult;

  it('moves every drop from SQLite to PostgreSQL, and the drops look and diff the same there', async () => {
    const file = path.join(tempDir(), 'everything.zip');
    const exported = await runJson<{ file: string; bytes: number }>(here, ['export', '-o', file]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.json).toEqual({ file, bytes: fs.statSync(file).size });
    expect(fs.existsSync(`${file}.part`)).toBe(false);

    const result = await runJson<ImportResult>(there, ['import', file]);
    expect(result.code, result.stderr).toBe(0);
    imported = result.json;
    expect(imported.skipped).toEqual([]);
    expect(imported.imported.map((item) => [item.from, item.versions])).toEqual([
      [slugs[0], 2],
      [slugs[1], 1],
    ]);
    const [report, locked] = imported.imported;
    for (const v of [1, 2]) {
      const before = await (await fetch(`${from.baseUrl}/p/${slugs[0]}/raw?v=${v}`)).text();
      const after = await (await fetch(`${to.baseUrl}/p/${report?.slug}/raw?v=${v}`)).text();
      expect(after.replaceAll(report?.slug ?? '', slugs[0] ?? '')).toBe(before);
    }
    const css = await fetch(`${to.baseUrl}/p/${report?.slug}/raw/v/2/style.css`);
    expect(await css.text()).toBe('p { color: red }');
    const diffs = await Promise.all([
      runJson(here, ['diff', slugs[0] ?? '', '--from', '1', '--to', '2']),
      runJson(there, ['diff', report?.slug ?? '', '--from', '1', '--to', '2']),
    ]);
    const { slug: _a, ...diffHere } = diffs[0].json as Record<string, unknown>;
    const { slug: _b, ...diffThere } = diffs[1].json as Record<string, unknown>;
    // The same diff, but for the slug its header names.
    expect(JSON.parse(JSON.stringify(diffThere).replaceAll(report?.slug ?? '', slugs[0] ?? ''))).toEqual(diffHere);
    // Still locked, by the same passcode.
    expect((await fetch(`${to.baseUrl}/p/${locked?.slug}/raw`)).status).toBe(401);
  });

  it('creates nothing when the same file is imported again', async () => {
    const file = path.join(tempDir(), 'again.zip');
    expect((await run(here, ['export', '-o', file])).code).toBe(0);
    const again = await runJson<ImportResult>(there, ['import', file]);
    expect(again.json.imported).toEqual([]);
    expect(again.json.skipped.map((item) => item.reason)).toEqual(['already_imported', 'already_imported']);
  });

  it('refuses a file that is not an export in one line, with its code', async () => {
    const file = path.join(tempDir(), 'not.zip');
    fs.writeFileSync(file, 'not a zip');
    const result = await run(there, ['import', file]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/\[invalid_archive\]/);
  });
});

describe('htmldrop-server export --user and import --user', () => {
  it('exports an account to a file and imports it into another account of another database', async () => {
    const file = path.join(tempDir(), 'operator.zip');
    const exported = await runCli(['export', '--user', 'mover', '-o', file], { HTMLDROP_DATA_DIR: from.dataDir });
    expect(exported.code, exported.stderr).toBe(0);
    expect(fs.statSync(file).size).toBeGreaterThan(0);
    const env = { HTMLDROP_DATA_DIR: to.dataDir, HTMLDROP_DATABASE_URL: database.databaseUrl ?? '' };
    const imported = await runCli(['import', '--user', 'newcomer', file], env);
    expect(imported.code, imported.stderr).toBe(0);
    const result = JSON.parse(imported.stdout) as ImportResult;
    expect(result.imported.map((item) => item.from)).toEqual(slugs);
    expect((await runCli(['export', '--user', 'nobody', '-o', file], { HTMLDROP_DATA_DIR: from.dataDir })).code).toBe(
      2,
    );
  });
});
