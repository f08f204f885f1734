/**
 * The events stream's fan-out (docs/api.md, "Live pages"): a new version or a comment is announced on the
 * invalidation bus as `live:<slug>:<event>:<data>` (slugs never contain ':'), and every instance hands it to the
 * streams open on that slug there. The bus reaches every instance whichever took the write (Redis pub/sub or
 * PostgreSQL LISTEN/NOTIFY), so a viewer hears about a write within the bus's latency.
 *
 * When the bus lost announcements (`reset`), each open stream is told to look again (`resync`), since a version may
 * have been published meanwhile.
 */
import type { DropEvent, LiveEvent, LiveFeed, LiveListener } from '../domain/events.js';
import type { BusReceiver, InvalidationBus } from './bus.js';

const PREFIX = 'live:';

/** The stream event of a drop event, if it has one (docs/api.md, "Live pages"). */
export function liveEventOf(event: DropEvent): LiveEvent | undefined {
  const { type, data } = event;
  if (type === 'drop.version_created') return { event: 'version', data: JSON.stringify({ version: data.version }) };
  if (type === 'comment.created' || type === 'comment.resolved') {
    return { event: 'comment', data: JSON.stringify({ id: data.id, version: data.version }) };
  }
  return undefined;
}

export interface LiveHub extends LiveFeed {
  /** Announces the live part of `event` (a version, a comment) to every instance; nothing for other types. */
  announce(event: DropEvent): Promise<void>;
  /** The bus receiver: live announcements here, everything else to `next`. */
  receiver(next: BusReceiver): BusReceiver;
  /** Ends every stream and refuses new ones (the instance is shutting down). */
  close(): void;
}

export function createLiveHub(bus: InvalidationBus): LiveHub {
  const followers = new Map<string, Set<LiveListener>>();
  let open = 0;
  let closed = false;
  const deliver = (message: string) => {
    const afterSlug = message.indexOf(':', PREFIX.length);
    const afterEvent = message.indexOf(':', afterSlug + 1);
    if (afterSlug < 0 || afterEvent < 0) return;
    const event = message.slice(afterSlug + 1, afterEvent);
    if (event !== 'version' && event !== 'comment') return;
    const live: LiveEvent = { event, data: message.slice(afterEvent + 1) };
    for (const listener of followers.get(message.slice(PREFIX.length, afterSlug)) ?? []) listener.send(live);
  };
  const resyncAll = () => {
    for (const set of followers.values()) for (const listener of set) listener.resync();
  };
  return {
    async announce(event) {
      const live = liveEventOf(event);
      if (live !== undefined) await bus.publish(`${PREFIX}${event.slug}:${live.event}:${live.data}`);
    },
    follow(slug, listener) {
      if (closed) return undefined;
      const set = followers.get(slug) ?? new Set();
      followers.set(slug, set);
      set.add(listener);
      open += 1;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        open -= 1;
        set.delete(listener);
        if (set.size === 0 && followers.get(slug) === set) followers.delete(slug);
      };
    },
    get open() {
      return open;
    },
    receiver(next) {
      return {
        onChange(message) {
          if (message.startsWith(PREFIX)) deliver(message);
          else next.onChange(message);
        },
        reset() {
          resyncAll();
          next.reset();
        },
        onStatus(subscribed, error) {
          if (subscribed) resyncAll();
          next.onStatus?.(subscribed, error);
        },
      };
    },
    close() {
      closed = true;
      for (const set of [...followers.values()]) for (const listener of [...set]) listener.close();
    },
  };
}
