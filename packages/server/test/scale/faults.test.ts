/**
 * Coordination failures under load (docs/architecture.md, "When the bus is down"): instances on one PostgreSQL lose
 * their invalidation bus (a Redis of their own that the test kills and starts again; the PostgreSQL LISTEN
 * connection, which the test terminates). While the bus is down an instance reports not ready and serves a cached
 * document for at most the configured bound; once it is back, nothing stale or newly locked is served.
 *
 * Changes made while the bus is down are made as another instance would make them, through the domain functions
 * on the shared database, with an announcement that reaches nobody (as when a publish fails).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, loadConfig } from '../../src/config.js';
import type { InvalidationBus } from '../../src/coordination/bus.js';
import { createPostgresBus } from '../../src/coordination/postgres-bus.js';
import { ensureAccount } from '../../src/domain/accounts.js';
import * as drops from '../../src/domain/drops.js';
import type { Store } from '../../src/domain/store.js';
import { startServer } from '../../src/server.js';
import { createKyselyStore } from '../../src/storage/kysely-store.js';
import { openPostgres } from '../../src/storage/postgres.js';
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from '../databases.js';
import { page } from '../helpers.js';
import { freePort } from '../process.js';

/** How long an instance may serve a cached document while its bus is down (short, to keep the test fast). */
const BOUND_MS = 800;
/** Scheduling slack on a loaded 2-core machine. */
const SLACK_MS = 700;

type Instance = Awaited<ReturnType<typeof startServer>> & { base: string };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function startInstance(env: Record<string, string>): Promise<Instance> {
  const config = loadConfig({
    HTMLDROP_LOG_LEVEL: 'silent',
    HTMLDROP_CACHE_MAX_AGE_WITHOUT_BUS_MS: String(BOUND_MS),
    PORT: String(await freePort()),
    ...env,
  });
  const started = await startServer(config);
  return { ...started, base: `http://127.0.0.1:${config.port}` };
}

async function raw(instance: Instance, slug: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${instance.base}/p/${slug}/raw`);
  return { status: response.status, text: await response.text() };
}

async function readiness(instance: Instance): Promise<{ status: number; body: { error?: { details?: unknown } } }> {
  const response = await fetch(`${instance.base}/readyz`);
  return { status: response.status, body: (await response.json()) as { error?: { details?: unknown } } };
}

/** Requests `slug` from `instance` back to back until `fresh` holds; returns how long after `since` that was. */
async function staleFor(
  instance: Instance,
  slug: string,
  since: number,
  fresh: (answer: { status: number; text: string }) => boolean,
): Promise<number> {
  for (;;) {
    const answer = await raw(instance, slug);
    const elapsed = Date.now() - since;
    if (fresh(answer)) return elapsed;
    if (elapsed > 10_000) throw new Error(`still stale after 10 s (${answer.status})`);
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  await waitFor(`redis on port ${port}`, () => portOpen(port));
  return child;
}

/**
 * Writes as another instance would: on the shared database, then announced on `bus` (a failed announcement is
 * dropped, as the service logs and drops it).
 */
function otherInstance(store: Store, bus: InvalidationBus | undefined) {
  return {
    store,
    clock: { now: () => Date.now() },
    limits: DEFAULT_LIMITS,
    listener: { dropChanged: async (slug: string) => bus?.publish(slug).catch(() => undefined) },
  };
}

async function setUp(extraEnv: Record<string, string>) {
  const database = await createTestDatabase('postgres');
  const env = {
    HTMLDROP_DATA_DIR: database.dataDir,
    HTMLDROP_DATABASE_URL: database.databaseUrl ?? '',
    HTMLDROP_SECRET: 'f'.repeat(40),
    ...extraEnv,
  };
  const store = createKyselyStore(openPostgres(database.databaseUrl ?? ''));
  await store.migrate();
  const account = await ensureAccount(
    { store, clock: { now: () => Date.now() } },
    { provider: 'local', subject: 'f', login: 'f' },
  );
  return { database, env, store, accountId: account.id };
}

describe('two instances whose Redis is killed and started again', () => {
  let database: TestDatabase;
  let store: Store;
  let accountId: string;
  let redisPort: number;
  let redis: ChildProcess | undefined;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    redisPort = await freePort();
    redis = await startRedis(redisPort);
    ({ database, store, accountId } = await setUp({}));
    const env = {
      HTMLDROP_DATA_DIR: database.dataDir,
      HTMLDROP_DATABASE_URL: database.databaseUrl ?? '',
      HTMLDROP_SECRET: 'f'.repeat(40),
      HTMLDROP_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    };
    a = await startInstance(env);
    b = await startInstance(env);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await store?.close();
    redis?.kill('SIGKILL');
    await database?.drop();
  });

  it('not ready while down, stale at most the bound, nothing stale or newly locked once back', async () => {
    // While Redis is down nothing can be announced: the writes below reach B only through the database.
    const writer = otherInstance(store, undefined);
    const { slug } = await drops.createDrop(writer, accountId, { title: 'faults', html: page('version-one') });
    const other = await drops.createDrop(writer, accountId, { title: 'to lock', html: page('open') });
    // Both instances have both documents cached.
    for (const instance of [a, b]) {
      expect((await raw(instance, slug)).text).toContain('version-one');
      expect((await raw(instance, other.slug)).status).toBe(200);
      expect((await readiness(instance)).status).toBe(200);
    }

    redis?.kill('SIGKILL');
    await waitFor('B to report its bus down', async () => (await readiness(b)).status === 503);
    expect((await readiness(b)).body.error?.details).toEqual({ checks: { database: 'ok', bus: 'down' } });

    // Changes nobody can announce: a new version, and a passcode on the other drop.
    const changedAt = Date.now();
    await drops.addVersion(writer, accountId, slug, { html: page('version-two') });
    await drops.setPasscode(writer, accountId, other.slug, 'lock-it-now');
    const stale = await staleFor(b, slug, changedAt, (r) => r.text.includes('version-two'));
    const unlocked = await staleFor(b, other.slug, changedAt, (r) => r.status === 401);
    expect(stale).toBeLessThanOrEqual(BOUND_MS + SLACK_MS);
    expect(unlocked).toBeLessThanOrEqual(BOUND_MS + SLACK_MS);
    // Under load for a while longer: never the old document again.
    for (let i = 0; i < 50; i++) {
      expect((await raw(b, slug)).text).toContain('version-two');
      expect((await raw(b, other.slug)).status).toBe(401);
    }

    // Another change while still down, then Redis comes back: B is ready again and serves the latest at once.
    await drops.addVersion(writer, accountId, slug, { html: page('version-three') });
    redis = await startRedis(redisPort);
    await waitFor('B ready again', async () => (await readiness(b)).status === 200);
    expect((await raw(b, slug)).text).toContain('version-three');
    expect((await raw(b, other.slug)).status).toBe(401);

    // And the bus carries announcements again: a write through A is seen by B at once.
    const token = await (async () => {
      const { issueToken } = await import('../../src/domain/accounts.js');
      return (await issueToken(store, { now: () => Date.now() }, accountId, 'faults')).token;
    })();
    const put = await fetch(`${a.base}/api/drops/${slug}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ html: page('version-four') }),
    });
    expect(put.status).toBe(200);
    expect((await raw(b, slug)).text).toContain('version-four');
  }, 60_000);
});

describe('an instance whose PostgreSQL LISTEN connection is terminated', () => {
  let database: TestDatabase;
  let store: Store;
  let accountId: string;
  let b: Instance;
  const application = `faults_${process.pid}_${Date.now()}`;

  beforeAll(async () => {
    ({ database, store, accountId } = await setUp({}));
    // Its own application_name, so the test terminates this instance's connections and nobody else's.
    const url = new URL(database.databaseUrl ?? '');
    url.searchParams.set('application_name', application);
    b = await startInstance({
      HTMLDROP_DATA_DIR: database.dataDir,
      HTMLDROP_DATABASE_URL: url.toString(),
      HTMLDROP_SECRET: 'f'.repeat(40),
    });
  });
  afterAll(async () => {
    await b?.close();
    await store?.close();
    await database?.drop();
  });

  async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  /** The backend pids of this instance's LISTEN connections now. */
  const listeners = () =>
    admin(async (client) => {
      const { rows } = await client.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN %'`,
        [application],
      );
      return rows.map((row) => row.pid);
    });

  /** Terminates this instance's LISTEN connection; returns its pid. */
  async function terminateListener(): Promise<number> {
    const [pid] = await listeners();
    expect(pid).toBeDefined();
    await admin((client) => client.query('SELECT pg_terminate_backend($1)', [pid]));
    return pid ?? 0;
  }

  /** Waits until the instance listens again, on a new connection. */
  const listensAgain = (old: number) =>
    waitFor('a new LISTEN connection', async () => {
      const pids = await listeners();
      return pids.length === 1 && !pids.includes(old);
    });

  it('reconnects and listens again, clearing what it may have missed; never stale beyond the bound', async () => {
    const publisher = createPostgresBus(database.databaseUrl ?? '');
    const writer = otherInstance(store, publisher);
    const { slug } = await drops.createDrop(writer, accountId, { title: 'pg', html: page('pg-one') });
    expect((await raw(b, slug)).text).toContain('pg-one');
    expect((await readiness(b)).status).toBe(200);

    const first = await terminateListener();
    const changedAt = Date.now();
    await drops.addVersion(writer, accountId, slug, { html: page('pg-two') });
    expect(await staleFor(b, slug, changedAt, (r) => r.text.includes('pg-two'))).toBeLessThanOrEqual(
      BOUND_MS + SLACK_MS,
    );

    // It listens again: a new LISTEN connection for this instance.
    await listensAgain(first);
    await waitFor('B ready again', async () => (await readiness(b)).status === 200);
    // Once it listens again, announcements reach it: B stays trusted and still sees the next change at once.
    await drops.addVersion(writer, accountId, slug, { html: page('pg-four') });
    expect((await raw(b, slug)).text).toContain('pg-four');
    // Terminated again: it keeps retrying until it listens.
    await listensAgain(await terminateListener());
    await waitFor('B ready after a second loss', async () => (await readiness(b)).status === 200);
    await publisher.close();
  }, 60_000);
});
