/**
 * The composition root (docs/architecture.md, "Process lifecycle"): config -> store (migrated) -> counters, bus and
 * clock -> services -> app -> listen; the periodic jobs' timers (flush, purge); graceful shutdown on SIGINT/SIGTERM.
 * The only place that knows every part.
 */
import { type Config, ConfigError, isLoopbackHost, loadConfig } from './config.js';
import { createFollowingClock } from './domain/clock.js';
import type { Store } from './domain/store.js';
import { type App, buildApp } from './http/app.js';
import { keepTickObjectShape } from './serve/tick-shape.js';
import { createServices, type Services } from './services.js';
import { openStore } from './storage/index.js';

/** Expired drops are deleted within the hour (docs/api.md, "Expiry"): a purge every 10 minutes on every instance. */
const PURGE_INTERVAL_MS = 10 * 60_000;

/** Starts the service; resolves once it listens. */
export async function startServer(
  config: Config,
): Promise<{ app: App; store: Store; services: Services; close: () => Promise<void> }> {
  if (config.authProvider === 'local' && !isLoopbackHost(config.host) && !config.allowLocalAuth) {
    throw new ConfigError(
      `the local identity provider lets anyone sign in as anyone; refusing to listen on ${config.host}. ` +
        'Use HTMLDROP_AUTH_PROVIDER=github|oidc, HOST=127.0.0.1, or HTMLDROP_ALLOW_LOCAL_AUTH=1.',
    );
  }
  // Process-wide, once: keeps node:http's per-request nextTick entries on V8's fast path (serve/tick-shape.ts).
  const tickShapeKept = keepTickObjectShape();
  // Until the app's logger exists, a lost idle connection is reported on stderr.
  let onConnectionError = (error: Error) =>
    console.error(`htmldrop-server: database connection lost: ${error.message}`);
  const store = await openStore(config, (error) => onConnectionError(error));
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  // Several instances: Redis holds counters and carries invalidations; without it, PostgreSQL does both
  // (counters in tables, LISTEN/NOTIFY). Time comes from the database so every instance agrees on windows.
  // Each driver is loaded only when configured (start-up time and memory).
  const redis =
    config.redisUrl === undefined
      ? undefined
      : (await import('./coordination/redis.js')).createRedisCoordination(config.redisUrl, config.redisPrefix);
  const bus =
    redis?.bus ??
    (config.databaseUrl === undefined
      ? undefined
      : (await import('./coordination/postgres-bus.js')).createPostgresBus(config.databaseUrl));
  let onClockError = (error: unknown) =>
    console.error(`htmldrop-server: could not read the database's time: ${(error as Error).message}`);
  const following =
    config.databaseUrl === undefined
      ? undefined
      : await createFollowingClock(() => store.databaseTime(), { report: (error) => onClockError(error) });
  const services = createServices({
    config,
    store,
    ...(following === undefined ? {} : { clock: following.clock }),
    ...(redis === undefined ? {} : { counter: redis.counter }),
    ...(bus === undefined ? {} : { bus }),
  });
  const app = await buildApp(services, { logger: { level: config.logLevel } });
  await services.connect(app.log);
  onClockError = (error) =>
    app.log.warn({ err: error }, "could not read the database's time; keeping the last measured offset");
  onConnectionError = (error) =>
    app.log.warn({ err: error }, 'database connection lost while idle; the pool connects again on the next query');
  if (!tickShapeKept)
    app.log.warn('could not hold a nextTick entry: the raw path may run slower (serve/tick-shape.ts)');
  if (config.databaseUrl !== undefined && config.secret === undefined) {
    app.log.warn(
      `signing keys come from ${config.dataDir}/secret.key: instances that do not share that file do not accept each ` +
        "other's passcode capabilities and sign-in sessions; set HTMLDROP_SECRET to the same value on every instance",
    );
  }
  const timers = startTimers(services, app.log);
  await app.listen({ port: config.port, host: config.host });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      timers.stop();
      following?.stop();
      await app.close();
      // The attempts under way end (each within its timeout) and are recorded before the store closes.
      await services.webhookWorker.stop();
      // After the last request: the counts it added are written before the store closes.
      await timers.flush();
      await (redis === undefined ? bus?.close() : redis.close());
      await store.close();
    })();
    return closing;
  };
  return { app, store, services, close };
}

/**
 * The periodic jobs: coalesced counters written every flush interval, expired things purged every 10 minutes, and the
 * webhooks' delivery worker (webhooks/worker.ts), which polls the outbox every second.
 */
function startTimers(services: Services, log: App['log']): { stop(): void; flush(): Promise<void> } {
  const flush = () => services.flushCounters().catch((error: unknown) => log.error({ err: error }, 'flush failed'));
  const flushTimer = setInterval(flush, services.config.flushIntervalMs);
  const purgeTimer = setInterval(() => {
    services.purge().catch((error: unknown) => log.error({ err: error }, 'purge failed'));
  }, PURGE_INTERVAL_MS);
  flushTimer.unref();
  purgeTimer.unref();
  services.webhookWorker.start(log);
  return {
    stop() {
      clearInterval(flushTimer);
      clearInterval(purgeTimer);
    },
    flush,
  };
}

/**
 * A hint, not a rule (the Public Suffix List is not consulted): the service's host name when it and the content
 * domain end in the same two labels (`drops.example.com` and `{id}.u.example.com`), as one registrable domain would.
 */
export function mayShareSite(config: Pick<Config, 'baseUrl' | 'contentOrigin'>): string | undefined {
  if (config.contentOrigin === undefined) return undefined;
  const service = new URL(config.baseUrl).hostname;
  const content = new URL(config.contentOrigin.replace('{id}', 'x')).hostname;
  const lastTwo = (host: string) => host.split('.').slice(-2).join('.');
  if (isLoopbackHost(service) || /^[\d.]+$|^\[/.test(service) || !service.includes('.')) return undefined;
  return lastTwo(service) === lastTwo(content) ? service : undefined;
}

/** Runs the service until SIGINT/SIGTERM; exits the process on a start-up failure. */
export async function serve(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(`htmldrop-server: ${(error as Error).message}`);
    process.exit(2);
  }
  // The handlers go in before the start: a Ctrl-C while the service starts (migrating, or between its listen and
  // here) closes it gracefully once it has started, instead of killing it with a half-opened database. A second
  // signal of the same kind gets node's default and ends the process at once.
  let requested: string | undefined;
  let shutdown: ((signal: string) => void) | undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      if (requested !== undefined) return;
      requested = signal;
      shutdown?.(signal);
    });
  }
  try {
    const { app, close } = await startServer(config);
    app.log.info(`htmldrop listening on ${config.baseUrl} (data: ${config.databaseUrl ? 'postgres' : config.dataDir})`);
    app.log.info(
      config.contentOrigin === undefined
        ? 'drops run in an opaque origin (no storage): set HTMLDROP_CONTENT_ORIGIN to give each its own (docs/operating.md, "Content origins")'
        : `each drop on its own origin: ${config.contentOrigin}`,
    );
    const sameSite = mayShareSite(config);
    if (sameSite !== undefined) {
      app.log.warn(
        `the content domain and ${sameSite} look like one site: drops could then send the service's SameSite cookies along; use a registrable domain of its own (docs/operating.md, "Content origins")`,
      );
    }
    shutdown = (signal) => {
      app.log.info(`${signal}: closing`);
      close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    if (requested !== undefined) shutdown(requested);
  } catch (error) {
    const message = error instanceof ConfigError ? error.message : `failed to start: ${(error as Error).message}`;
    console.error(`htmldrop-server: ${message}`);
    if (!(error instanceof ConfigError) && (error as Error).cause !== undefined) console.error((error as Error).cause);
    // A setting the service refuses is bad configuration (exit 2), like one it cannot parse.
    process.exit(error instanceof ConfigError ? 2 : 1);
  }
}
