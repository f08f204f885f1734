/**
 * Waking requests that wait for comments (docs/api.md, "Comments"): a new comment is announced on the invalidation
 * bus as `comment:<account id>` (slugs never contain ':', so the cache receiver can tell the two apart), and every
 * instance wakes its waiters for that account. When the bus lost announcements (`reset`), every waiter wakes and
 * looks again; while it is down, waiters also look again every `pollWhileDownMs`.
 */
import type { CommentSignal } from '../domain/comments.js';
import type { BusReceiver, InvalidationBus } from './bus.js';

const PREFIX = 'comment:';

export interface CommentSignalHub extends CommentSignal {
  /** The bus receiver: comment announcements here, everything else to `next` (the raw cache's receiver). */
  receiver(next: BusReceiver): BusReceiver;
  /** Wakes every waiter and ends waits from now on at once (the instance is shutting down). */
  close(): void;
}

export function createCommentSignal(bus: InvalidationBus, pollWhileDownMs = 1000): CommentSignalHub {
  const waiters = new Map<string, Set<(how: 'woken' | 'stop') => void>>();
  let closed = false;
  const wake = (accountId: string, how: 'woken' | 'stop' = 'woken') => {
    for (const done of waiters.get(accountId) ?? []) done(how);
  };
  const wakeAll = (how: 'woken' | 'stop' = 'woken') => {
    for (const accountId of [...waiters.keys()]) wake(accountId, how);
  };
  return {
    announce: (accountId) => bus.publish(`${PREFIX}${accountId}`),
    wait(accountId, ms, abort) {
      return new Promise((resolve) => {
        if (closed || abort?.aborted === true) {
          resolve('stop');
          return;
        }
        const set = waiters.get(accountId) ?? new Set();
        waiters.set(accountId, set);
        const limit = bus.subscribed ? ms : Math.min(ms, pollWhileDownMs);
        const done = (how: 'woken' | 'timeout' | 'stop') => {
          clearTimeout(timer);
          abort?.removeEventListener('abort', aborted);
          set.delete(done);
          if (set.size === 0) waiters.delete(accountId);
          resolve(how);
        };
        const aborted = () => done('stop');
        const timer = setTimeout(() => done('timeout'), limit);
        abort?.addEventListener('abort', aborted);
        set.add(done);
      });
    },
    close() {
      closed = true;
      wakeAll('stop');
    },
    receiver(next) {
      return {
        onChange(message) {
          if (message.startsWith(PREFIX)) wake(message.slice(PREFIX.length));
          else next.onChange(message);
        },
        reset() {
          wakeAll();
          next.reset();
        },
        onStatus(subscribed, error) {
          if (subscribed) wakeAll();
          next.onStatus?.(subscribed, error);
        },
      };
    },
  };
}
