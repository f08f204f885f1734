/**
 * A crash mid-write loses nothing acknowledged: the built service takes concurrent creates and new versions, is
 * killed with SIGKILL at a random moment, and restarted on the same database; every write it had answered with
 * 2xx is there, with the exact bytes, on SQLite and on PostgreSQL. Writes cut off by the kill may or may not have
 * landed; none lands half (a drop is never without its version 1).
 */
import { afterAll, describe, expect, it } from 'vitest';
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
