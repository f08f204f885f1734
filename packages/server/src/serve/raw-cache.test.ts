import { describe, expect, it } from 'vitest';
import { prepareHead } from './prepared-head.js';
import { type CachePolicy, createRawCache, type RawAnswers, type RawEntry } from './raw-cache.js';

function entry(slug: string, version: number, size = 10): RawEntry {
  const body = Buffer.alloc(size);
  const headers = ['content-length', String(size)];
  const identity = {
    body,
    etag: `"${version}"`,
    encoding: undefined,
    headers,
    head: prepareHead(headers),
    notModifiedHeaders: [],
  };
  const under = (policy: CachePolicy): RawAnswers => ({
    policy,
    locked: false,
    expiresAt: null,
    identity,
    gzip: undefined,
    brotli: undefined,
  });
  return {
    slug,
    accountId: 'u_test',
    version,
    latestVersion: version,
    locked: false,
    passcodeGeneration: 0,
    expiresAt: null,
    visibility: 'public',
    allow: [],
    contentLabel: `label${slug}`,
    answers: { latest: under('latest'), pinned: under('pinned'), private: under('private') },
    contentAnswers: { latest: under('latest'), pinned: under('pinned'), private: under('private') },
    bytes: size,
  };
}

describe('raw cache', () => {
  it('while its age is limited (the bus is down), serves an entry for at most that long, then trusts again', () => {
    let now = 1_000_000;
    const cache = createRawCache({ now: () => now });
    cache.set(entry('a', 1), { slug: 'a' }, undefined, cache.generation());
    expect(cache.answersFor('/p/a/raw')).toBeDefined();
    cache.limitAge(2000);
    // Stored while trusted: it may have missed an announcement already, so it is not served under the limit.
    expect(cache.answersFor('/p/a/raw')).toBeUndefined();
    cache.set(entry('a', 2), { slug: 'a' }, undefined, cache.generation());
    now += 2000;
    expect(cache.get({ slug: 'a' }, undefined)?.version).toBe(2);
    now += 1;
    expect(cache.answersFor('/p/a/raw')).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.limitAge(undefined);
    cache.set(entry('a', 3), { slug: 'a' }, undefined, cache.generation());
    now += 3_600_000;
    expect(cache.get({ slug: 'a' }, undefined)?.version).toBe(3);
  });

  it('evicts the least recently used entries beyond its byte budget', () => {
    const cache = createRawCache({ maxBytes: 30 });
    for (const slug of ['a', 'b', 'c']) cache.set(entry(slug, 1), { slug }, undefined, cache.generation());
    cache.get({ slug: 'a' }, undefined);
    cache.set(entry('d', 1), { slug: 'd' }, undefined, cache.generation());
    expect(cache.get({ slug: 'b' }, undefined)).toBeUndefined();
    expect(cache.get({ slug: 'a' }, undefined)).toBeDefined();
    expect(cache.size).toBe(3);
  });

  it('drops every entry of a slug on invalidate, and a load that started before the change', () => {
    const cache = createRawCache();
    cache.set(entry('a', 1), { slug: 'a' }, undefined, cache.generation());
    cache.set(entry('a', 1), { slug: 'a' }, 1, cache.generation());
    // The same drop on its own origin is cached under its label (docs/api.md, "Each drop on its own origin").
    cache.set(entry('a', 1), { label: 'labela' }, undefined, cache.generation());
    expect(cache.answersFor('labela/')).toBeDefined();
    expect(cache.get({ label: 'labela' }, undefined)?.slug).toBe('a');
    const stamp = cache.generation();
    cache.invalidate('a');
    expect(cache.get({ slug: 'a' }, undefined)).toBeUndefined();
    expect(cache.get({ slug: 'a' }, 1)).toBeUndefined();
    expect(cache.answersFor('labela/')).toBeUndefined();
    cache.set(entry('a', 1), { slug: 'a' }, undefined, stamp);
    expect(cache.get({ slug: 'a' }, undefined)).toBeUndefined();
    cache.set(entry('a', 2), { slug: 'a' }, undefined, cache.generation());
    expect(cache.get({ slug: 'a' }, undefined)?.version).toBe(2);
  });

  it('forgets everything on clear, including loads in flight for slugs it never saw', () => {
    const cache = createRawCache();
    cache.set(entry('a', 1), { slug: 'a' }, undefined, cache.generation());
    const stamp = cache.generation();
    cache.clear();
    expect(cache.size).toBe(0);
    cache.set(entry('new', 1), { slug: 'new' }, undefined, stamp);
    expect(cache.get({ slug: 'new' }, undefined)).toBeUndefined();
  });

  it('finds answers by the canonical request URL only, under the policy the URL implies', () => {
    const cache = createRawCache();
    cache.set(entry('a', 2), { slug: 'a' }, undefined, cache.generation());
    cache.set(entry('a', 1), { slug: 'a' }, 1, cache.generation());
    expect(cache.answersFor('/p/a/raw')?.policy).toBe('latest');
    expect(cache.answersFor('/p/a/raw')?.identity.etag).toBe('"2"');
    expect(cache.answersFor('/p/a/raw?v=1')?.policy).toBe('pinned');
    expect(cache.answersFor('/p/a/raw?v=1')?.identity.etag).toBe('"1"');
    for (const other of [
      '/p/a/raw/',
      '/p/a/raw?v=01',
      '/p/a/raw?v=1&x=1',
      '/p/a/raw?',
      '/p/A/raw',
      '/p/a',
      'a@latest',
    ]) {
      expect(cache.answersFor(other)).toBeUndefined();
    }
    cache.invalidate('a');
    expect(cache.answersFor('/p/a/raw')).toBeUndefined();
    expect(cache.answersFor('/p/a/raw?v=1')).toBeUndefined();
  });

  it('keeps a version folder’s document and files under the URLs that name them, and drops them with the slug', () => {
    const cache = createRawCache({ maxBytes: 1000, maxFileEntryBytes: 100 });
    cache.set(entry('a', 2), { slug: 'a' }, 2, cache.generation(), '');
    cache.set(entry('a', 2, 50), { slug: 'a' }, 2, cache.generation(), 'img/x.png');
    cache.set(entry('a', 2, 50), { label: 'labela' }, undefined, cache.generation(), 'img/x.png');
    cache.set(entry('a', 2, 50), { label: 'labela' }, 2, cache.generation(), 'img/x.png');
    expect(cache.answersFor('/p/a/raw/v/2/')?.policy).toBe('pinned');
    expect(cache.answersFor('/p/a/raw/v/2/img/x.png')?.policy).toBe('pinned');
    expect(cache.answersFor('labela/img/x.png')?.policy).toBe('latest');
    expect(cache.answersFor('labela/v/2/img/x.png')?.policy).toBe('pinned');
    expect(cache.get({ label: 'labela' }, undefined, 'img/x.png')?.version).toBe(2);
    // A file larger than its share is not kept (it would push out the hot set); a document of that size is.
    cache.set(entry('b', 1, 101), { slug: 'b' }, 1, cache.generation(), 'big.bin');
    expect(cache.answersFor('/p/b/raw/v/1/big.bin')).toBeUndefined();
    cache.set(entry('b', 1, 101), { slug: 'b' }, 1, cache.generation());
    expect(cache.answersFor('/p/b/raw?v=1')).toBeDefined();
    cache.invalidate('a');
    for (const key of ['/p/a/raw/v/2/', '/p/a/raw/v/2/img/x.png', 'labela/img/x.png', 'labela/v/2/img/x.png']) {
      expect(cache.answersFor(key), key).toBeUndefined();
    }
  });
});
