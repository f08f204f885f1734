/**
 * Screenshots of versions (docs/api.md, "Previews and embeds"; docs/decisions/0038-previews-and-embeds.md), made in a
 * configured Chromium (HTMLDROP_CHROMIUM) driven by playwright-core, loaded on first use:
 *
 * - off the request path: a write or a preview request only asks (`request()` returns at once); one job runs at a
 *   time, from a bounded queue (a request past it is dropped: the next preview request asks again); a version still
 *   waiting when a newer one of the same drop is asked for is dropped too (a burst of writes renders once);
 * - after the writes: a job starts once no screenshot has been asked for during `quietMs` (1 s), or once the oldest
 *   waiting job has waited `maxDeferMs` (30 s), so a burst of creates is not slowed by the browser (the write
 *   benchmark's ratio holds with a browser configured) and a steady stream of writes still gets its screenshots;
 * - one browser, started for the first pending job, reused, closed after a while without work (never running when
 *   nothing is pending), and replaced when it misbehaves (a job past its time bound, a crash) or after many jobs;
 *   on Linux its every process and thread at a lower CPU priority than the service (process-priority.ts);
 * - each job in a fresh browser context (a throwaway profile: no cookie, no storage, no cache of anything), 1200x630,
 *   within a time bound (10 s) from the context's creation to the PNG;
 * - the drop rendered from its own origin (or its raw path) with the answers the service gives there, its CSP (the
 *   sandbox and the network policy) included, fulfilled from the raw cache: every request the page makes is answered
 *   here, the document and the version's files from the store, a navigation away with 204 (the page stays), and
 *   everything else refused, so a page reaches no network at all. A dead proxy catches what bypasses interception.
 */
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import type { Clock } from '../domain/clock.js';
import type { ContentOrigins } from '../domain/content-origin.js';
import type { DropStore, PreviewStore } from '../domain/store.js';
import { isExpired } from '../domain/types.js';
import type { ScreenshotRequests } from './previews.js';
import { lowerPriority, pipeBrowsers } from './process-priority.js';
import type { RawAnswer } from './raw-cache.js';
import type { FileLoader, RawLoader } from './raw-loader.js';

export interface ScreenshotOptions {
  /** Path of the Chromium executable (HTMLDROP_CHROMIUM). */
  readonly chromium: string;
  readonly store: PreviewStore & Pick<DropStore, 'findDrop'>;
  readonly loadRaw: RawLoader;
  readonly loadFile: FileLoader;
  /** The drops' own origins, when configured: the page is rendered there. */
  readonly contentOrigins: ContentOrigins | undefined;
  readonly baseUrl: string;
  readonly clock: Clock;
  readonly log?: ScreenshotLog;
  /** Time bound of one job, from its browser context to its PNG (10 s). */
  readonly timeoutMs?: number;
  /** Jobs waiting at most (64); a request past them is dropped. */
  readonly maxPending?: number;
  /** The browser is closed after this long without a job (30 s). */
  readonly idleMs?: number;
  /** A job starts only after this long without a new request (1 s): a burst of writes first. */
  readonly quietMs?: number;
  /** ...or once the oldest waiting job has waited this long (30 s), however the writes go on. */
  readonly maxDeferMs?: number;
}

export interface ScreenshotLog {
  warn(details: object, message: string): void;
}

/** What the queue has done, for tests and the operator's log. */
export interface ScreenshotStats {
  /** Browsers started. */
  launches: number;
  /** Jobs begun: a version handed to the browser to render. */
  started: number;
  /** Screenshots stored. */
  made: number;
  /** Jobs that failed or ran out of time (the version keeps its title card). */
  failed: number;
  /** Requests dropped because the queue was full. */
  dropped: number;
  /** Waiting jobs dropped because a newer version of the same drop was asked for (a burst of writes renders once). */
  superseded: number;
}

export interface Screenshots extends ScreenshotRequests {
  readonly stats: Readonly<ScreenshotStats>;
  /** Whether a browser process is running now. */
  browserRunning(): boolean;
  /** The running browser's process id, when it could be told (Linux). */
  browserProcess(): number | undefined;
  /** Resolves once nothing is pending or running. */
  idle(): Promise<void>;
  /** Stops taking jobs and closes the browser. */
  close(): Promise<void>;
}

export const SCREENSHOT_WIDTH = 1200;
export const SCREENSHOT_HEIGHT = 630;

/** Jobs a browser serves before it is replaced, so that what pages leave behind cannot pile up. */
const JOBS_PER_BROWSER = 200;

/** Versions already tried in this process (made, or failed), so that preview requests do not ask again and again. */
const MAX_TRIED = 4096;

/**
 * Chromium's switches besides Playwright's: a dead proxy (nothing a page sends past interception gets anywhere), no
 * UDP for WebRTC outside the proxy, no background traffic of the browser itself, and a bounded script heap.
 */
const CHROMIUM_ARGS = [
  '--proxy-server=socks5://127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-domain-reliability',
  '--dns-prefetch-disable',
  '--no-pings',
  '--mute-audio',
  '--js-flags=--max-old-space-size=256',
];

type Playwright = typeof import('playwright-core');
let playwright: Promise<Playwright> | undefined;

/** playwright-core, imported for the first job (not at start-up: test/startup-imports.test.ts). */
function loadPlaywright(): Promise<Playwright> {
  playwright ??= import('playwright-core').catch((error: unknown) => {
    playwright = undefined;
    throw error;
  });
  return playwright;
}

class TimedOut extends Error {}

/** `work`, or TimedOut after `ms`. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(`timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** A raw answer as Playwright fulfils it: its headers (the CSP among them) and its body. */
function fulfilment(answer: RawAnswer): { status: number; headers: Record<string, string>; body: Buffer } {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < answer.headers.length; i += 2) {
    const name = (answer.headers[i] as string).toLowerCase();
    if (name !== 'content-length' && name !== 'cache-control') headers[name] = answer.headers[i + 1] as string;
  }
  return { status: 200, headers, body: answer.body };
}

interface Job {
  readonly slug: string;
  readonly version: number | undefined;
  /** When it was asked for (`performance.now()`). */
  readonly asked: number;
}

export function createScreenshots(options: ScreenshotOptions): Screenshots {
  const { store, clock, log } = options;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxPending = options.maxPending ?? 64;
  const idleMs = options.idleMs ?? 30_000;
  const quietMs = options.quietMs ?? 1000;
  const maxDeferMs = options.maxDeferMs ?? 30_000;
  const stats: ScreenshotStats = { launches: 0, started: 0, made: 0, failed: 0, dropped: 0, superseded: 0 };
  const pending = new Map<string, Job>();
  const tried = new Set<string>();
  let running: Promise<void> | undefined;
  let browser: Browser | undefined;
  let jobsOnBrowser = 0;
  /** The browser's process, when it could be told (Linux): it and its children run at a lower priority. */
  let browserPid: number | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let closed = false;
  /** When the last screenshot was asked for (`performance.now()`). */
  let lastAsked = Number.NEGATIVE_INFINITY;
  /** The wait for a quiet moment, ended early by close(). */
  let deferred: { timer: NodeJS.Timeout; wake: () => void } | undefined;

  const remember = (key: string) => {
    tried.add(key);
    if (tried.size > MAX_TRIED) tried.delete(tried.values().next().value as string);
  };

  async function launch(): Promise<Browser> {
    const { chromium } = await loadPlaywright();
    const others = new Set(pipeBrowsers());
    const launched = await chromium.launch({
      executablePath: options.chromium,
      headless: true,
      args: CHROMIUM_ARGS,
      timeout: timeoutMs,
      // The service's own signals stop it; Chromium goes with the service's process.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    stats.launches += 1;
    jobsOnBrowser = 0;
    // Its process: the one browser our process started during this launch.
    browserPid = pipeBrowsers().find((pid) => !others.has(pid));
    if (browserPid !== undefined) lowerPriority(browserPid);
    const pid = browserPid;
    launched.on('disconnected', () => {
      if (browser === launched) browser = undefined;
      if (browserPid === pid) browserPid = undefined;
    });
    return launched;
  }

  /** Closes the browser, bounded: a browser that does not close in time is left to its process's exit. */
  async function stopBrowser(): Promise<void> {
    const closing = browser;
    browser = undefined;
    if (closing === undefined) return;
    await within(5000, closing.close()).catch((error: unknown) => {
      log?.warn({ err: error }, 'screenshot browser did not close');
    });
  }

  /** Where the page is rendered, and how each request it makes is answered. */
  function router(slug: string, label: string | null, version: number) {
    const origin =
      label !== null && options.contentOrigins !== undefined ? options.contentOrigins.originOf(label) : undefined;
    const rawFolder = `${options.baseUrl}/p/${slug}/raw/v/${version}/`;
    const documentUrl = origin === undefined ? rawFolder : `${origin}/v/${version}/`;
    const surface = origin === undefined ? 'raw' : 'content';
    let navigated = false;
    return {
      documentUrl,
      async handle(route: Route): Promise<void> {
        const request = route.request();
        const url = request.url().split('#')[0] as string;
        if (request.isNavigationRequest() && request.frame().parentFrame() === null) {
          // The first navigation is ours; any later one (the page going away) is answered 204: the page stays.
          if (navigated || url !== documentUrl) return route.fulfill({ status: 204, body: '' });
          navigated = true;
        }
        const path = url.startsWith(documentUrl)
          ? url.slice(documentUrl.length)
          : url.startsWith(rawFolder)
            ? url.slice(rawFolder.length)
            : undefined;
        if (path === undefined) return route.abort('blockedbyclient');
        const file = path.split('?')[0] as string;
        let decoded: string;
        try {
          decoded = decodeURIComponent(file);
        } catch {
          return route.abort('blockedbyclient');
        }
        const entry =
          file === ''
            ? await options.loadRaw({ slug }, version, true)
            : await options.loadFile({ slug }, version, decoded);
        if (entry === undefined) return route.fulfill({ status: 404, body: '' });
        const answers = surface === 'content' ? (entry.contentAnswers ?? entry.answers) : entry.answers;
        return route.fulfill(fulfilment(answers.private.identity));
      },
    };
  }

  /** Renders one version and returns its PNG, within the time bound. */
  async function render(slug: string, label: string | null, version: number): Promise<Buffer> {
    if (browser === undefined) {
      const launched = await launch();
      if (closed) {
        await within(5000, launched.close()).catch(() => undefined);
        throw new Error('the screenshot queue closed');
      }
      browser = launched;
    }
    jobsOnBrowser += 1;
    const { documentUrl, handle } = router(slug, label, version);
    let context: BrowserContext | undefined;
    const work = (async () => {
      context = await (browser as Browser).newContext({
        viewport: { width: SCREENSHOT_WIDTH, height: SCREENSHOT_HEIGHT },
        deviceScaleFactor: 1,
        acceptDownloads: false,
        serviceWorkers: 'block',
        colorScheme: 'light',
        reducedMotion: 'reduce',
      });
      await context.route('**/*', (route) => handle(route).catch(() => undefined));
      // WebSockets are not routed above: each is answered here and never reaches a server.
      await context.routeWebSocket(/.*/, (ws) => ws.close());
      let first: Page | undefined;
      context.on('page', (opened) => {
        // A popup is closed at once; the page under test is the first one.
        if (first !== undefined && opened !== first) opened.close().catch(() => undefined);
      });
      const page = await context.newPage();
      first = page;
      await page.goto(documentUrl, { waitUntil: 'load', timeout: Math.floor(timeoutMs * 0.6) }).catch((error) => {
        // A page that never finishes loading is photographed as it is, if its renderer still answers.
        if (!(error instanceof Error) || !/Timeout/i.test(error.name + error.message)) throw error;
      });
      await page.evaluate('document.fonts.ready.then(() => true)').catch(() => undefined);
      return page.screenshot({ type: 'png', animations: 'disabled', caret: 'hide', timeout: timeoutMs });
    })();
    try {
      return await within(timeoutMs, work);
    } catch (error) {
      // Past its bound, or its renderer broken: this browser may be stuck. A fresh one for the next job.
      work.catch(() => undefined);
      await stopBrowser();
      throw error;
    } finally {
      if (context !== undefined) await within(3000, context.close()).catch(() => undefined);
      // Processes and threads the job made, lowered too.
      if (browserPid !== undefined && browser !== undefined) lowerPriority(browserPid);
    }
  }

  async function runJob({ slug, version: asked }: Job): Promise<void> {
    const drop = await store.findDrop(slug);
    if (drop === undefined || isExpired(drop, clock.now())) return;
    const version = asked ?? drop.latestVersion;
    const key = `${slug}@${version}`;
    if (tried.has(key)) return;
    remember(key);
    if ((await store.findPreview(slug, version)) !== undefined) return;
    stats.started += 1;
    try {
      const png = await render(slug, drop.contentLabel, version);
      if (await store.keepPreview(slug, version, png, clock.now())) stats.made += 1;
    } catch (error) {
      stats.failed += 1;
      log?.warn({ err: error, slug, version }, 'screenshot failed; the title card stays');
    }
    if (jobsOnBrowser >= JOBS_PER_BROWSER) await stopBrowser();
  }

  /**
   * Resolves when the next job may start: nothing has been asked for during `quietMs`, or the oldest waiting job has
   * waited `maxDeferMs`; at once when nothing waits or the queue closed.
   */
  async function untilQuiet(): Promise<void> {
    for (;;) {
      if (pending.size === 0 || closed) return;
      let oldest = Number.POSITIVE_INFINITY;
      for (const job of pending.values()) oldest = Math.min(oldest, job.asked);
      const wait = Math.min(lastAsked + quietMs, oldest + maxDeferMs) - performance.now();
      if (wait <= 0) return;
      await new Promise<void>((wake) => {
        deferred = { timer: setTimeout(wake, Math.ceil(wait)), wake };
      });
      deferred = undefined;
    }
  }

  async function drain(): Promise<void> {
    clearTimeout(idleTimer);
    for (;;) {
      // Before every job, not only the first: a burst that begins while the queue runs pauses it after its job.
      await untilQuiet();
      const next = pending.entries().next();
      if (next.done || closed) break;
      const [key, job] = next.value;
      pending.delete(key);
      await runJob(job).catch((error: unknown) => {
        stats.failed += 1;
        log?.warn({ err: error, slug: job.slug }, 'screenshot job failed');
      });
    }
    running = undefined;
    if (browser !== undefined && !closed) {
      idleTimer = setTimeout(() => void stopBrowser(), idleMs);
      idleTimer.unref();
    }
  }

  return {
    stats,
    request(slug, version) {
      if (closed) return;
      const now = performance.now();
      lastAsked = now;
      const key = `${slug}@${version ?? 'latest'}`;
      if (version !== undefined && tried.has(key)) return;
      let asked = now;
      if (version !== undefined) {
        // A burst of versions (an agent publishing again and again) is rendered once, at its newest: an older
        // version still waiting is dropped. Its preview shows the card until someone asks for it again. The newest
        // waits from when the first of them was asked for, so a drop written without pause still gets its image.
        for (const [waiting, job] of pending) {
          if (job.slug === slug && job.version !== undefined && job.version < version) {
            pending.delete(waiting);
            stats.superseded += 1;
            asked = Math.min(asked, job.asked);
          }
        }
      }
      if (!pending.has(key)) {
        if (pending.size >= maxPending) {
          stats.dropped += 1;
          return;
        }
        pending.set(key, { slug, version, asked });
      }
      // After the current request's answer: the job never adds to a write's latency.
      running ??= new Promise<void>((resolve) => setImmediate(resolve)).then(drain);
    },
    browserRunning: () => browser !== undefined,
    browserProcess: () => (browser === undefined ? undefined : browserPid),
    async idle() {
      while (running !== undefined) await running;
    },
    async close() {
      closed = true;
      pending.clear();
      clearTimeout(idleTimer);
      if (deferred !== undefined) {
        clearTimeout(deferred.timer);
        deferred.wake();
      }
      // The browser first: a job still running then fails at once instead of holding the shutdown for its bound.
      await stopBrowser();
      await running;
      await stopBrowser();
    },
  };
}
