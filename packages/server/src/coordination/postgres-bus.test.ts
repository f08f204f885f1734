/**
 * The PostgreSQL bus's channel is its schema's (postgres-bus.ts): two deployments in two schemas of one database do
 * not hear each other, two instances of one deployment do, and the `public` schema keeps the channel name of earlier
 * releases. Real PostgreSQL, each test database its own schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/databases.js';
import type { BusReceiver, InvalidationBus } from './bus.js';
import { channelFor, createPostgresBus } from './postgres-bus.js';

/** A receiver that records what it hears and wakes whoever waits for a slug. */
function recorder() {
  const heard: string[] = [];
  const waiters = new Map<string, () => void>();
  const receiver: BusReceiver = {
    onChange(slug) {
      heard.push(slug);
      waiters.get(slug)?.();
    },
    reset: () => undefined,
  };
  const hears = (slug: string) =>
    new Promise<void>((resolve) => {
      if (heard.includes(slug)) resolve();
      else waiters.set(slug, resolve);
    });
  return { heard, receiver, hears };
}

describe('the PostgreSQL bus', () => {
  let first: TestDatabase;
  let second: TestDatabase;
  const buses: InvalidationBus[] = [];
  const bus = (database: TestDatabase) => {
    const made = createPostgresBus(database.databaseUrl ?? '');
    buses.push(made);
    return made;
  };

  beforeAll(async () => {
    first = await createTestDatabase('postgres');
    second = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await Promise.all([first.drop(), second.drop()]);
  });

  it('names the public schema’s channel as before, and any other schema’s by a hash of its name', () => {
    expect(channelFor('public')).toBe('htmldrop_invalidate');
    expect(channelFor(null)).toBe('htmldrop_invalidate');
    expect(channelFor('team a; drop table x')).toMatch(/^htmldrop_invalidate_[0-9a-f]{16}$/);
    expect(channelFor('a')).not.toBe(channelFor('b'));
  });

  it('carries a change to every instance of its schema and to none of another schema', async () => {
    const [a1, a2, b1] = [recorder(), recorder(), recorder()];
    const [busA1, busA2, busB1] = [bus(first), bus(first), bus(second)];
    await busA1.subscribe(a1.receiver);
    await busA2.subscribe(a2.receiver);
    await busB1.subscribe(b1.receiver);
    await busA1.publish('from-a');
    await busB1.publish('from-b');
    await Promise.all([a1.hears('from-a'), a2.hears('from-a'), b1.hears('from-b')]);
    // Notifications of one connection arrive in order: once A's second instance heard a later one, it would have
    // heard B's, sent before it, had it been on its channel.
    await busA1.publish('later');
    await a2.hears('later');
    expect(a2.heard).toEqual(['from-a', 'later']);
    expect(b1.heard).toEqual(['from-b']);
  });
});
