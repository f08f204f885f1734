/**
 * The events stream `GET /p/<slug>/events` (docs/api.md, "Live pages"): two instances on one database joined by a
 * real bus (Redis on SQLite, LISTEN/NOTIFY on PostgreSQL); a write on one reaches a stream on the other within a
 * second; the viewer's access rules; keep-alives; the caps; a clean end on shutdown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_STREAMS_PER_ADDRESS } from '../src/http/routes/events.js';
import { page } from './helpers.js';
import { type Cluster, call, createCluster, type EventReader, openEvents } from './instances.js';

let cluster: Cluster;
let ann: string;

beforeAll(async () => {
  cluster = await createCluster({ app: { eventKeepAliveMs: 200 } });
  ann = await cluster.token('ann');
});
afterAll(async () => {
  await cluster.close();
});

const [a, b] = [() => cluster.at(0), () => cluster.at(1)];

async function newDrop(extra: Record<string, unknown> = {}): Promise<string> {
  const made = await call(a(), 'POST', '/api/drops', ann, { title: 'Live', html: page('one'), ...extra });
  expect(made.status).toBe(201);
  return made.json.slug;
}

describe('the events stream', () => {
  it('tells a stream on A of a version PUT on B, and of a comment made and resolved on B, within a second', async () => {
    const slug = await newDrop();
    const stream = await openEvents(`${a().url}/p/${slug}/events`);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(stream.headers.get('cache-control')).toBe('no-store');
      await new Promise<void>((resolve) => setTimeout(resolve, 50));
      expect((await call(b(), 'PUT', `/api/drops/${slug}`, ann, { html: page('two') })).status).toBe(200);
      // Within a second of the write, counted from its answer (the write's own time is not the stream's).
      const written = performance.now();
      const version = await stream.next((e) => e.event === 'version', 1000);
      expect(JSON.parse(version.data)).toEqual({ version: 2 });
      expect(version.at - written).toBeLessThan(1000);

      const made = await call(b(), 'POST', `/api/drops/${slug}/comments`, ann, { body: 'Check the totals' });
      expect(made.status).toBe(201);
      const comment = await stream.next((e) => e.event === 'comment', 1000);
      expect(JSON.parse(comment.data)).toEqual({ id: made.json.id, version: 2 });

      const resolved = await call(b(), 'POST', `/api/drops/${slug}/comments/${made.json.id}/resolve`, ann);
      expect(resolved.status).toBe(200);
      await stream.next((e) => e.event === 'comment' && e !== comment, 1000);
      // A title change is not a version: nothing more.
      await call(b(), 'PATCH', `/api/drops/${slug}`, ann, { title: 'Renamed' });
      await call(b(), 'PUT', `/api/drops/${slug}`, ann, { html: page('three') });
      await stream.next((e) => e.data === '{"version":3}', 1000);
      expect(stream.events.map((e) => e.event)).toEqual(['version', 'comment', 'comment', 'version']);
    } finally {
      stream.close();
    }
  });

  it('sends a keep-alive comment while nothing happens', async () => {
    const slug = await newDrop();
    const stream = await openEvents(`${b().url}/p/${slug}/events`);
    try {
      await new Promise<void>((resolve) => setTimeout(resolve, 500));
      expect(stream.comments.filter((c) => c === 'keep-alive').length).toBeGreaterThanOrEqual(1);
    } finally {
      stream.close();
    }
  });

  it('follows the viewer: 404 for an unknown drop or a bad slug, 401 for a locked drop without its passcode', async () => {
    const unknown = await openEvents(`${a().url}/p/nosuchdrop1/events`);
    expect(unknown.status).toBe(404);
    expect((await openEvents(`${a().url}/p/bad!slug/events`)).status).toBe(404);
    const locked = await newDrop({ passcode: 'open sesame' });
    const refused = await openEvents(`${a().url}/p/${locked}/events`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('cache-control')).toBe('private, no-store');
    // With the capability cookie the viewer got, the stream opens.
    const unlocked = await fetch(`${a().url}/p/${locked}/unlock`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: cluster.config.baseUrl },
      body: 'passcode=open+sesame',
      redirect: 'manual',
    });
    expect(unlocked.status).toBe(303);
    const cookie = (unlocked.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const opened = await openEvents(`${b().url}/p/${locked}/events`, { cookie });
    expect(opened.status).toBe(200);
    opened.close();
  });

  it(`refuses the ${MAX_STREAMS_PER_ADDRESS + 1}th stream from one address with 429, and takes one again after a close`, async () => {
    const slug = await newDrop();
    const open: EventReader[] = [];
    try {
      for (let i = 0; i < MAX_STREAMS_PER_ADDRESS; i += 1) open.push(await openEvents(`${a().url}/p/${slug}/events`));
      expect(open.every((s) => s.status === 200)).toBe(true);
      const over = await openEvents(`${a().url}/p/${slug}/events`);
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toBe('10');
      // Another instance counts its own.
      const elsewhere = await openEvents(`${b().url}/p/${slug}/events`);
      expect(elsewhere.status).toBe(200);
      elsewhere.close();
      open.pop()?.close();
      await waitUntil(() => a().services.live.open < MAX_STREAMS_PER_ADDRESS);
      const again = await openEvents(`${a().url}/p/${slug}/events`);
      expect(again.status).toBe(200);
      open.push(again);
    } finally {
      for (const s of open) s.close();
    }
    await waitUntil(() => a().services.live.open === 0);
  });

  it('refuses streams beyond HTMLDROP_MAX_EVENT_STREAMS on the instance with 429', async () => {
    const small = await createCluster({ size: 1, env: { HTMLDROP_MAX_EVENT_STREAMS: '5' } });
    const open: EventReader[] = [];
    try {
      const owner = await small.token('ann');
      const only = small.at(0);
      const slug = (await call(only, 'POST', '/api/drops', owner, { title: 'Live', html: page('one') })).json.slug;
      for (let i = 0; i < 5; i += 1) open.push(await openEvents(`${only.url}/p/${slug}/events`));
      expect(open.every((s) => s.status === 200)).toBe(true);
      const over = await openEvents(`${only.url}/p/${slug}/events`);
      expect(over.status).toBe(429);
    } finally {
      for (const s of open) s.close();
      await small.close();
    }
  });

  it('ends every open stream when the instance shuts down, without waiting for them', async () => {
    const slug = await newDrop();
    const extra = await cluster.add();
    const stream = await openEvents(`${extra.url}/p/${slug}/events`);
    expect(stream.status).toBe(200);
    const started = performance.now();
    await extra.close();
    await stream.ended;
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

async function waitUntil(condition: () => boolean, ms = 2000): Promise<void> {
  const until = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > until) throw new Error('condition not met');
    await new Promise<void>((resolve) => setTimeout(resolve, 10));
  }
}
