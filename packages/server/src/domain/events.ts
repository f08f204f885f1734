/**
 * What happened to a drop, told to whoever listens (docs/api.md, "Live pages and webhooks"): the open viewers of the
 * drop (the events stream) and the owner's webhooks (the outbox). The domain says what happened through the
 * `EventSink` port, after the write is committed; the composition root decides where events go.
 */

import type { Clock } from './clock.js';
import { hitWindow, type RateCounter } from './rate-counter.js';
import type { AccessWho, DropStore, RefusalReason } from './store.js';

/** The event types a webhook subscribes to (docs/api.md, "Webhooks"). */
export const EVENT_TYPES = [
  'drop.created',
  'drop.version_created',
  'drop.deleted',
  'comment.created',
  'comment.resolved',
  'access.refused',
  'drop.viewed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: unknown): value is EventType =>
  typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);

/** One event of one drop: its owner (whose webhooks hear it), its slug and its data (the webhook body's `data`). */
export interface DropEvent {
  readonly type: EventType;
  readonly accountId: string;
  readonly slug: string;
  /** The body's `data` besides `slug` (added by the outbox); JSON values only. */
  readonly data: Readonly<Record<string, string | number | boolean | null>>;
  /** Unix ms; the body's `timestamp`. */
  readonly at: number;
}

/**
 * Where events go. `emit` resolves once the event is recorded (the outbox rows committed, the live announcement
 * published), so a client that saw the write's answer can count on its event; it never throws (a failure is
 * logged by the sink: the write it follows is already committed).
 */
export interface EventSink {
  emit(event: DropEvent): Promise<void>;
}

/** No listener (tests of the domain alone, the operator command). */
export const NO_EVENTS: EventSink = { emit: async () => undefined };

/**
 * The one place a refusal of a visitor becomes an `access.refused` event (docs/api.md, "Webhooks"): the wrong
 * passcode of the viewer's gate (domain/viewing.ts) and every refusal of who may see a drop (domain/public-view.ts),
 * with who was refused when it is known (as the access log names them). Never throws.
 */
export function reportAccessRefused(
  sink: EventSink,
  drop: { readonly slug: string; readonly accountId: string },
  reason: RefusalReason,
  at: number,
  who?: AccessWho,
): Promise<void> {
  const data: Record<string, string | null> =
    who === undefined ? { reason } : { reason, who_kind: who.kind, who_name: who.name };
  return sink.emit({ type: 'access.refused', accountId: drop.accountId, slug: drop.slug, data, at });
}

/** Why a drop was deleted, as `drop.deleted` tells it (docs/api.md, "Webhooks"). */
export type DeletedReason = 'owner' | 'expired';

/**
 * The one place a deletion becomes a `drop.deleted` event: the owner's delete (domain/drops.ts) and the expiry purge
 * (domain/expiry.ts). Never throws.
 */
export async function reportDropDeleted(
  sink: EventSink | undefined,
  drop: { readonly slug: string; readonly accountId: string },
  reason: DeletedReason,
  at: number,
): Promise<void> {
  await sink?.emit({ type: 'drop.deleted', accountId: drop.accountId, slug: drop.slug, data: { reason }, at });
}

/** One Server-Sent Event: its name and its data (one line of JSON). */
export interface LiveEvent {
  readonly event: 'version' | 'comment';
  readonly data: string;
}

/** What a stream receives: events of its drop, a request to look again, and the end (shutdown). */
export interface LiveListener {
  send(event: LiveEvent): void;
  resync(): void;
  close(): void;
}

/** The open streams of this instance, by drop (coordination/live-events.ts fills it from the bus). */
export interface LiveFeed {
  /** Starts receiving `slug`'s events; returns the unsubscribe function. Refused (undefined) once closed. */
  follow(slug: string, listener: LiveListener): (() => void) | undefined;
  /** Streams open on this instance. */
  readonly open: number;
}

/**
 * `drop.viewed` from the batched view counts (docs/api.md, "Webhooks"): at most one per drop per UTC minute across
 * instances (a shared window of the rate counter), carrying the views counted since the last one (`views`) and the
 * drop's `view_count`. Views of a drop whose minute is spent wait for a later flush.
 */
export interface ViewedEvents {
  /** Views just written by a flush, by slug. */
  add(views: ReadonlyMap<string, number>): void;
  /** Emits what may be emitted now. */
  flush(): Promise<void>;
}

export function createViewedEvents(deps: {
  readonly store: Pick<DropStore, 'findDrop'>;
  readonly counter: RateCounter;
  readonly clock: Clock;
  readonly sink: EventSink;
}): ViewedEvents {
  const pending = new Map<string, number>();
  return {
    add(views) {
      for (const [slug, count] of views) pending.set(slug, (pending.get(slug) ?? 0) + count);
    },
    async flush() {
      for (const [slug, views] of [...pending]) {
        const now = deps.clock.now();
        const { retryAfterSeconds } = await hitWindow(deps.counter, `viewed:${slug}`, 1, 60_000, now);
        if (retryAfterSeconds !== undefined) continue;
        pending.delete(slug);
        const drop = await deps.store.findDrop(slug);
        if (drop === undefined) continue;
        const data = { views, view_count: drop.viewCount };
        await deps.sink.emit({ type: 'drop.viewed', accountId: drop.accountId, slug, data, at: now });
      }
    },
  };
}
