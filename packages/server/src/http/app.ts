/**
 * Builds the Fastify app from its dependencies. No globals: tests build as many apps as they like.
 * Order of a request: onRequest (owner auth, then the write limit) -> body parsing -> schema validation -> handler.
 */
import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import type { Config, Limits } from '../config.js';
import { createLocalBus, type InvalidationBus } from '../coordination/bus.js';
import { createCacheReceiver } from '../coordination/cache-receiver.js';
import { authenticate, type Caller, createTokenUseRecorder, type TokenUseRecorder } from '../domain/accounts.js';
import { type Capabilities, createCapabilities } from '../domain/capability.js';
import { type Clock, systemClock } from '../domain/clock.js';
import type { DeviceFlowDeps } from '../domain/device-flow.js';
import type { DropChangeListener, DropDeps } from '../domain/drops.js';
import type { RandomInt } from '../domain/ids.js';
import type { RateCounter } from '../domain/rate-counter.js';
import { createViewCounter, type UnlockDeps, type ViewCounter } from '../domain/viewing.js';
import { createWriteLimiter, type WriteLimiter } from '../domain/write-limit.js';
import { ApiError, isApiError } from '../errors.js';
import { createIdentityProvider, type IdentityProvider } from '../identity/index.js';
import { loadSigningKeys, type SigningKeys } from '../secrets.js';
import { createRawFastPath } from '../serve/fast-path.js';
import { createRawCache, type RawCache } from '../serve/raw-cache.js';
import type { Store } from '../storage/store.js';
import { prefersHtml } from './accept.js';
import { limitConnectionsPerClient } from './connection-limit.js';
import { answerClientError, answerFrameworkError, answerShuttingDown } from './framework-errors.js';
import { escapeHtml, NOT_FOUND_PAGE, PAGE_NOT_FOUND_PAGE, simplePage } from './pages/layout.js';
import { registerAccountRoutes } from './routes/account.js';
import { registerAuthRoutes } from './routes/auth.js';
import { registerDiscoveryRoutes } from './routes/discovery.js';
import { registerDropRoutes } from './routes/drops.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerPrototypeRoutes } from './routes/prototypes.js';
import { registerPublicRoutes, sendPage } from './routes/public.js';
import { registerVerifyRoutes } from './routes/verify.js';
import { createSchemas, type Schemas } from './schemas.js';
import { createSigner, type Signer } from './signed-cookie.js';
import { createValidatorCompiler, validationError } from './validation.js';

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

export interface AppOptions {
  readonly config: Config;
  readonly store: Store;
  readonly clock?: Clock;
  readonly random?: RandomInt;
  readonly logger?: FastifyServerOptions['logger'];
  /** Overrides the configured identity provider (tests). */
  readonly identity?: IdentityProvider;
  /** Shared rate-limit counters; the database by default. */
  readonly counter?: RateCounter;
  /** Cross-instance invalidation; in-process by default. */
  readonly bus?: InvalidationBus;
  /** Signing keys; loaded from the configuration (environment or key file) by default. */
  readonly signingKeys?: SigningKeys;
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

/** A string no database stores exactly: U+0000, or a lone surrogate. */
function refusedText(text: string, field: string): RefusedBody | undefined {
  if (text.includes('\u0000')) return { field, message: `${field} contains a NUL character (U+0000).` };
  if (!text.isWellFormed()) {
    return { field, message: `${field} contains a lone surrogate (a \\uD800-\\uDFFF escape without its pair).` };
  }
  return undefined;
}

/** Why a parsed body is refused before validation: the field it names and a message. */
interface RefusedBody {
  readonly field: string;
  readonly key?: string;
  readonly message: string;
}

/**
 * What JSON can carry but the service will not take: U+0000 in a string or key (no text column stores it the same
 * on both databases), a lone surrogate (`"\ud800"`: UTF-8 cannot encode it, so the database would store U+FFFD
 * instead, and what is served would differ from what was acknowledged), and a `__proto__` key anywhere (an object
 * merge elsewhere would read it as the prototype). Iterative: a deeply nested body must not overflow the stack.
 */
function refusedIn(root: unknown): RefusedBody | undefined {
  const pending: Array<[unknown, string]> = [[root, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, path] = next;
    if (typeof value === 'string') {
      const refused = refusedText(value, path || 'body');
      if (refused !== undefined) return refused;
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        const at = path === '' ? key : `${path}.${key}`;
        const refusedKey = refusedText(key, at);
        if (refusedKey !== undefined) return refusedKey;
        if (key === '__proto__') {
          const inMetadata = path === 'metadata';
          return {
            field: inMetadata ? 'metadata' : at,
            ...(inMetadata ? { key } : {}),
            message: `The key "__proto__" is not accepted${inMetadata ? ' as a metadata key' : ''}.`,
          };
        }
        pending.push([inner, at]);
      }
    }
  }
  return undefined;
}

function parseJsonBody(bytes: Buffer): unknown {
  // Invalid UTF-8 would be decoded to U+FFFD: refused instead, so what is stored is exactly what was sent.
  if (!isUtf8(bytes)) throw new ApiError('invalid_json', { message: 'The request body is not valid UTF-8.' });
  const body = bytes.toString('utf8');
  if (body.trim() === '') return undefined;
  let parsed: unknown;
  try {
    // JSON.parse defines every key as an own property (a `__proto__` key sets no prototype); refusedIn then
    // refuses such keys before anything merges the body into another object.
    parsed = JSON.parse(body);
  } catch {
    throw new ApiError('invalid_json', { message: 'The request body is not valid JSON.' });
  }
  const refused = refusedIn(parsed);
  if (refused !== undefined) {
    const { message, ...details } = refused;
    throw new ApiError('invalid_arg', { message, details });
  }
  return parsed;
}

/**
 * Maps anything thrown during a request to the one ApiError the client sees. `bodyLimit` is the route's body cap:
 * the document routes' cap is the transport cap of docs/api.md 7 (413 html_too_large); any other is body_too_large.
 */
function toApiError(error: FastifyError | Error, limits: Limits, bodyLimit: number | undefined): ApiError {
  if (isApiError(error)) return error;
  const fastifyError = error as FastifyError & { validation?: Parameters<typeof validationError>[1] };
  if (fastifyError.validation !== undefined) {
    return validationError(fastifyError.validationContext, fastifyError.validation);
  }
  const status = fastifyError.statusCode ?? 500;
  if (status === 413 && bodyLimit !== undefined && bodyLimit < limits.maxBodyBytes) {
    return new ApiError('body_too_large', {
      message: `The request body is larger than this endpoint accepts (at most ${bodyLimit} bytes).`,
      details: { max_bytes: bodyLimit },
    });
  }
  if (status === 413) {
    return new ApiError('html_too_large', {
      status: 413,
      message: `The request body is larger than the service accepts; the HTML may be at most ${limits.maxHtmlBytes} bytes.`,
      details: { max_bytes: limits.maxHtmlBytes },
    });
  }
  if (status === 404) return new ApiError('not_found');
  if (status >= 400 && status < 500) {
    return new ApiError(fastifyError.code?.startsWith('FST_ERR_CTP') ? 'invalid_json' : 'invalid_arg', {
      message: error.message,
    });
  }
  return new ApiError('internal', { cause: error });
}

export async function buildApp(options: AppOptions): Promise<App> {
  const { config, store } = options;
  const clock = options.clock ?? systemClock;
  const schemas = createSchemas(config.limits);
  const tokenUses = createTokenUseRecorder(store);
  const counter = options.counter ?? store;
  const bus = options.bus ?? createLocalBus();
  const writeLimiter = createWriteLimiter(counter, clock, config.limits);
  const rawCache = createRawCache({ maxBytes: config.rawCacheBytes, now: () => clock.now() });
  const fastPath = createRawFastPath(rawCache);
  const views = createViewCounter(store);
  // Signing keys come from the environment or the data directory's key file, never the database (secrets.ts).
  const keys = options.signingKeys ?? loadSigningKeys(config);
  const capabilities = createCapabilities(keys.capability, clock, config.capabilityTtlMs);
  const signer = createSigner(keys.session, clock);
  const identity = options.identity ?? createIdentityProvider(config.identity);
  const device: DeviceFlowDeps = { store, clock, ...(options.random === undefined ? {} : { random: options.random }) };
  const unlock: UnlockDeps = {
    store,
    counter,
    clock,
    capabilities,
    policy: {
      maxAttempts: config.limits.maxPasscodeAttempts,
      windowMs: config.limits.passcodeWindowMs,
      maxDropAttempts: Math.min(config.limits.maxDropPasscodeAttempts, config.limits.maxDropPasscodeAttemptsPerDay),
      maxDropAttemptsPerDay: config.limits.maxDropPasscodeAttemptsPerDay,
    },
  };
  // Invalidate here at once, and tell the other instances (their raw caches must not serve the old document).
  const listener: DropChangeListener = {
    async dropChanged(slug) {
      rawCache.invalidate(slug);
      try {
        await bus.publish(slug);
      } catch (error) {
        // The write is committed; other instances' caches may lag. Loud in the log, not a failed request.
        app.log.error({ err: error, slug }, 'invalidation not published');
      }
    },
  };
  const drops: DropDeps = {
    store,
    clock,
    limits: config.limits,
    listener,
    ...(options.random === undefined ? {} : { random: options.random }),
  };

  /** Set when the app starts closing: new requests on kept-alive connections get 503 shutting_down. */
  let closing = false;
  const app = Fastify({
    logger: options.logger ?? false,
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
          if (closing) answerShuttingDown(response);
          else if (!fastPath(request, response)) handler(request, response);
        },
      );
      if (config.maxConnectionsPerAddress > 0) limitConnectionsPerClient(server, config.maxConnectionsPerAddress);
      return server;
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

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
  const flushAll = async () => {
    await Promise.all([tokenUses.flush(), views.flush()]);
  };
  app.decorate('services', { tokenUses, writeLimiter, views, rawCache, flush: flushAll });
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

  app.setErrorHandler(async (error, request, reply) => {
    const apiError = toApiError(error as Error, config.limits, request.routeOptions.bodyLimit);
    if (apiError.status >= 500) request.log.error({ err: error, reqId: request.id }, 'request failed');
    if (apiError.status === 429 && request.releaseWrite !== null) {
      await request.releaseWrite().catch((e: unknown) => request.log.error({ err: e }, 'write not released'));
    }
    if (request.url.startsWith('/p/')) {
      // Public pages answer HTML, also when something fails.
      return sendPage(
        reply,
        apiError.status,
        simplePage('Something went wrong', `<p>${escapeHtml(apiError.message)}</p>`),
      );
    }
    if (apiError.status === 401) {
      reply.header('www-authenticate', apiError.code === 'invalid_token' ? 'Bearer error="invalid_token"' : 'Bearer');
    }
    if (apiError.retryAfterSeconds !== undefined) reply.header('retry-after', String(apiError.retryAfterSeconds));
    return reply.code(apiError.status).type('application/json; charset=utf-8').send(apiError.toBody());
  });

  app.setNotFoundHandler((request, reply) => {
    if (request.url.startsWith('/p/')) return sendPage(reply, 404, NOT_FOUND_PAGE);
    // docs/api.md "Browser paths": a browser gets a page; /api/ and every other client get JSON.
    if (!request.url.startsWith('/api/') && prefersHtml(request.headers.accept)) {
      return sendPage(reply, 404, PAGE_NOT_FOUND_PAGE);
    }
    const error = new ApiError('not_found', { message: `No route ${request.method} ${request.url.split('?')[0]}.` });
    return reply.code(404).send(error.toBody());
  });

  const context: RouteContext = {
    config,
    store,
    clock,
    schemas,
    drops,
    tokenUses,
    rawCache,
    capabilities,
    views,
    unlock,
    device,
    identity,
    signer,
    counter,
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
  registerHealthRoutes(app, {
    checkDatabase: () => store.ping(),
    bus,
  });

  // Coalesced background writes (token last use, view counts): periodic, and once more on close.
  let flushTimer: NodeJS.Timeout | undefined;
  const flush = () => flushAll().catch((error: unknown) => app.log.error({ err: error }, 'flush failed'));
  await bus.subscribe(createCacheReceiver(rawCache, config.cacheMaxAgeWithoutBusMs, app.log, () => clock.now()));
  app.addHook('onReady', async () => {
    flushTimer = setInterval(flush, config.flushIntervalMs);
    flushTimer.unref();
  });
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onClose', async () => {
    clearInterval(flushTimer);
    await flush();
  });

  return app as unknown as App;
}

/** The app as route modules see it: typed request bodies from the TypeBox schemas. */
export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
