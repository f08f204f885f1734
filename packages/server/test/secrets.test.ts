/**
 * Signing keys live outside the database (docs/decisions/0019-signing-keys-outside-the-database.md): from
 * HTMLDROP_SECRET or a 0600 key file in a 0700 data directory; the SQLite files are 0600; a copy of the database
 * holds nothing that signs; rotation keeps the previous secret verifying.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createCapabilities } from '../src/domain/capability.js';
import {
  loadSigningKeys,
  rotateSecretFile,
  SECRET_FILE_NAME,
  signingKeysFromSecret,
} from '../src/keys/signing-keys.js';
import { openSqlite, SQLITE_FILE_NAME } from '../src/storage/sqlite.js';
import { createTestDatabase, DIALECTS, openAtMigration } from './databases.js';
import { createHarness, page } from './helpers.js';
import { runCli } from './process.js';
import { tempDir } from './temp.js';

const mode = (file: string) => fs.statSync(file).mode & 0o777;
const clock = { now: () => Date.now() };
const dirs: string[] = [];
const fresh = () => {
  const dir = path.join(tempDir(), 'data');
  dirs.push(path.dirname(dir));
  return dir;
};
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the key file', () => {
  it('is created on first start, 0600 in a 0700 data directory, beside a 0600 database', async () => {
    const dataDir = fresh();
    // What the service does at start-up: open the database, then load the keys.
    const store = openSqlite(dataDir);
    await store.db.destroy();
    loadSigningKeys(loadConfig({ HTMLDROP_DATA_DIR: dataDir }));
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(path.join(dataDir, SECRET_FILE_NAME))).toBe(0o600);
    expect(mode(path.join(dataDir, SQLITE_FILE_NAME))).toBe(0o600);
    expect(fs.readFileSync(path.join(dataDir, SECRET_FILE_NAME), 'utf8').trim().length).toBeGreaterThanOrEqual(32);
  });

  it('gives the same keys to every instance on one data directory, also when they start together', () => {
    const dataDir = fresh();
    const config = loadConfig({ HTMLDROP_DATA_DIR: dataDir });
    const all = Array.from({ length: 8 }, () => loadSigningKeys(config));
    const first = all[0]?.capability[0]?.toString('hex');
    expect(new Set(all.map((k) => k.capability[0]?.toString('hex')))).toEqual(new Set([first]));
    expect(fs.readdirSync(dataDir)).toEqual([SECRET_FILE_NAME]);
  });

  it('rotation: the new secret signs, the previous one still verifies, the one before stops', () => {
    const dataDir = fresh();
    const config = loadConfig({ HTMLDROP_DATA_DIR: dataDir });
    const before = createCapabilities(loadSigningKeys(config).capability, clock, 60_000);
    const oldGrant = before.issue('slug1', 1).token;
    rotateSecretFile(dataDir);
    const after = createCapabilities(loadSigningKeys(config).capability, clock, 60_000);
    expect(after.verify(oldGrant, 'slug1', 1)).toBe(true);
    const newGrant = after.issue('slug1', 1).token;
    expect(before.verify(newGrant, 'slug1', 1)).toBe(false);
    rotateSecretFile(dataDir);
    const twice = createCapabilities(loadSigningKeys(config).capability, clock, 60_000);
    expect(twice.verify(oldGrant, 'slug1', 1)).toBe(false);
    expect(twice.verify(newGrant, 'slug1', 1)).toBe(true);
    expect(mode(path.join(dataDir, SECRET_FILE_NAME))).toBe(0o600);
  });

  it('`htmldrop-server secret rotate` rotates the file, and refuses when HTMLDROP_SECRET is set', async () => {
    const dataDir = fresh();
    loadSigningKeys(loadConfig({ HTMLDROP_DATA_DIR: dataDir }));
    const file = path.join(dataDir, SECRET_FILE_NAME);
    const [current] = fs.readFileSync(file, 'utf8').trim().split('\n');
    const rotated = await runCli(['secret', 'rotate'], { HTMLDROP_DATA_DIR: dataDir });
    expect(rotated.code, rotated.stderr).toBe(0);
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe(current);
    const refused = await runCli(['secret', 'rotate'], { HTMLDROP_DATA_DIR: dataDir, HTMLDROP_SECRET: 'x'.repeat(40) });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('HTMLDROP_SECRET_PREVIOUS');
  });
});

describe('HTMLDROP_SECRET', () => {
  it('is used instead of a key file; instances with the same secret accept each other, others do not', () => {
    const dataDir = fresh();
    const a = loadSigningKeys(loadConfig({ HTMLDROP_DATA_DIR: dataDir, HTMLDROP_SECRET: 's'.repeat(40) }));
    expect(a.source).toBe('HTMLDROP_SECRET');
    expect(fs.existsSync(path.join(dataDir, SECRET_FILE_NAME))).toBe(false);
    const grant = createCapabilities(a.capability, clock, 60_000).issue('d', 3).token;
    const same = signingKeysFromSecret('s'.repeat(40));
    const other = signingKeysFromSecret('t'.repeat(40));
    expect(createCapabilities(same.capability, clock, 60_000).verify(grant, 'd', 3)).toBe(true);
    expect(createCapabilities(other.capability, clock, 60_000).verify(grant, 'd', 3)).toBe(false);
    // Rotation through the environment: the old value as HTMLDROP_SECRET_PREVIOUS keeps old grants working.
    const rotated = signingKeysFromSecret('t'.repeat(40), 's'.repeat(40));
    expect(createCapabilities(rotated.capability, clock, 60_000).verify(grant, 'd', 3)).toBe(true);
    // One purpose's key never verifies another's.
    expect(a.capability[0]?.equals(a.session[0] ?? Buffer.alloc(0))).toBe(false);
  });

  it('must be at least 32 characters', () => {
    expect(() => loadConfig({ HTMLDROP_SECRET: 'short' })).toThrow(/at least 32 characters/);
    expect(() => loadConfig({ HTMLDROP_SECRET_PREVIOUS: 'short' })).toThrow(/HTMLDROP_SECRET_PREVIOUS/);
  });
});

for (const dialect of DIALECTS) {
  describe(`the database (${dialect})`, () => {
    it('holds no signing key after the upgrade, even where an earlier version stored them', async () => {
      const database = await createTestDatabase(dialect);
      const db = await openAtMigration(database, '0003-device-requests');
      try {
        // What the previous version kept in the database.
        await db
          .insertInto('settings')
          .values([
            { key: 'capability_key', value: 'old-capability-key' },
            { key: 'session_key', value: 'old-session-key' },
          ])
          .execute();
        const store = database.open();
        await store.migrate();
        await store.close();
        const rows = await db.selectFrom('settings').selectAll().execute();
        expect(rows.filter((r) => /key/.test(r.key))).toEqual([]);
      } finally {
        await db.destroy();
        await database.drop();
      }
    });
  });
}

describe('a service with a secret from the environment', () => {
  it('signs passcode capabilities that another instance with the same secret accepts', async () => {
    const env = { HTMLDROP_SECRET: 'q'.repeat(44) };
    const a = await createHarness({ env });
    try {
      const token = await a.token('owner');
      const created = await a.call('POST', '/api/drops', {
        token,
        body: { title: 't', html: page(), passcode: 'letmein' },
      });
      const unlocked = await a.call('POST', `/p/${created.json.slug}/unlock`, {
        rawBody: 'passcode=letmein',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      const cookie = String(unlocked.headers['set-cookie']).split(';')[0] ?? '';
      expect(cookie).toMatch(/^hd_cap=/);
      const grant = decodeURIComponent(cookie.slice('hd_cap='.length));
      // Another instance holds the same secret: the grant (slug, passcode generation 1) verifies there.
      const keysB = signingKeysFromSecret('q'.repeat(44));
      expect(createCapabilities(keysB.capability, clock, 60_000).verify(grant, created.json.slug, 1)).toBe(true);
      expect(
        createCapabilities(signingKeysFromSecret('r'.repeat(44)).capability, clock, 60_000).verify(
          grant,
          created.json.slug,
          1,
        ),
      ).toBe(false);
    } finally {
      await a.close();
    }
  });
});
