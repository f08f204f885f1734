import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signingKeysFromSecret } from '../keys/signing-keys.js';
import type { ViewBatch } from './types.js';
import { createViewerHasher } from './viewer-id.js';
import { countRender, createViewCounter } from './viewing.js';

const DAY = Date.UTC(2026, 10, 21, 12);
const UA = 'Mozilla/5.0 (X11; Linux x86_64)';
const SECRET = 's'.repeat(40);

describe('viewer hashes', () => {
  const hasher = () => createViewerHasher(signingKeysFromSecret(SECRET).viewerDay);

  it('are HMAC-SHA256 of address and User-Agent under HMAC(viewer-day key, UTC day), 32 hex characters', () => {
    const key = signingKeysFromSecret(SECRET).viewerDay;
    const dayKey = createHmac('sha256', key).update('2026-11-21').digest();
    const expected = createHmac('sha256', dayKey).update(`192.0.2.7\n${UA}`).digest('hex').slice(0, 32);
    expect(hasher()('192.0.2.7', UA, DAY)).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{32}$/);
  });

  it('agree between instances sharing the secret, and differ under another secret', () => {
    expect(hasher()('192.0.2.7', UA, DAY)).toBe(hasher()('192.0.2.7', UA, DAY + 1000));
    const other = createViewerHasher(signingKeysFromSecret('t'.repeat(40)).viewerDay);
    expect(other('192.0.2.7', UA, DAY)).not.toBe(hasher()('192.0.2.7', UA, DAY));
  });

  it('change at midnight UTC, and not within a UTC day', () => {
    const h = hasher();
    const midnight = Date.UTC(2026, 10, 22);
    expect(h('192.0.2.7', UA, midnight - 86_400_000)).toBe(h('192.0.2.7', UA, midnight - 1));
    expect(h('192.0.2.7', UA, midnight)).not.toBe(h('192.0.2.7', UA, midnight - 1));
    // Back to the day before (a clock that moved back): the same hash as then.
    expect(h('192.0.2.7', UA, midnight - 1)).toBe(hasher()('192.0.2.7', UA, midnight - 1));
  });

  it('group IPv6 addresses by /64 and IPv4-mapped addresses as IPv4, and tell user agents apart', () => {
    const h = hasher();
    expect(h('2001:db8:1:2::1', UA, DAY)).toBe(h('2001:db8:1:2:ffff::9', UA, DAY));
    expect(h('2001:db8:1:3::1', UA, DAY)).not.toBe(h('2001:db8:1:2::1', UA, DAY));
    expect(h('::ffff:192.0.2.7', UA, DAY)).toBe(h('192.0.2.7', UA, DAY));
    expect(h('192.0.2.7', 'curl/8', DAY)).not.toBe(h('192.0.2.7', UA, DAY));
    expect(h('192.0.2.7', '', DAY)).not.toBe(h('192.0.2.8', '', DAY));
  });
});

describe('the view counter', () => {
  it('batches renders per drop and version, and keeps a failed batch for the next flush', async () => {
    const written: ViewBatch[] = [];
    let fail = true;
    const counter = createViewCounter({
      addViews: async (batch) => {
        if (fail) throw new Error('database down');
        written.push(batch);
      },
    });
    const clock = { now: () => DAY };
    const renders = { views: counter, viewerOf: createViewerHasher(Buffer.alloc(32, 1)), clock };
    countRender(renders, 'a', 1, '192.0.2.1', UA);
    countRender(renders, 'a', 1, '192.0.2.1', UA);
    counter.record('a', 2, 'x', DAY - 5);
    await expect(counter.flush()).rejects.toThrow('database down');
    counter.record('a', 1, 'y', DAY + 7);
    fail = false;
    await counter.flush();
    await counter.flush();
    expect(written).toHaveLength(1);
    const a = written[0]?.get('a');
    expect(a?.get(1)).toMatchObject({ views: 3, firstAt: DAY, lastAt: DAY + 7 });
    expect(a?.get(1)?.viewers.size).toBe(2);
    expect(a?.get(2)).toMatchObject({ views: 1, firstAt: DAY - 5, lastAt: DAY - 5 });
  });
});
