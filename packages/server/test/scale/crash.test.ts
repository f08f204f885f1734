/**
 * A crash mid-write loses nothing acknowledged: the built service takes concurrent creates and new versions, is
 * killed with SIGKILL at a random moment, and restarted on the same database; every write it had answered with
 * 2xx is there, with the exact bytes, on SQLite and on PostgreSQL. Writes cut off by the kill may or may not have
 * landed; none lands half (a drop is never without its version 1). And a request with an Idempotency-Key killed
 * mid-request holds its key only for the claim's short lease: a retry is told how long, then runs (PostgreSQL,
 * where a row lock holds the request at a known point).
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_LEASE_MS } from '../../src/http/idempotency.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../databases.js';
import { freePort, type RunningServer, runCli, startServer } from '../process.js';

const ROUNDS = 3;
const WRITERS = 8;

interface Acknowledged {
  readonly slug: string;
  readonly version: number;
  readonly html: string;
}

const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const database of databases) await database.drop();
});

/** One writer: creates a drop, then adds versions to it, until the service goes away. */
async function writer(
  base: string,
  token: string,
  id: number,
  acknowledged: Acknowledged[],
  onAcknowledged: () => void,
): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  let slug: string | undefined;
  for (let n = 0; ; n++) {
    const html = `<!doctype html><title>w${id}</title><p>writer ${id} write ${n} ${'x'.repeat(2000 + n * 37)}</p>`;
    try {
      const response =
        slug === undefined
          ? await fetch(`${base}/api/drops`, {
              method: 'POST',
              headers,
              body: JSON.stringify({ title: `w${id}`, html }),
            })
          : await fetch(`${base}/api/drops/${slug}`, { method: 'PUT', headers, body: JSON.stringify({ html }) });
      if (!response.ok) continue;
      const drop = (await response.json()) as { slug: string; latest_version: number };
      slug = drop.slug;
      acknowledged.push({ slug: drop.slug, version: drop.latest_version, html });
      onAcknowledged();
    } catch {
      return; // the service was killed: this write was not acknowledged
    }
  }
}

for (const dialect of DIALECTS) {
  describe(`kill -9 during writes (${dialect})`, () => {
    it(`keeps every acknowledged write over ${ROUNDS} crashes`, async () => {
      const database = await createTestDatabase(dialect);
      databases.push(database);
      const env: Record<string, string> = {
        HTMLDROP_DATA_DIR: database.dataDir,
        HTMLDROP_MAX_WRITES_PER_MINUTE: '100000',
        HTMLDROP_MAX_WRITES_PER_DAY: '100000',
        ...(database.databaseUrl === undefined ? {} : { HTMLDROP_DATABASE_URL: database.databaseUrl }),
      };
      const minted = await runCli(['token', 'create', '--user', 'crash'], env);
      expect(minted.code, minted.stderr).toBe(0);
      const token = minted.stdout.trim();
      const acknowledged: Acknowledged[] = [];
      const port = String(await freePort());
      for (let round = 0; round < ROUNDS; round++) {
        const server: RunningServer = await startServer({ ...env, PORT: port });
        // The kill comes at a random moment after every writer has had a few writes answered (however loaded the
        // machine is), so each round crashes in the middle of a stream of writes.
        const target = acknowledged.length + 2 * WRITERS;
        let reached: () => void = () => undefined;
        const enough = new Promise<void>((resolve) => {
          reached = resolve;
        });
        const writers = Array.from({ length: WRITERS }, (_, i) =>
          writer(server.baseUrl, token, round * 100 + i, acknowledged, () => {
            if (acknowledged.length >= target) reached();
          }),
        );
        await enough;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 300));
        await server.stop('SIGKILL');
        await Promise.all(writers);
      }
      expect(acknowledged.length).toBeGreaterThan(ROUNDS * WRITERS);

      const server = await startServer({ ...env, PORT: port });
      try {
        const headers = { authorization: `Bearer ${token}` };
        for (const write of acknowledged) {
          const version = await fetch(`${server.baseUrl}/api/drops/${write.slug}/v/${write.version}`, { headers });
          expect(version.status, `${write.slug} v${write.version}`).toBe(200);
          const raw = await fetch(`${server.baseUrl}/p/${write.slug}/raw?v=${write.version}`);
          expect(await raw.text()).toContain(write.html.slice(-200));
        }
        // Nothing half-written: every drop has its version 1.
        const list = (await (await fetch(`${server.baseUrl}/api/drops?pageSize=200`, { headers })).json()) as {
          data: Array<{ slug: string }>;
        };
        for (const drop of list.data) {
          const versions = (await (
            await fetch(`${server.baseUrl}/api/drops/${drop.slug}/versions`, { headers })
          ).json()) as Array<{ version: number }>;
          expect(versions.map((v) => v.version)).toContain(1);
        }
      } finally {
        await server.stop();
      }
    }, 120_000);
  });
}

/** Resolves when `check` is true, asking again every 50 ms (the service's progress is only visible in the database). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('kill -9 during a write with an Idempotency-Key (postgres)', () => {
  it('a running claim is renewed past its lease; after the kill a retry waits at most the lease, then runs once', async () => {
    const database = await createTestDatabase('postgres');
    databases.push(database);
    const env = { HTMLDROP_DATA_DIR: database.dataDir, HTMLDROP_DATABASE_URL: String(database.databaseUrl) };
    const minted = await runCli(['token', 'create', '--user', 'keyed'], env);
    expect(minted.code, minted.stderr).toBe(0);
    const token = minted.stdout.trim();
    const lock = new pg.Client({ connectionString: database.databaseUrl });
    await lock.connect();
    const port = String(await freePort());
    const first = await startServer({ ...env, PORT: port });
    const send = () =>
      fetch(`${first.baseUrl}/api/drops`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'k-1' },
        body: JSON.stringify({ title: 'Keyed', html: '<!doctype html><p>keyed</p>' }),
      });
    try {
      // Hold the account's row: the create claims its key, then waits for the row to count the new drop.
      await lock.query('BEGIN');
      await lock.query(`SELECT id FROM accounts WHERE login = 'keyed' FOR UPDATE`);
      const lockPid = (await lock.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const cutOff = send().catch(() => 'cut off');
      const observer = new pg.Client({ connectionString: database.databaseUrl });
      await observer.connect();
      await until(async () => {
        const waiting = await observer.query(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
          [lockPid],
        );
        return waiting.rows[0].n > 0;
      }, 'the create to wait for the account row');
      // Running longer than a lease: renewed, so a retry still finds it in progress.
      await new Promise((resolve) => setTimeout(resolve, IDEMPOTENCY_LEASE_MS + 1000));
      const running = await send();
      expect(running.status).toBe(409);
      expect(Number(running.headers.get('retry-after'))).toBeLessThanOrEqual(IDEMPOTENCY_LEASE_MS / 1000);
      await first.stop('SIGKILL');
      expect(await cutOff).toBe('cut off');
      await lock.query('ROLLBACK');
      await observer.end();

      const second = await startServer({ ...env, PORT: port });
      try {
        const retry = await send();
        expect(retry.status).toBe(409);
        const wait = Number(retry.headers.get('retry-after'));
        expect(wait).toBeGreaterThanOrEqual(1);
        expect(wait).toBeLessThanOrEqual(IDEMPOTENCY_LEASE_MS / 1000);
        expect(((await retry.json()) as { error: { details: { retry_after_seconds: number } } }).error.details).toEqual(
          {
            retry_after_seconds: wait,
          },
        );
        // What a client does: wait as told, then send the same request again.
        await new Promise((resolve) => setTimeout(resolve, wait * 1000));
        const done = await send();
        expect(done.status, await done.clone().text()).toBe(201);
        const again = await send();
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        const list = await fetch(`${second.baseUrl}/api/drops`, { headers: { authorization: `Bearer ${token}` } });
        expect(((await list.json()) as { pagination: { total_items: number } }).pagination.total_items).toBe(1);
      } finally {
        await second.stop();
      }
    } finally {
      await lock.end();
      await first.stop('SIGKILL');
    }
  }, 90_000);
});
