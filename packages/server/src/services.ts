/**
 * The service layer, wired once from the configuration and the store: the domain's dependencies, the caches and
 * counters, the signing keys, the identity provider, and the periodic jobs (flush, purge) as functions. The process
 * (server.ts, the composition root) chooses the store, the counters, the bus and the clock, calls this, hands the
 * result to `buildApp` (http/app.ts) and runs the jobs' timers. Tests pass their own parts.
 */
import dns from 'node:dns/promises';
import type { Config } from './config.js';
import { createLocalBus, type InvalidationBus } from './coordination/bus.js';
import { createCacheReceiver, type StatusLog } from './coordination/cache-receiver.js';
import { type CommentSignalHub, createCommentSignal } from './coordination/comment-signal.js';
import { createLiveHub, type LiveHub } from './coordination/live-events.js';
import { type AccessLogDeps, purgeAccessLog } from './domain/access-log.js';
import { type AccountDeps, createTokenUseRecorder, type TokenUseRecorder } from './domain/accounts.js';
import { type Capabilities, createCapabilities } from './domain/capability.js';
import { type Clock, systemClock } from './domain/clock.js';
import type { CommentDeps } from './domain/comments.js';
import { type ContentHosts, contentHostsOf } from './domain/content-origin.js';
import { DEVICE_RETENTION_MS, type DeviceFlowDeps } from './domain/device-flow.js';
import type { GuardDeps } from './domain/device-guards.js';
import type { DropChangeListener, DropDeps } from './domain/drops.js';
import { createViewedEvents, type EventSink } from './domain/events.js';
import { purgeExpiredDrops } from './domain/expiry.js';
import type { ExportDeps } from './domain/export.js';
import type { RandomInt } from './domain/ids.js';
import type { ImportDeps } from './domain/import.js';
import { type OAuthDeps, purgeOAuth } from './domain/oauth.js';
import { findRawDocument, findRawFile, type PublicViewDeps } from './domain/public-view.js';
import type { RateCounter } from './domain/rate-counter.js';
import type { RecipientLinkDeps } from './domain/recipient-links.js';
import type { Scanner } from './domain/scan.js';
import type { StatsDeps } from './domain/stats.js';
import type { Store } from './domain/store.js';
import { createViewerHasher } from './domain/viewer-id.js';
import { createViewCounter, type RenderCountDeps, type UnlockDeps, type ViewCounter } from './domain/viewing.js';
import { type AttemptDeps, enqueueEvent, type Resolve, type WebhookDeps } from './domain/webhooks.js';
import { createWriteLimiter, type WriteLimiter } from './domain/write-limit.js';
import { createIdentityProvider, type IdentityProvider } from './identity/index.js';
import { createSealedBox } from './keys/sealed-box.js';
import { createSigner, type Signer } from './keys/signer.js';
import { loadSigningKeys, type SigningKeys } from './keys/signing-keys.js';
import { createScanner } from './scan/scanner.js';
import { createMarkdownCopies, type MarkdownCopies, type MarkdownCopyOptions } from './serve/markdown-copy.js';
import { createPreviews, type Previews } from './serve/previews.js';
import { createRawCache, type RawCache } from './serve/raw-cache.js';
import { createFileLoader, createRawLoader, type FileLoader, type RawLoader } from './serve/raw-loader.js';
import { createWebhookSender } from './webhooks/sender.js';
import { createWebhookWorker, type WebhookWorker } from './webhooks/worker.js';

/** Outbox rows delivered or given up are kept a week (the log of attempts is kept apart, per endpoint). */
const DELIVERIES_RETENTION_MS = 7 * 24 * 3600_000;

/** Every address of a name (DNS, as the system resolves it). */
const resolveAll: Resolve = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

import { createScreenshots, type ScreenshotOptions, type Screenshots } from './serve/screenshots.js';

export interface ServiceOptions {
  readonly config: Config;
  readonly store: Store;
  readonly clock?: Clock;
  readonly random?: RandomInt;
  /** Overrides the configured identity provider (tests). */
  readonly identity?: IdentityProvider;
  /** Shared rate-limit counters; the database by default. */
  readonly counter?: RateCounter;
  /** Cross-instance invalidation; in-process by default. */
  readonly bus?: InvalidationBus;
  /** Signing keys; loaded from the configuration (environment or key file) by default. */
  readonly signingKeys?: SigningKeys;
  /** The readable copy's converter bounds (tests shrink them); serve/markdown-copy.ts's defaults otherwise. */
  readonly markdown?: MarkdownCopyOptions;
  /** The look before publishing (domain/scan.ts); scan/scanner.ts, loaded on first use, by default. */
  readonly scanner?: Scanner;
  /** Webhook targets' names to addresses; DNS by default (tests play names that move). */
  readonly resolve?: Resolve;
  /** The webhooks' retry delays (tests shorten them); domain/webhooks.ts's BACKOFF_MS by default. */
  readonly webhookBackoffMs?: readonly number[];
  /** How often the delivery worker looks for due deliveries; every second by default. */
  readonly webhookPollMs?: number;
  /** The screenshot queue's bounds (tests shrink them); serve/screenshots.ts's defaults otherwise. */
  readonly screenshots?: Pick<ScreenshotOptions, 'timeoutMs' | 'maxPending' | 'idleMs' | 'quietMs' | 'maxDeferMs'>;
}

/** Where the service layer reports what no request answers for (the app's logger). */
export interface ServiceLog extends StatusLog {
  error(details: object, message: string): void;
}

export interface Services {
  readonly config: Config;
  readonly store: Store;
  readonly clock: Clock;
  readonly counter: RateCounter;
  readonly bus: InvalidationBus;
  readonly tokenUses: TokenUseRecorder;
  readonly writeLimiter: WriteLimiter;
  readonly rawCache: RawCache;
  readonly views: ViewCounter;
  /** Counting viewer renders with their daily viewer hashes (read receipts). */
  readonly renders: RenderCountDeps;
  /** Read receipts for owners (domain/stats.ts). */
  readonly stats: StatsDeps;
  readonly capabilities: Capabilities;
  readonly signer: Signer;
  readonly identity: IdentityProvider;
  readonly device: DeviceFlowDeps;
  /** The device flow's throttles and guess budgets (domain/device-guards.ts). */
  readonly deviceGuards: GuardDeps;
  readonly accounts: AccountDeps;
  readonly unlock: UnlockDeps;
  readonly drops: DropDeps;
  /** Export and import (docs/api.md, "Export and import"). */
  readonly portability: { readonly export: ExportDeps; readonly import: ImportDeps };
  /** Comments, and waking the requests that wait for them on every instance. */
  readonly comments: CommentDeps;
  readonly commentSignal: CommentSignalHub;
  /** The events streams of this instance, fed by the bus (docs/api.md, "Live pages"). The app closes it. */
  readonly live: LiveHub;
  /** Where the domain's events go: the live streams and the webhooks' outbox. */
  readonly events: EventSink;
  /** Webhook endpoints and their deliveries (domain/webhooks.ts). */
  readonly webhooks: WebhookDeps;
  /** Attempts the outbox's deliveries; started and stopped by the composition root (server.ts). */
  readonly webhookWorker: WebhookWorker;
  /** Who may see what under /p/ (domain/public-view.ts). */
  readonly publicView: PublicViewDeps;
  /** Recipient links of drops (domain/recipient-links.ts). */
  readonly links: RecipientLinkDeps;
  /** Drops' access logs (domain/access-log.ts). */
  readonly accessLog: AccessLogDeps;
  /** OAuth clients, codes and their budget (domain/oauth.ts). */
  readonly oauth: OAuthDeps;
  /** Each drop's own origin (docs/api.md, "Each drop on its own origin"); undefined when none is configured. */
  readonly contentHosts: ContentHosts | undefined;
  /** Drop documents by slug or content label and version, through the raw cache. */
  readonly loadRaw: RawLoader;
  /**
   * Versions as readable text (docs/api.md, "Readable copy (Markdown)"): a worker started on first use, a bounded
   * queue and a cache bounded by bytes. The app closes it.
   */
  readonly readableCopies: MarkdownCopies;
  /** A version's files by slug or content label, version and path, through the raw cache. */
  readonly loadFile: FileLoader;
  /** Versions' preview images: stored screenshots, else title cards (docs/api.md, "Previews and embeds"). */
  readonly previews: Previews;
  /**
   * The screenshot queue and its one browser (HTMLDROP_CHROMIUM), asked after every change of a drop; undefined
   * without a browser. The app closes it.
   */
  readonly screenshots: Screenshots | undefined;
  /** Writes every coalesced counter now (token last use, view counts). */
  flushCounters(): Promise<void>;
  /**
   * Deletes what has expired at the service clock's now: expired drops (docs/api.md, "Expiry"), rate counters,
   * idempotency answers, old device requests, lapsed OAuth codes and clients. Safe on several instances at once.
   * Returns the number of drops deleted.
   */
  purge(): Promise<number>;
  /**
   * Joins the other instances: subscribes to the bus (changed drops leave the raw cache, new comments wake waiting
   * listings, bus outages limit what the cache serves) and reports through `log` what the bus does and any committed
   * change it could not announce. Resolves once subscribed.
   */
  connect(log: ServiceLog): Promise<void>;
}

export function createServices(options: ServiceOptions): Services {
  const { config, store } = options;
  const clock = options.clock ?? systemClock;
  const counter = options.counter ?? store;
  const bus = options.bus ?? createLocalBus();
  const contentHosts = contentHostsOf(config);
  const rawCache = createRawCache({ maxBytes: config.rawCacheBytes, now: () => clock.now() });
  // Signing keys come from the environment or the data directory's key file, never the database (keys/signing-keys.ts).
  const keys = options.signingKeys ?? loadSigningKeys(config);
  const capabilities = createCapabilities(keys.capability, clock, config.capabilityTtlMs);
  const random = options.random === undefined ? {} : { random: options.random };
  let reportPublishFailure: (error: unknown, slug: string) => void = () => undefined;
  let serviceLog: ServiceLog | undefined;
  let screenshots: Screenshots | undefined;
  // Invalidate here at once, and tell the other instances (their raw caches must not serve the old document). A
  // new version's screenshot is asked for, to be made after the write's answer (serve/screenshots.ts).
  const listener: DropChangeListener = {
    versionPublished(slug, version) {
      screenshots?.request(slug, version);
    },
    async dropChanged(slug) {
      rawCache.invalidate(slug);
      try {
        await bus.publish(slug);
      } catch (error) {
        reportPublishFailure(error, slug);
      }
    },
  };
  const { limits } = config;
  const tokenUses = createTokenUseRecorder(store);
  const commentSignal = createCommentSignal(bus);
  const live = createLiveHub(bus);
  const resolve = options.resolve ?? resolveAll;
  const webhooks: WebhookDeps = {
    store,
    clock,
    seal: createSealedBox(keys.webhookSecret),
    allowPrivate: config.webhookAllowPrivate,
    resolve,
    ...random,
  };
  const attempts: AttemptDeps = {
    ...webhooks,
    sender: createWebhookSender({ allowPrivate: config.webhookAllowPrivate, resolve }),
    ...(options.webhookBackoffMs === undefined ? {} : { backoffMs: options.webhookBackoffMs }),
  };
  const webhookWorker = createWebhookWorker(
    attempts,
    options.webhookPollMs === undefined ? {} : { pollMs: options.webhookPollMs },
  );
  let reportEventFailure: (error: unknown, slug: string) => void = () => undefined;
  // After the write is committed: a failure here is logged, never the write's answer (domain/events.ts). The outbox
  // rows are committed before the write is answered, so an answered write's event survives a crash.
  const events: EventSink = {
    async emit(event) {
      const [announced, queued] = await Promise.allSettled([live.announce(event), enqueueEvent(webhooks, event)]);
      if (announced.status === 'rejected') reportEventFailure(announced.reason, event.slug);
      if (queued.status === 'rejected') reportEventFailure(queued.reason, event.slug);
      else if (queued.value > 0) webhookWorker.wake();
    },
  };
  const viewed = createViewedEvents({ store, counter, clock, sink: events });
  const views = createViewCounter(store, (written) => viewed.add(written));
  const scan = { scanner: options.scanner ?? createScanner(), mode: config.scan, store };
  const drops: DropDeps = { store, clock, limits, listener, ...random, scan, events };
  const serveOptions = { contentFrameAncestors: contentHosts?.frameAncestors, baseUrl: config.baseUrl };
  const loadRaw = createRawLoader(rawCache, (ref, version) => findRawDocument(store, ref, version), serveOptions);
  const loadFile = createFileLoader(
    rawCache,
    (ref, version, path) => findRawFile(store, ref, version, path),
    serveOptions,
  );
  screenshots =
    config.chromium === undefined
      ? undefined
      : createScreenshots({
          chromium: config.chromium,
          store,
          loadRaw,
          loadFile,
          contentOrigins: contentHosts?.origins,
          baseUrl: config.baseUrl,
          clock,
          log: { warn: (details, message) => serviceLog?.warn(details, message) },
          ...options.screenshots,
        });
  return {
    config,
    store,
    clock,
    counter,
    bus,
    tokenUses,
    writeLimiter: createWriteLimiter(counter, clock, limits),
    rawCache,
    views,
    renders: { views, viewerOf: createViewerHasher(keys.viewerDay), clock },
    stats: { store, clock },
    capabilities,
    signer: createSigner(keys.session, clock),
    identity: options.identity ?? createIdentityProvider(config.identity),
    device: { store, clock, ...random },
    deviceGuards: { counter, clock, limits },
    accounts: { store, clock, tokenUses },
    unlock: {
      store,
      counter,
      clock,
      capabilities,
      policy: {
        maxAttempts: limits.maxPasscodeAttempts,
        windowMs: limits.passcodeWindowMs,
        maxDropAttempts: Math.min(limits.maxDropPasscodeAttempts, limits.maxDropPasscodeAttemptsPerDay),
        maxDropAttemptsPerDay: limits.maxDropPasscodeAttemptsPerDay,
      },
      events,
    },
    drops,
    comments: { store, clock, limits, counter, signal: commentSignal, ...random, events },
    portability: { export: { store, clock, limits }, import: { store, clock, limits, scan, ...random } },
    commentSignal,
    live,
    events,
    webhooks,
    webhookWorker,
    publicView: { store, clock, tokenUses, capabilities, events },
    links: { store, clock, listener },
    accessLog: { store, clock },
    oauth: { store, clock, counter, limits, ...random },
    contentHosts,
    loadRaw,
    loadFile,
    readableCopies: createMarkdownCopies(options.markdown),
    previews: createPreviews({ store, baseUrl: config.baseUrl, screenshots }),
    screenshots,
    async flushCounters() {
      await Promise.all([tokenUses.flush(), views.flush()]);
      await viewed.flush();
    },
    async purge() {
      await store.purgeExpired(clock.now(), DEVICE_RETENTION_MS);
      await purgeOAuth({ store, clock });
      await purgeAccessLog({ store, clock });
      await store.purgeDeliveries(clock.now() - DELIVERIES_RETENTION_MS);
      return purgeExpiredDrops(drops);
    },
    async connect(log) {
      // The write is committed; other instances' caches may lag. Loud in the log, not a failed request.
      reportPublishFailure = (error, slug) => log.error({ err: error, slug }, 'invalidation not published');
      reportEventFailure = (error, slug) => log.error({ err: error, slug }, 'event not recorded');
      serviceLog = log;
      const cacheReceiver = createCacheReceiver(rawCache, config.cacheMaxAgeWithoutBusMs, log, () => clock.now());
      await bus.subscribe(commentSignal.receiver(live.receiver(cacheReceiver)));
    },
  };
}
