/**
 * Webhooks (docs/api.md, "Webhooks"; docs/decisions/0036-live-pages-and-webhooks.md): an account registers public
 * HTTPS endpoints for event types, each event is put in a durable outbox in the database once per matching endpoint,
 * and deliveries are attempted one at a time across instances (a claimed row with a lease), signed as Standard
 * Webhooks, retried with backoff for 24 hours; an endpoint failing for 3 days is disabled. The secret is stored sealed
 * with a key the database does not hold.
 */
import { ApiError } from '../errors.js';
import type { Clock } from './clock.js';
import { getOwnedDrop } from './drops.js';
import { type DropEvent, type EventType, isEventType } from './events.js';
import { isValidSlug, type RandomInt, randomBase62 } from './ids.js';
import type { DeliveryAttempt, DropStore, WebhookRecord, WebhookStore } from './store.js';
import { isPublicAddress, literalAddress } from './webhook-targets.js';

/** An attempt gives up after this long (docs/api.md, "Webhooks": 10 s timeout). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Retries stop this long after the event. */
export const RETRY_WINDOW_MS = 24 * 3600_000;
/** An endpoint whose failures began this long ago is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 3600_000;
/**
 * A claimed delivery is held this long: longer than an attempt can take, short enough that an attempt cut short by a
 * crash is tried again within a minute (by any instance, the restarted one included).
 */
export const LEASE_MS = 30_000;
/** Attempts kept and shown per endpoint. */
export const ATTEMPTS_KEPT = 100;
/**
 * Delay before each retry, by failed attempts so far: the first within 10 s, the second within a minute of the first
 * failure, then growing to hourly (docs/api.md, "Webhooks").
 */
export const BACKOFF_MS: readonly number[] = [5_000, 30_000, 120_000, 300_000, 900_000, 1_800_000, 3_600_000];
const MAX_URL_CHARS = 2048;
/** Endpoints per account. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 20;

/** Host name to addresses (DNS); injected so tests can play a name that moves. */
export type Resolve = (hostname: string) => Promise<string[]>;

/** One signed POST (webhooks/sender.ts); never throws: a failure is an `error`. */
export interface WebhookSender {
  deliver(request: {
    readonly url: string;
    readonly id: string;
    readonly timestampSeconds: number;
    readonly body: string;
    readonly secret: string;
  }): Promise<{ readonly status?: number; readonly error?: string }>;
}

/** Seals secrets with a key the database does not hold (keys/sealed-box.ts). */
export interface SecretSeal {
  seal(plain: string): string;
  open(sealed: string): string | undefined;
}

export interface WebhookDeps {
  readonly store: WebhookStore & Pick<DropStore, 'findDrop'>;
  readonly clock: Clock;
  readonly seal: SecretSeal;
  /** HTMLDROP_WEBHOOK_ALLOW_PRIVATE: loopback and private targets, and `http://`, allowed. */
  readonly allowPrivate: boolean;
  readonly resolve: Resolve;
  readonly random?: RandomInt;
}

export interface WebhookInput {
  readonly url: unknown;
  readonly events: unknown;
  readonly slug?: unknown;
}

const invalid = (field: string, message: string) => new ApiError('invalid_arg', { message, details: { field } });

/**
 * Refuses a target that is not public (docs/api.md, "Webhooks"): a literal address, or every address its name
 * resolves to. Used at registration; the sender checks again the addresses it connects to.
 */
export async function checkTarget(
  url: URL,
  deps: Pick<WebhookDeps, 'allowPrivate' | 'resolve'>,
): Promise<string | undefined> {
  if (deps.allowPrivate) return undefined;
  const literal = literalAddress(url.hostname);
  if (literal !== undefined) return isPublicAddress(literal) ? undefined : `${literal} is not a public address`;
  let addresses: string[];
  try {
    addresses = await deps.resolve(url.hostname);
  } catch {
    return `${url.hostname} does not resolve`;
  }
  if (addresses.length === 0) return `${url.hostname} does not resolve`;
  const inner = addresses.find((a) => !isPublicAddress(a));
  return inner === undefined ? undefined : `${url.hostname} resolves to ${inner}, which is not a public address`;
}

async function checkedUrl(deps: WebhookDeps, raw: unknown): Promise<string> {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_URL_CHARS) {
    throw invalid('url', `url must be an https:// URL of at most ${MAX_URL_CHARS} characters.`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url', 'url is not a URL.');
  }
  const schemes = deps.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw invalid('url', 'url must start with https://.');
  if (url.username !== '' || url.password !== '') throw invalid('url', 'url must not carry a user name or password.');
  const refusal = await checkTarget(url, deps);
  if (refusal !== undefined) throw invalid('url', `Webhook targets must be public: ${refusal}.`);
  return url.toString();
}

function checkedEvents(raw: unknown): EventType[] {
  if (!Array.isArray(raw) || raw.length === 0 || !raw.every(isEventType)) {
    throw invalid('events', 'events must be a non-empty list of known event types.');
  }
  return [...new Set(raw)];
}

/** A new endpoint; its secret is in the answer only (docs/api.md, "Webhooks"). */
export async function createWebhook(
  deps: WebhookDeps,
  accountId: string,
  input: WebhookInput,
): Promise<{ webhook: WebhookRecord; secret: string }> {
  if ((await deps.store.listWebhooks(accountId)).length >= MAX_WEBHOOKS_PER_ACCOUNT) {
    throw new ApiError('quota_exceeded', {
      message: `The account already has the maximum of ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; remove one first.`,
      details: { max_webhooks: MAX_WEBHOOKS_PER_ACCOUNT },
    });
  }
  const url = await checkedUrl(deps, input.url);
  const events = checkedEvents(input.events);
  let slug: string | null = null;
  if (input.slug !== undefined && input.slug !== null) {
    if (typeof input.slug !== 'string' || !isValidSlug(input.slug)) throw invalid('slug', 'slug is not a slug.');
    slug = (await getOwnedDrop(deps, accountId, input.slug)).slug;
  }
  // Standard Webhooks: `whsec_` and the base64 of 24 to 64 random bytes.
  const secret = `whsec_${Buffer.from(randomBase62(32, deps.random)).toString('base64')}`;
  const webhook: WebhookRecord = {
    id: `wh_${randomBase62(16, deps.random)}`,
    accountId,
    url,
    events,
    slug,
    sealedSecret: deps.seal.seal(secret),
    createdAt: deps.clock.now(),
    disabledAt: null,
    failingSince: null,
  };
  await deps.store.createWebhook(webhook);
  return { webhook, secret };
}

export function listWebhooks(deps: WebhookDeps, accountId: string): Promise<WebhookRecord[]> {
  return deps.store.listWebhooks(accountId);
}

/** The caller's endpoint, or 404 not_found (also for another account's). */
async function ownedWebhook(deps: WebhookDeps, accountId: string, id: string): Promise<WebhookRecord> {
  const found = await deps.store.findWebhook(id);
  if (found === undefined || found.accountId !== accountId) {
    throw new ApiError('not_found', { message: `No webhook "${id}".` });
  }
  return found;
}

export async function deleteWebhook(deps: WebhookDeps, accountId: string, id: string): Promise<void> {
  if (!(await deps.store.deleteWebhook(accountId, id))) {
    throw new ApiError('not_found', { message: `No webhook "${id}".` });
  }
}

/** The endpoint's last 100 attempts, newest first. */
export async function listDeliveries(deps: WebhookDeps, accountId: string, id: string): Promise<DeliveryAttempt[]> {
  await ownedWebhook(deps, accountId, id);
  return deps.store.listAttempts(id, ATTEMPTS_KEPT);
}

/** The body every attempt of an event sends (Standard Webhooks: `type`, `timestamp`, `data`). */
export function eventBody(event: DropEvent): string {
  return JSON.stringify({
    type: event.type,
    timestamp: new Date(event.at).toISOString(),
    data: { slug: event.slug, ...event.data },
  });
}

/** Puts `event` in the outbox of every enabled endpoint of its owner that listens to it. */
export async function enqueueEvent(deps: WebhookDeps, event: DropEvent): Promise<number> {
  const hooks = (await deps.store.listWebhooks(event.accountId)).filter(
    (w) => w.disabledAt === null && w.events.includes(event.type) && (w.slug === null || w.slug === event.slug),
  );
  if (hooks.length === 0) return 0;
  const body = eventBody(event);
  const createdAt = deps.clock.now();
  await deps.store.enqueueDeliveries(
    hooks.map((w) => ({
      id: `msg_${randomBase62(22, deps.random)}`,
      webhookId: w.id,
      type: event.type,
      body,
      createdAt,
    })),
  );
  return hooks.length;
}

/**
 * Puts a `webhook.test` event in the endpoint's outbox (the console's "Send test event"), delivered like any other:
 * `data` holds the endpoint's id and nothing of any drop.
 */
export async function sendTestEvent(deps: WebhookDeps, accountId: string, id: string): Promise<void> {
  const webhook = await ownedWebhook(deps, accountId, id);
  const at = deps.clock.now();
  const body = JSON.stringify({
    type: 'webhook.test',
    timestamp: new Date(at).toISOString(),
    data: { webhook_id: webhook.id },
  });
  await deps.store.enqueueDeliveries([
    { id: `msg_${randomBase62(22, deps.random)}`, webhookId: webhook.id, type: 'webhook.test', body, createdAt: at },
  ]);
}

/** What an attempt needs besides the store: the sender and the retry schedule (tests shorten it). */
export interface AttemptDeps extends WebhookDeps {
  readonly sender: WebhookSender;
  readonly backoffMs?: readonly number[];
}

/**
 * Claims one due delivery and attempts it: sends it, then records the attempt, and either marks it delivered,
 * schedules the next retry, or gives up 24 hours after the event. Resolves false when nothing was due.
 */
export async function attemptOneDelivery(deps: AttemptDeps): Promise<boolean> {
  const now = deps.clock.now();
  const claimed = await deps.store.claimDelivery(now, now + LEASE_MS);
  if (claimed === undefined) return false;
  const started = performance.now();
  const secret = deps.seal.open(claimed.sealedSecret);
  let result: { readonly status?: number; readonly error?: string };
  try {
    result =
      secret === undefined
        ? { error: 'the secret cannot be opened: the service secret changed since it was made' }
        : await deps.sender.deliver({
            url: claimed.url,
            id: claimed.id,
            timestampSeconds: Math.floor(deps.clock.now() / 1000),
            body: claimed.body,
            secret,
          });
  } catch (error) {
    // A sender that throws failed this attempt; the delivery is rescheduled like any other failure.
    result = { error: (error as Error).message };
  }
  const at = deps.clock.now();
  const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
  const schedule = deps.backoffMs ?? BACKOFF_MS;
  const delay = schedule[Math.min(claimed.attempts - 1, schedule.length - 1)] ?? 3_600_000;
  const retryAt = at + delay;
  const outcome = ok ? 'delivered' : retryAt - claimed.createdAt > RETRY_WINDOW_MS ? 'failed' : 'retrying';
  await deps.store.recordAttempt(claimed.id, {
    webhookId: claimed.webhookId,
    eventId: claimed.id,
    type: claimed.type,
    at,
    outcome,
    httpStatus: result.status ?? null,
    error: ok ? null : (result.error ?? `answered ${result.status}`),
    durationMs: Math.round(performance.now() - started),
    nextRetryAt: outcome === 'retrying' ? retryAt : null,
    disableAfterMs: DISABLE_AFTER_MS,
    keep: ATTEMPTS_KEPT,
  });
  return true;
}
