/**
 * Several service instances in this process over one database, each listening on a loopback port and joined by a
 * real bus: Redis on SQLite (the file is shared), PostgreSQL's LISTEN/NOTIFY on PostgreSQL. What the events stream
 * and the webhooks' outbox are tested with (docs/api.md, "Live pages and webhooks").
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type Config, type Limits, loadConfig } from '../src/config.js';
import type { InvalidationBus } from '../src/coordination/bus.js';
import { createPostgresBus } from '../src/coordination/postgres-bus.js';
import { createRedisCoordination } from '../src/coordination/redis.js';
import { ensureAccount, issueToken } from '../src/domain/accounts.js';
import type { Store } from '../src/domain/store.js';
import { type App, type AppOptions, buildApp } from '../src/http/app.js';
import { createServices, type ServiceOptions, type Services } from '../src/services.js';
import { createTestDatabase, REDIS_URL, type TestDatabase } from './databases.js';
import { freePort } from './process.js';

export interface Instance {
  readonly app: App;
  readonly services: Services;
  readonly store: Store;
  readonly url: string;
  close(): Promise<void>;
}

export interface Cluster {
  readonly database: TestDatabase;
  readonly instances: Instance[];
  readonly config: Config;
  /** The `index`th instance (throws when there is none). */
  at(index: number): Instance;
  /** Adds one more instance (sharing everything). */
  add(): Promise<Instance>;
  token(login?: string): Promise<string>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  readonly size?: number;
  readonly env?: Record<string, string>;
  readonly limits?: Partial<Limits>;
  readonly app?: AppOptions;
  readonly services?: Partial<ServiceOptions>;
  /**
   * The first instance's address as the base URL, with this host name: `localhost` gives each drop its own origin
   * (`<label>.localhost`), as in own-origin.browser.test.ts.
   */
  readonly hostName?: 'localhost';
  /** Runs each instance's webhook delivery worker, as the composition root's timers do. */
  readonly worker?: boolean;
}

/** `size` instances (2 by default) on a fresh database of the suite's dialect, with a shared signing secret. */
export async function createCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const database = await createTestDatabase();
  const prefix = `htmldrop-test-${randomBytes(4).toString('hex')}:`;
  const firstPort = await freePort();
  const base = loadConfig({
    HTMLDROP_DATA_DIR: database.dataDir,
    HTMLDROP_BASE_URL: `http://${options.hostName ?? '127.0.0.1'}:${firstPort}`,
    HTMLDROP_SECRET: randomBytes(32).toString('hex'),
    ...options.env,
  });
  const config: Config = { ...base, limits: { ...base.limits, ...options.limits } };
  const instances: Instance[] = [];
  const add = async (): Promise<Instance> => {
    const store = database.open();
    await store.migrate();
    let bus: InvalidationBus;
    let closeBus: () => Promise<void>;
    if (database.databaseUrl !== undefined) {
      bus = createPostgresBus(database.databaseUrl);
      closeBus = () => bus.close();
    } else {
      const redis = createRedisCoordination(REDIS_URL, prefix);
      bus = redis.bus;
      closeBus = () => redis.close();
    }
    const services = createServices({ config, store, bus, ...options.services });
    const app = await buildApp(services, options.app);
    await services.connect(app.log);
    await app.listen({ port: instances.length === 0 ? firstPort : 0, host: '127.0.0.1' });
    if (options.worker === true) services.webhookWorker.start(app.log);
    const { port } = app.server.address() as AddressInfo;
    let closed = false;
    const instance: Instance = {
      app,
      services,
      store,
      url: `http://127.0.0.1:${port}`,
      async close() {
        if (closed) return;
        closed = true;
        await app.close();
        await services.webhookWorker.stop();
        await services.flushCounters().catch(() => undefined);
        await closeBus().catch(() => undefined);
        await store.close().catch(() => undefined);
      },
    };
    instances.push(instance);
    return instance;
  };
  for (let i = 0; i < (options.size ?? 2); i += 1) await add();
  return {
    database,
    instances,
    config,
    at(index) {
      const instance = instances[index];
      if (instance === undefined) throw new Error(`no instance ${index}`);
      return instance;
    },
    add,
    async token(login = 'ann') {
      const store = instances[0]?.store as Store;
      const clock = { now: () => Date.now() };
      const account = await ensureAccount({ store, clock }, { provider: 'local', subject: login, login });
      return (await issueToken(store, clock, account.id, 'test')).token;
    },
    async close() {
      await Promise.all(instances.map((i) => i.close()));
      await database.drop();
    },
  };
}

/** A JSON call with a bearer token against one instance. */
export async function call(
  instance: Instance,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: test convenience for reading JSON answers
): Promise<{ status: number; json: any }> {
  const response = await fetch(`${instance.url}${path}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text === '' ? undefined : JSON.parse(text) };
}

export interface ReceivedEvent {
  readonly event: string;
  readonly data: string;
  /** performance.now() when it arrived. */
  readonly at: number;
}

export interface EventReader {
  readonly status: number;
  readonly headers: Headers;
  readonly events: ReceivedEvent[];
  /** Comments (keep-alives) seen. */
  readonly comments: string[];
  /** Resolves with the first event (from the start) that matches, or rejects after `ms`. */
  next(match: (event: ReceivedEvent) => boolean, ms?: number): Promise<ReceivedEvent>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens `url` as an event stream and parses what arrives (WHATWG HTML, "Server-sent events", the parts we send). */
export async function openEvents(url: string, headers: Record<string, string> = {}): Promise<EventReader> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: ReceivedEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  let endedResolve: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => {
    endedResolve = resolve;
  });
  const parse = (block: string) => {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments.push(line.slice(1).trim());
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length > 0) events.push({ event, data: data.join('\n'), at: performance.now() });
  };
  if (response.body !== null && response.status === 200) {
    (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            parse(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf('\n\n');
          }
          for (const wake of [...waiters]) wake();
        }
      } catch {
        // aborted by the test
      }
      endedResolve();
    })();
  } else {
    await response.body?.cancel();
    endedResolve();
  }
  return {
    status: response.status,
    headers: response.headers,
    events,
    comments,
    ended,
    next(match, ms = 2000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(match);
          if (found === undefined) return false;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching event within ${ms} ms; got ${JSON.stringify(events)}`));
        }, ms);
        if (!check()) waiters.add(check);
      });
    },
    close: () => abort.abort(),
  };
}
