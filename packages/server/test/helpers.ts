/** Test harness: a real app on a real SQLite database in a temporary directory, driven through inject(). */
import type { LightMyRequestResponse } from 'fastify';
import { type Config, type Limits, loadConfig } from '../src/config.js';
import { ensureAccount, issueToken } from '../src/domain/accounts.js';
import type { Clock } from '../src/domain/clock.js';
import type { Store } from '../src/domain/store.js';
import { type App, buildApp } from '../src/http/app.js';
import type { MarkdownCopyOptions } from '../src/serve/markdown-copy.js';
import { createServices, type ServiceOptions, type Services } from '../src/services.js';
import type { StoreTuning } from '../src/storage/kysely-store.js';
import { createTestDatabase, type DialectName, type TestDatabase } from './databases.js';

export { tempDir } from './temp.js';

export interface TestClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
}

/** A clock that only moves when told to. */
export function createTestClock(start = Date.UTC(2026, 10, 21, 12, 0, 0)): TestClock {
  let now = start;
  return {
    now: () => now,
    set: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

export interface Harness {
  readonly app: App;
  /** The services the app was built over (flush the counters, purge, look into the raw cache). */
  readonly services: Services;
  readonly store: Store;
  readonly config: Config;
  readonly dataDir: string;
  /** The database under the app (open raw views of it with openAtMigration to look at what is stored). */
  readonly database: TestDatabase;
  /** Mints a token for `login` (account created on first use), as the operator command does. */
  token(login?: string, label?: string): Promise<string>;
  /** inject() with JSON in and out. */
  call(method: string, url: string, options?: CallOptions): Promise<Reply>;
  /** Another store on the same database, as another instance would open it (the caller closes it). */
  openStore(): Store;
  close(): Promise<void>;
}

export interface CallOptions {
  readonly token?: string | undefined;
  readonly body?: unknown;
  /** Sent as-is (no JSON encoding). */
  readonly rawBody?: string;
  readonly headers?: Record<string, string>;
}

export interface Reply {
  readonly status: number;
  readonly headers: LightMyRequestResponse['headers'];
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience for reading JSON answers
  readonly json: any;
}

export interface HarnessOptions {
  readonly limits?: Partial<Limits>;
  readonly clock?: Clock;
  readonly env?: Record<string, string>;
  /** The readable copy's converter bounds (timeouts, queue, cache, idle time). */
  readonly markdown?: MarkdownCopyOptions;
  /** The screenshot queue's bounds (with HTMLDROP_CHROMIUM in `env`). */
  readonly screenshots?: ServiceOptions['screenshots'];
  /** The database; the suite's (TEST_DIALECT) when absent. */
  readonly dialect?: DialectName;
  /** The store's bounds, shrunk (storage/kysely-store.ts). */
  readonly store?: StoreTuning;
}

/** An app on a fresh database of the suite's dialect (TEST_DIALECT: SQLite, or PostgreSQL in its own schema). */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const database = await createTestDatabase(options.dialect);
  const dataDir = database.dataDir;
  const base = loadConfig({ HTMLDROP_DATA_DIR: dataDir, HTMLDROP_BASE_URL: 'http://drops.test', ...options.env });
  const config: Config = { ...base, limits: { ...base.limits, ...options.limits } };
  const store = database.open(options.store);
  await store.migrate();
  const clock = options.clock ?? { now: () => Date.now() };
  const markdown = options.markdown === undefined ? {} : { markdown: options.markdown };
  const screenshots = options.screenshots === undefined ? {} : { screenshots: options.screenshots };
  const { app, services } = await buildTestApp({ config, store, clock, ...markdown, ...screenshots });
  return {
    app,
    services,
    store,
    config,
    dataDir,
    database,
    async token(login = 'alice', label = 'test') {
      const account = await ensureAccount({ store, clock }, { provider: 'local', subject: login, login });
      return (await issueToken(store, clock, account.id, label)).token;
    },
    async call(method, url, callOptions = {}) {
      const headers: Record<string, string> = { ...callOptions.headers };
      if (callOptions.token !== undefined) headers.authorization = `Bearer ${callOptions.token}`;
      let payload: string | undefined;
      if (callOptions.rawBody !== undefined) payload = callOptions.rawBody;
      else if (callOptions.body !== undefined) {
        payload = JSON.stringify(callOptions.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers,
        ...(payload === undefined ? {} : { payload }),
      });
      let json: unknown;
      try {
        json = response.body === '' ? undefined : JSON.parse(response.body);
      } catch {
        json = undefined;
      }
      return { status: response.statusCode, headers: response.headers, text: response.body, json };
    },
    openStore: () => database.open(),
    async close() {
      await app.close();
      await services.flushCounters().catch(() => undefined);
      // A test may have closed the store on purpose (to provoke failures); the database is dropped regardless.
      await store.close().catch(() => undefined);
      await database.drop();
    },
  };
}

/** Services and an app over them, as the composition root (server.ts) wires them; ready to inject. */
export async function buildTestApp(options: ServiceOptions): Promise<{ app: App; services: Services }> {
  const services = createServices(options);
  const app = await buildApp(services);
  await services.connect(app.log);
  await app.ready();
  return { app, services };
}

/** A small valid document. */
export function page(text = 'hello'): string {
  return `<!doctype html><html><head><title>${text}</title></head><body><p>${text}</p></body></html>`;
}
