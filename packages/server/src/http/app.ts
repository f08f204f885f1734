import { randomBytes } from 'node:crypto';
import http from 'node:http';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import type { Config } from '../config.js';
import { createCacheReceiver } from '../coordination/cache-receiver.js';
import { authenticate, type Caller, type TokenUseRecorder } from '../domain/accounts.js';
import type { Capabilities } from '../domain/capability.js';
import type { Clock } from '../domain/clock.js';
import type { DeviceFlowDeps } from '../domain/device-flow.js';
import type { DropDeps } from '../domain/drops.js';
import type { RateCounter } from '../domain/rate-counter.js';
import type { UnlockDeps, ViewCounter } from '../domain/viewing.js';
import type { WriteLimiter } from '../domain/write-limit.js';
import { ApiError } from '../errors.js';
import type { IdentityProvider } from '../identity/index.js';
import { createRawFastPath, type FastPath } from '../serve/fast-path.js';
import type { RawCache } from '../serve/raw-cache.js';
import { createServices, type ServiceOptions, type Services } from '../services.js';
import type { Store } from '../storage/store.js';
import { limitConnectionsPerClient } from './connection-limit.js';
import { installErrorHandlers } from './error-handler.js';
import { answerClientError, answerFrameworkError, answerShuttingDown } from './framework-errors.js';
import { parseJsonBody } from './json-body.js';
import { registerAccountRoutes } from './routes/account.js';
import { registerAuthRoutes } from './routes/auth.js';
import { registerDiscoveryRoutes } from './routes/discovery.js';
import { registerDropRoutes } from './routes/drops.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerPrototypeRoutes } from './routes/prototypes.js';
import { registerPublicRoutes } from './routes/public.js';
import { registerVerifyRoutes } from './routes/verify.js';
import { createSchemas, type Schemas } from './schemas.js';
import type { Signer } from './signed-cookie.js';
import { createValidatorCompiler } from './validation.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'owner': a valid bearer token is required (spec 5). */
    auth?: 'owner';
    /** Counts toward the per-account write limits (docs/api.md 8: POST/PUT/PATCH/DELETE under /api/drops, /api/prototypes). */
    write?: boolean;
  }
  interface FastifyRequest {
    caller: Caller | null;
    /** Gives back this request's write (docs/api.md 8: a request refused with 429 does not count). */
    releaseWrite: (() => Promise<void>) | null;
  }
}

export interface AppOptions extends ServiceOptions {
  readonly logger?: FastifyServerOptions['logger'];
}

/** Everything a route module needs. */
export interface RouteContext {
  readonly config: Config;
  readonly store: Store;
  readonly clock: Clock;
  readonly schemas: Schemas;
  readonly drops: DropDeps;
  readonly tokenUses: TokenUseRecorder;
  readonly rawCache: RawCache;
  readonly capabilities: Capabilities;
  readonly views: ViewCounter;
  readonly unlock: UnlockDeps;
  readonly device: DeviceFlowDeps;
  readonly identity: IdentityProvider;
  readonly signer: Signer;
  /** Shared counters for rate limits (the database, or Redis). */
  readonly counter: RateCounter;
  /** The authenticated caller of an owner route. */
  callerOf(request: { caller: Caller | null }): Caller;
}

export type App = FastifyInstance & {
  readonly ownerRoutes: ReadonlyArray<{ method: string; url: string }>;
  readonly services: {
    readonly tokenUses: TokenUseRecorder;
    readonly writeLimiter: WriteLimiter;
    readonly views: ViewCounter;
    readonly rawCache: RawCache;
    /** Writes every coalesced counter now (token last use, view counts). */
    flush(): Promise<void>;
  };
};

export async function buildApp(options: AppOptions): Promise<App> {
  const services = createServices(options);
  const { config, clock, bus, rawCache } = services;
  /** Set when the app starts closing: new requests on kept-alive connections get 503 shutting_down. */
  const state = { closing: false };
  const app = createFastify(config, options.logger, createRawFastPath(rawCache), state);
  await installRequestHandling(app, services);
  registerRoutes(app, services);
  services.onPublishFailure((error, slug) =>
    // The write is committed; other instances' caches may lag. Loud in the log, not a failed request.
    app.log.error({ err: error, slug }, 'invalidation not published'),
  );
  await bus.subscribe(createCacheReceiver(rawCache, config.cacheMaxAgeWithoutBusMs, app.log, () => clock.now()));
  keepCountersFlushed(app, services);
  app.addHook('preClose', async () => {
    state.closing = true;
  });
  return app as unknown as App;
}

/** Fastify with the service's server: timeouts, the connection cap, the shutdown answer, then the fast path. */
function createFastify(
  config: Config,
  logger: FastifyServerOptions['logger'],
  fastPath: FastPath,
  state: { readonly closing: boolean },
) {
  return Fastify({
    logger: logger ?? false,
    // Small by default; the routes that carry a document raise it (docs/api.md 8). Fastify refuses a body over the
    // cap from its Content-Length before reading it, and stops reading a chunked one at the cap.
    bodyLimit: config.limits.maxSmallBodyBytes,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // Per-request info logs cost throughput on the raw path; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    // Unique across restarts and instances, so a request id in a report finds its log line.
    genReqId: () => randomBytes(8).toString('hex'),
    trustProxy: config.trustProxy,
    // Requests arriving while the app closes are answered by the server factory below, in the service's shape.
    return503OnClosing: false,
    // Refusals before routing answer in the service's shapes too (http/framework-errors.ts).
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    forceCloseConnections: 'idle',
    // Cached open raw documents are answered before routing (serve/fast-path.ts); the rest goes to Fastify.
    serverFactory: (handler) => {
      const server = http.createServer(
        {
          // A slow client gets its headers in within headersTimeout and its whole request (a 2 MiB document on a
          // slow link) within requestTimeout, then 408 request_timeout; checked every second.
          headersTimeout: config.headersTimeoutMs,
          requestTimeout: Math.max(config.requestTimeoutMs, config.headersTimeoutMs),
          connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
        },
        (request, response) => {
          if (state.closing) answerShuttingDown(response);
          else if (!fastPath(request, response)) handler(request, response);
        },
      );
      if (config.maxConnectionsPerAddress > 0) limitConnectionsPerClient(server, config.maxConnectionsPerAddress);
      return server;
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
}

/** Body parsing, validation, decorations, OpenAPI, the owner-auth and write-limit hook, and the error handlers. */
async function installRequestHandling(app: TypedApp, services: Services): Promise<void> {
  const { config, store, clock, tokenUses, writeLimiter, views, rawCache } = services;
  app.setValidatorCompiler(createValidatorCompiler());
  app.removeAllContentTypeParsers();
  // JSON whatever the declared type: `curl -d` sends form-urlencoded by default and should still work.
  app.addContentTypeParser(['application/json', '*'], { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  const ownerRoutes: Array<{ method: string; url: string }> = [];
  app.decorate('ownerRoutes', ownerRoutes);
  app.decorate('services', { tokenUses, writeLimiter, views, rawCache, flush: services.flushCounters });
  app.decorateRequest('caller', null);
  app.decorateRequest('releaseWrite', null);
  app.addHook('onRoute', (route) => {
    if (route.config?.auth !== 'owner') return;
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') ownerRoutes.push({ method, url: route.url });
    }
    route.schema = { ...route.schema, security: [{ bearer: [] }] };
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'htmldrop',
        version: '1.0.0',
        description: 'Host self-contained HTML documents ("drops") at stable public URLs. See /api/onboard.',
      },
      servers: [{ url: config.baseUrl }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'hd_... token' } } },
    },
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (request.url.startsWith('/api/')) reply.header('cache-control', 'no-store');
    const routeConfig = request.routeOptions.config;
    if (routeConfig.auth !== 'owner') return;
    request.caller = await authenticate(store, clock, tokenUses, request.headers.authorization);
    if (routeConfig.write === true) request.releaseWrite = await writeLimiter.consume(request.caller.account.id);
  });
  installErrorHandlers(app, config.limits);
}

/** Every route module, each with what it needs. */
function registerRoutes(app: TypedApp, services: Services): void {
  const context: RouteContext = {
    config: services.config,
    store: services.store,
    clock: services.clock,
    schemas: createSchemas(services.config.limits),
    drops: services.drops,
    tokenUses: services.tokenUses,
    rawCache: services.rawCache,
    capabilities: services.capabilities,
    views: services.views,
    unlock: services.unlock,
    device: services.device,
    identity: services.identity,
    signer: services.signer,
    counter: services.counter,
    callerOf(request) {
      if (request.caller === null) throw new ApiError('unauthorized');
      return request.caller;
    },
  };
  registerDropRoutes(app, context);
  registerPrototypeRoutes(app, context);
  registerAccountRoutes(app, context);
  registerDiscoveryRoutes(app, context);
  registerPublicRoutes(app, context);
  registerAuthRoutes(app, context);
  registerVerifyRoutes(app, context);
  registerHealthRoutes(app, { checkDatabase: () => services.store.ping(), bus: services.bus });
}

/** Coalesced background writes (token last use, view counts): periodic, and once more on close. */
function keepCountersFlushed(app: TypedApp, services: Services): void {
  const flush = () => services.flushCounters().catch((error: unknown) => app.log.error({ err: error }, 'flush failed'));
  let flushTimer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    flushTimer = setInterval(flush, services.config.flushIntervalMs);
    flushTimer.unref();
  });
  app.addHook('onClose', async () => {
    clearInterval(flushTimer);
    await flush();
  });
}

/** The app as route modules see it: typed request bodies from the TypeBox schemas. */
export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
