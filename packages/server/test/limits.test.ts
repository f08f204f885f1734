/** Rate windows, quotas and version rules, including their atomicity under concurrent requests. */
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, createTestClock, type Harness, page } from './helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const create = (harness: Harness, token: string, title = 't') =>
  harness.call('POST', '/api/drops', { token, body: { title, html: page() } });

describe('per-account write limits', () => {
  it('answers 429 rate_limited past the per-minute limit with equal Retry-After and details, until the next UTC minute', async () => {
    const clock = createTestClock(Date.UTC(2026, 10, 21, 12, 0, 15));
    h = await createHarness({ clock, limits: { maxWritesPerMinute: 3 } });
    const token = await h.token();
    for (let i = 0; i < 3; i++) expect((await create(h, token)).status).toBe(201);
    const refused = await create(h, token);
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('rate_limited');
    expect(refused.headers['retry-after']).toBe('45');
    expect(refused.json.error.details.retry_after_seconds).toBe(45);
    // Reads are not writes.
    expect((await h.call('GET', '/api/drops', { token })).status).toBe(200);
    clock.advance(45_000);
    expect((await create(h, token)).status).toBe(201);
  });

  it('counts failed writes and every write method, per account rather than per token, but not refused ones', async () => {
    h = await createHarness({ limits: { maxWritesPerMinute: 4 }, clock: createTestClock() });
    const first = await h.token('same');
    const second = await h.token('same');
    const other = await h.token('other');
    expect((await h.call('POST', '/api/drops', { token: first, body: { title: 't' } })).status).toBe(400);
    const slug = (await create(h, second)).json.slug;
    expect((await h.call('PATCH', `/api/drops/${slug}`, { token: first, body: { title: 'x' } })).status).toBe(200);
    expect((await h.call('DELETE', '/api/prototypes/NoSuchDrop', { token: second })).status).toBe(404);
    for (let i = 0; i < 3; i++) expect((await create(h, first)).status).toBe(429);
    expect((await create(h, other)).status).toBe(201);
  });

  it('answers 429 daily_quota_exceeded past the per-day limit, Retry-After until UTC midnight', async () => {
    const clock = createTestClock(Date.UTC(2026, 10, 21, 23, 0, 0));
    h = await createHarness({ clock, limits: { maxWritesPerDay: 2 } });
    const token = await h.token();
    await create(h, token);
    await create(h, token);
    const refused = await create(h, token);
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('daily_quota_exceeded');
    expect(refused.headers['retry-after']).toBe('3600');
    expect(refused.json.error.details.retry_after_seconds).toBe(3600);
    clock.advance(3_600_000);
    expect((await create(h, token)).status).toBe(201);
  });

  it('gives exactly the per-minute limit of successes to 100 concurrent writes', async () => {
    h = await createHarness({ limits: { maxWritesPerMinute: 7 }, clock: createTestClock() });
    const token = await h.token();
    const harness = h;
    const replies = await Promise.all(Array.from({ length: 100 }, () => create(harness, token)));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(7);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(93);
  });
});

describe('quotas', () => {
  it('50 concurrent creates against a quota of 5 leave exactly 5 drops; the sixth is 429 quota_exceeded without Retry-After', async () => {
    h = await createHarness({ limits: { maxDropsPerAccount: 5 } });
    const token = await h.token();
    const harness = h;
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => create(harness, token, `d${i}`)));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(5);
    const refused = replies.filter((r) => r.status !== 201);
    expect(refused.every((r) => r.status === 429 && r.json.error.code === 'quota_exceeded')).toBe(true);
    expect(refused[0]?.headers['retry-after']).toBeUndefined();
    expect(refused[0]?.json.error.details.max_drops).toBe(5);
    const list = await h.call('GET', '/api/drops', { token });
    expect(list.json.pagination.total_items).toBe(5);
    expect((await h.call('GET', '/api/me', { token })).json.drop_count).toBe(5);
    // Deleting frees a slot.
    await h.call('DELETE', `/api/drops/${list.json.data[0].slug}`, { token });
    expect((await create(h, token)).status).toBe(201);
  });

  it('does not count creates refused with 429 quota_exceeded toward the write limits', async () => {
    h = await createHarness({ limits: { maxDropsPerAccount: 1, maxWritesPerMinute: 3 }, clock: createTestClock() });
    const token = await h.token();
    const slug = (await create(h, token)).json.slug;
    for (let i = 0; i < 4; i++) expect((await create(h, token)).json.error.code).toBe('quota_exceeded');
    expect((await h.call('PATCH', `/api/drops/${slug}`, { token, body: { title: 'a' } })).status).toBe(200);
    expect((await h.call('PATCH', `/api/drops/${slug}`, { token, body: { title: 'b' } })).status).toBe(200);
    expect((await h.call('PATCH', `/api/drops/${slug}`, { token, body: { title: 'c' } })).json.error.code).toBe(
      'rate_limited',
    );
  });

  it('answers 409 version_limit_reached at the version cap; deleting a version frees a slot, numbers never repeat', async () => {
    h = await createHarness({ limits: { maxVersionsPerDrop: 3 } });
    const token = await h.token();
    const slug = (await create(h, token)).json.slug;
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page() } });
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page() } });
    const refused = await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page() } });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: 'version_limit_reached', details: { max_versions: 3 } });
    await h.call('DELETE', `/api/drops/${slug}/v/2`, { token });
    const next = await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page() } });
    expect(next.json.latest_version).toBe(4);
    const versions = await h.call('GET', `/api/drops/${slug}/versions`, { token });
    expect(versions.json.map((v: { version: number }) => v.version)).toEqual([4, 3, 1]);
  });

  it('30 concurrent PUTs get 30 distinct consecutive version numbers', async () => {
    h = await createHarness();
    const token = await h.token();
    const slug = (await create(h, token)).json.slug;
    const harness = h;
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        harness.call('PUT', `/api/drops/${slug}`, { token, body: { html: page(String(i)) } }),
      ),
    );
    const numbers = replies.map((r) => r.json.latest_version).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 30 }, (_, i) => i + 2));
  });

  it('concurrent deletes of the two versions of a drop leave exactly one', async () => {
    h = await createHarness();
    const token = await h.token();
    const slug = (await create(h, token)).json.slug;
    await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page() } });
    const harness = h;
    const replies = await Promise.all(
      [1, 2, 1, 2].map((n) => harness.call('DELETE', `/api/drops/${slug}/v/${n}`, { token })),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect((await h.call('GET', `/api/drops/${slug}/versions`, { token })).json).toHaveLength(1);
  });
});
