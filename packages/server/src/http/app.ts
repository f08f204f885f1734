import { randomBytes } from 'node:crypto';
import http from 'node:http';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import type { Config } from '../config.js';
import { authenticate } from '../domain/accounts.js';
import { createRawFastPath, type FastPath } from '../serve/fast-path.js';
import type { Services } from '../services.js';
import { limitConnectionsPerClient } from './connection-limit.js';
import { installErrorHandlers } from './error-handler.js';
import { answerClientError, answerFrameworkError, answerShuttingDown } from './framework-errors.js';
import { IDEMPOTENCY_LEASE_MS, installIdempotency, noteBodyDigest } from './idempotency.js';
import { parseJsonBody } from './json-body.js';
import { accessRoutes } from './routes/access.js';
import { accountRoutes } from './routes/account.js';
import { authRoutes } from './routes/auth.js';
import { commentRoutes } from './routes/comments.js';
import { consoleRoutes } from './routes/console.js';
import { contentHostRoutes, contentUrlRewriter } from './routes/content-host.js';
import { discoveryRoutes } from './routes/discovery.js';
import { dropRoutes } from './routes/drops.js';
import { eventRoutes } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { historyRoutes } from './routes/history.js';
import { mcpRoutes } from './routes/mcp.js';
import { oauthRoutes } from './routes/oauth.js';
import { oauthApprovalRoutes } from './routes/oauth-approval.js';
import { portabilityRoutes } from './routes/portability.js';
import { previewRoutes } from './routes/previews.js';
import { prototypeRoutes } from './routes/prototypes.js';
import { publicRoutes } from './routes/public.js';
import { statsRoutes } from './routes/stats.js';
import { verifyRoutes } from './routes/verify.js';
import { webhookRoutes } from './routes/webhooks.js';
import { createSchemas } from './schemas.js';
import { buildSerializersOnFirstUse } from './serializers.js';
import type { TypedApp } from './typed-app.js';
import { createValidatorCompiler } from './validation.js';
import { createWebSessions } from './web-session.js';
import { installWriteBudget } from './write-budget.js';

export interface AppOptions {
  readonly logger?: FastifyServerOptions['logger'];
  /** The events streams' keep-alive period (tests shorten it; docs/api.md, "Live pages"). */
  readonly eventKeepAliveMs?: number;
}

export type App = FastifyInstance & {
  /** Every route that requires a bearer token (the auth matrix of the tests walks it). */
  readonly ownerRoutes: ReadonlyArray<{ method: string; url: string }>;
};

/**
 * The HTTP app over services built by the composition root (server.ts; tests build theirs the same way): it never
 * constructs a service, and owns no timer but the connection checks of its server.
 */
export async function buildApp(services: Services, options: AppOptions = {}): Promise<App> {
  const { config, rawCache } = services;
  /** Set when the app starts closing: new requests on kept-alive connections get 503 shutting_down. */
  const state = { closing: false };
  const fastPath = createRawFastPath(rawCache, services.contentHosts?.origins);
  const app = createFastify(config, options.logger, fastPath, contentUrlRewriter(services.contentHosts), state);
  await installRequestHandling(app, services);
  await registerRoutes(app, services, options);
  app.addHook('preClose', async () => {
    state.closing = true;
    // Requests waiting for comments answer now (with what there is), so closing does not wait for them.
    services.commentSignal.close();
    // Open events streams end now (browsers reconnect to another instance), so closing does not wait for them.
    services.live.close();
  });
  // After the last request: the readable copy's worker, if one runs, is terminated.
  app.addHook('onClose', () => services.readableCopies.close());
  // The screenshot browser, if one runs, is closed.
  app.addHook('onClose', async () => services.screenshots?.close());
  return app as unknown as App;
}

/** Fastify with the service's server: timeouts, the connection cap, the shutdown answer, then the fast path. */
function createFastify(
  config: Config,
  logger: FastifyServerOptions['logger'],
  fastPath: FastPath,
  rewriteUrl: (request: http.IncomingMessage) => string,
  state: { readonly closing: boolean },
) {
  return Fastify({
    logger: logger ?? false,
    // Small by default; the routes that carry a document raise it (docs/api.md 8). Fastify refuses a body over the
    // cap from its Content-Length before reading it, and stops reading a chunked one at the cap.
    bodyLimit: config.limits.maxSmallBodyBytes,
    // Validators (validation.ts) and serializers are compiled on first use, not at start.
    schemaController: { compilersFactory: { buildSerializer: buildSerializersOnFirstUse } },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // Per-request info logs cost throughput on the raw path; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    // Unique across restarts and instances, so a request id in a report finds its log line.
    genReqId: randomRequestIds(),
    trustProxy: config.trustProxy,
    // Requests arriving while the app closes are answered by the server factory below, in the service's shape.
    return503OnClosing: false,
    // Refusals before routing answer in the service's shapes too (http/framework-errors.ts).
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    forceCloseConnections: 'idle',
    // A request to a drop's own host can only reach that host's route (http/routes/content-host.ts).
    rewriteUrl,
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

/**
 * 16 random hex characters per request, taken from a pool filled 512 ids at a time: one system call for randomness
 * per request cost about 1.7 µs of the list's CPU, the pool about 0.1 µs. Still unpredictable (a counter would tell
 * a client how many requests the instance has served).
 */
function randomRequestIds(): () => string {
  const BYTES = 8;
  let pool = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at + BYTES > pool.length) {
      pool = randomBytes(BYTES * 512);
      at = 0;
    }
    at += BYTES;
    return pool.toString('hex', at - BYTES, at);
  };
}

/** Body parsing, validation, decorations, OpenAPI, the owner-auth hook, the write budget, idempotency, the error handlers. */
async function installRequestHandling(app: TypedApp, services: Services): Promise<void> {
  const { config, store, clock, tokenUses } = services;
  app.setValidatorCompiler(createValidatorCompiler());
  app.removeAllContentTypeParsers();
  // JSON whatever the declared type: `curl -d` sends form-urlencoded by default and should still work.
  app.addContentTypeParser(['application/json', '*'], { parseAs: 'buffer' }, (request, body, done) => {
    try {
      noteBodyDigest(request, body as Buffer);
      done(null, parseJsonBody(body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  const ownerRoutes: Array<{ method: string; url: string }> = [];
  app.decorate('ownerRoutes', ownerRoutes);
  app.decorateRequest('caller', null);
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
  });
  // An answer sent before the request's body was read (a GET with a body, a 401 before reading, a 405) would leave
  // Node reading the rest, however long, to reach the next request on the connection: the connection closes
  // instead, so no body is read past its route's cap (docs/api.md 8).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete) reply.header('connection', 'close');
    done(null, payload);
  });
  installWriteBudget(app, services.writeLimiter);
  installIdempotency(app, {
    store,
    clock,
    leaseMs: IDEMPOTENCY_LEASE_MS,
    // A request still running after twice the time a client has to send it is taken to be stuck.
    maxRunMs: Math.max(60_000, 2 * (config.requestTimeoutMs + config.headersTimeoutMs)),
  });
  installErrorHandlers(app, config.limits, config.baseUrl);
}

/**
 * Every route module, as a Fastify plugin given only the services it uses (no route sees the Store). The shared
 * response schemas are added here, at the root, so that every plugin's routes can refer to them.
 */
async function registerRoutes(app: TypedApp, services: Services, options: AppOptions): Promise<void> {
  const { config, drops, accounts, device, deviceGuards: guards, identity, signer, clock } = services;
  const schemas = createSchemas(config.limits);
  const sessions = createWebSessions(signer, config.baseUrl);
  app.addSchema(schemas.Drop);
  app.addSchema(schemas.ErrorBody);
  await app.register(dropRoutes, { config, schemas, drops, comments: services.comments });
  await app.register(prototypeRoutes, { config, schemas, drops, comments: services.comments });
  await app.register(commentRoutes, { config, schemas, comments: services.comments });
  await app.register(statsRoutes, { schemas, stats: services.stats });
  await app.register(accessRoutes, { config, schemas, links: services.links, accessLog: services.accessLog });
  await app.register(webhookRoutes, { webhooks: services.webhooks });
  await app.register(historyRoutes, { schemas, drops });
  await app.register(portabilityRoutes, { limits: config.limits, portability: services.portability });
  await app.register(accountRoutes, { schemas, accounts });
  await app.register(discoveryRoutes, { config });
  await app.register(publicRoutes, {
    config,
    view: services.publicView,
    loadRaw: services.loadRaw,
    loadFile: services.loadFile,
    renders: services.renders,
    capabilities: services.capabilities,
    unlock: services.unlock,
    contentHosts: services.contentHosts,
    readableCopies: services.readableCopies,
    viewerComments: { comments: services.comments, sessions, identity, view: services.publicView },
  });
  await app.register(eventRoutes, {
    view: services.publicView,
    live: services.live,
    maxStreams: config.maxEventStreams,
    sessions,
    ...(options.eventKeepAliveMs === undefined ? {} : { keepAliveMs: options.eventKeepAliveMs }),
  });
  await app.register(previewRoutes, { config, view: services.publicView, previews: services.previews, sessions });
  await app.register(contentHostRoutes, {
    config,
    content: services.contentHosts,
    view: services.publicView,
    loadRaw: services.loadRaw,
    loadFile: services.loadFile,
  });
  await app.register(authRoutes, { config, device, guards });
  await app.register(verifyRoutes, { config, accounts, clock, identity, device, guards, sessions });
  const { oauth } = services;
  await app.register(oauthRoutes, { config, oauth, signer });
  await app.register(oauthApprovalRoutes, { config, accounts, identity, sessions, oauth, signer });
  await app.register(mcpRoutes, { config, inject: (request) => app.inject(request) });
  await app.register(consoleRoutes, {
    config,
    schemas,
    drops,
    comments: services.comments,
    stats: services.stats,
    accounts,
    identity,
    sessions,
    exports: services.portability.export,
    webhooks: services.webhooks,
    previews: services.previews,
    links: services.links,
    accessLog: services.accessLog,
  });
  await app.register(healthRoutes, {
    checkDatabase: () => services.store.ping(),
    busSubscribed: () => services.bus.subscribed,
  });
}
