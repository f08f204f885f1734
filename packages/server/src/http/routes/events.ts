/**
 * `GET /p/<slug>/events` (docs/api.md, "Live pages"): Server-Sent Events of one drop for its open viewers. Access is
 * the viewer's (domain/public-view.ts `mayFollowDrop`), asked once when the stream opens; the stream then carries
 * only version numbers and comment ids. Caps: `HTMLDROP_MAX_EVENT_STREAMS` open streams per instance and
 * `MAX_STREAMS_PER_ADDRESS` per client address, else 429 before any database read.
 *
 * The few lines of the text/event-stream format (WHATWG HTML, "Server-sent events") are written here rather than
 * through a helper library: an `event:` line, a `data:` line, a blank line, and `:` comments as keep-alives
 * (docs/decisions/0036-live-pages-and-webhooks.md).
 */
import type { ServerResponse } from 'node:http';
import { clientGroup } from '../../domain/client-address.js';
import type { LiveEvent, LiveFeed } from '../../domain/events.js';
import { isValidSlug } from '../../domain/ids.js';
import { mayFollowDrop, type PublicViewDeps } from '../../domain/public-view.js';
import { ApiError } from '../../errors.js';
import { refusePage } from '../page-reply.js';
import { EXPIRED_PAGE, failedPage, NOT_FOUND_PAGE, passcodeRequiredPage } from '../pages/layout.js';
import type { TypedApp } from '../typed-app.js';
import type { WebSessions } from '../web-session.js';
import { pageVisitorOf } from './public.js';

/** Streams one client address (an IPv4 address or an IPv6 /64) may hold open on one instance. */
export const MAX_STREAMS_PER_ADDRESS = 20;

/** A keep-alive comment at least this often (docs/api.md, "Live pages": at least every 30 s). */
export const KEEP_ALIVE_MS = 25_000;

/** How long a browser waits before reconnecting a dropped stream (the `retry:` field). */
const RETRY_MS = 3000;

export interface EventRouteDeps {
  readonly view: PublicViewDeps;
  readonly live: LiveFeed;
  readonly maxStreams: number;
  /** The one session of the service's pages: a signed-in person follows a drop shared with them. */
  readonly sessions: WebSessions;
  /** Tests shorten it; KEEP_ALIVE_MS otherwise. */
  readonly keepAliveMs?: number;
}

interface Params {
  readonly slug: string;
}

/** One event in the text/event-stream format (its data is one line of JSON, so one `data:` line). */
const frame = (event: LiveEvent) => `event: ${event.event}\ndata: ${event.data}\n\n`;

export async function eventRoutes(app: TypedApp, deps: EventRouteDeps): Promise<void> {
  const perAddress = new Map<string, number>();
  const keepAliveMs = deps.keepAliveMs ?? KEEP_ALIVE_MS;
  app.get('/p/:slug/events', { schema: { hide: true } }, async (request, reply) => {
    const { slug } = request.params as Params;
    if (!isValidSlug(slug)) return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
    const address = clientGroup(request.ip);
    const held = perAddress.get(address) ?? 0;
    if (held >= MAX_STREAMS_PER_ADDRESS || deps.live.open >= deps.maxStreams) {
      const refusal = new ApiError('rate_limited', {
        message:
          held >= MAX_STREAMS_PER_ADDRESS
            ? 'Too many open event streams from this address; close some and retry.'
            : 'Too many open event streams on this server; retry later.',
        retryAfterSeconds: 10,
      });
      return refusePage(reply, refusal, failedPage(refusal));
    }
    // Counted before the access check, so parallel opens cannot overrun the cap while they wait for the database.
    perAddress.set(address, held + 1);
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    };
    const access = pageVisitorOf(deps.sessions, request);
    let verdict: Awaited<ReturnType<typeof mayFollowDrop>>;
    try {
      verdict = await mayFollowDrop(deps.view, slug, access);
    } catch (error) {
      release();
      throw error;
    }
    if (verdict.kind !== 'open') {
      release();
      if (verdict.kind === 'expired') return refusePage(reply, 'expired', EXPIRED_PAGE);
      if (verdict.kind === 'refused') {
        // Not for this visitor (docs/api.md, "Who can see a drop"): as the raw path answers, nothing of the drop.
        const refusal = new ApiError(access.person === undefined ? 'sign_in_required' : 'not_on_list');
        return refusePage(reply, refusal.code, failedPage(refusal), { cacheControl: 'private, no-store' });
      }
      if (verdict.kind === 'locked') {
        return refusePage(reply, 'locked', passcodeRequiredPage(`/p/${slug}`), { cacheControl: 'private, no-store' });
      }
      return refusePage(reply, 'not_found', NOT_FOUND_PAGE);
    }
    reply.hijack();
    const response = reply.raw;
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      // A buffering proxy would hold events back (nginx honours this header).
      'x-accel-buffering': 'no',
    });
    response.write(`retry: ${RETRY_MS}\n: open\n\n`);
    openStream(deps, slug, response, keepAliveMs, release);
  });
}

/** Follows the drop until the client leaves or the instance shuts down. */
function openStream(
  deps: EventRouteDeps,
  slug: string,
  response: ServerResponse,
  keepAliveMs: number,
  release: () => void,
): void {
  const send = (text: string) => {
    if (!response.writableEnded && !response.destroyed) response.write(text);
  };
  const end = () => {
    clearInterval(keepAlive);
    unfollow?.();
    release();
    if (!response.writableEnded) response.end();
  };
  const unfollow = deps.live.follow(slug, {
    send: (event) => send(frame(event)),
    // Announcements may have been lost: say what the latest version is now (a viewer ignores one it shows).
    resync: () => {
      deps.view.store.findDrop(slug).then(
        (drop) => {
          if (drop === undefined) return;
          send(frame({ event: 'version', data: JSON.stringify({ version: drop.latestVersion }) }));
        },
        () => undefined,
      );
    },
    close: end,
  });
  const keepAlive = setInterval(() => send(': keep-alive\n\n'), keepAliveMs);
  keepAlive.unref();
  response.once('close', end);
  if (unfollow === undefined) end();
}
