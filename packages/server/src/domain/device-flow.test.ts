import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKyselyStore } from '../storage/kysely-store.js';
import { openSqlite } from '../storage/sqlite.js';
import { ensureAccount } from './accounts.js';
import {
  DEVICE_RETENTION_MS,
  type DeviceFlowDeps,
  decideDeviceFlow,
  lookupUserCode,
  normalizeUserCode,
  pollDeviceFlow,
  startDeviceFlow,
} from './device-flow.js';
import { isWellFormedToken, sha256Hex } from './ids.js';
import type { Store } from './store.js';

let dir: string;
let store: Store;
let now: number;
let deps: DeviceFlowDeps;
let accountId: string;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'htmldrop-device-'));
  store = createKyselyStore(openSqlite(dir));
  await store.migrate();
  now = Date.UTC(2026, 10, 21, 12);
  deps = { store, clock: { now: () => now } };
  accountId = (await ensureAccount({ store, clock: deps.clock }, { provider: 'local', subject: 'ann', login: 'ann' }))
    .id;
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const codeOf = (display: string) => normalizeUserCode(display) ?? '';

describe('device-code state machine', () => {
  it('starts pending with a XXXX-XXXX code, 600 s and a 2 s interval', async () => {
    const flow = await startDeviceFlow(deps, 'laptop');
    expect(flow.code).toMatch(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/);
    expect(flow.expiresIn).toBe(600);
    expect(flow.pollInterval).toBe(2);
    expect(Buffer.from(flow.pollToken, 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(await pollDeviceFlow(deps, flow.pollToken)).toEqual({ status: 'pending' });
  });

  it('goes pending -> verified (token and user_id, once) -> claimed', async () => {
    const flow = await startDeviceFlow(deps, 'laptop');
    expect(await decideDeviceFlow(deps, codeOf(flow.code), { approve: accountId })).toBe(true);
    const first = await pollDeviceFlow(deps, flow.pollToken);
    expect(first).toMatchObject({ status: 'verified', userId: accountId });
    if (first.status !== 'verified') throw new Error('unreachable');
    expect(isWellFormedToken(first.apiToken)).toBe(true);
    const found = await store.findActiveToken(sha256Hex(first.apiToken));
    expect(found?.account.id).toBe(accountId);
    expect(found?.token.label).toBe('laptop');
    expect(await pollDeviceFlow(deps, flow.pollToken)).toEqual({ status: 'claimed' });
    expect(await pollDeviceFlow(deps, flow.pollToken)).toEqual({ status: 'claimed' });
  });

  it('expires a pending request at 600 s, and then refuses approval', async () => {
    const flow = await startDeviceFlow(deps, undefined);
    now += 599_999;
    expect((await pollDeviceFlow(deps, flow.pollToken)).status).toBe('pending');
    now += 1;
    expect((await pollDeviceFlow(deps, flow.pollToken)).status).toBe('expired');
    expect(await decideDeviceFlow(deps, codeOf(flow.code), { approve: accountId })).toBe(false);
    expect((await lookupUserCode(deps, flow.code)).kind).toBe('expired');
  });

  it('moves a denied request to expired', async () => {
    const flow = await startDeviceFlow(deps, undefined);
    expect(await decideDeviceFlow(deps, codeOf(flow.code), 'deny')).toBe(true);
    expect((await pollDeviceFlow(deps, flow.pollToken)).status).toBe('expired');
    expect(await decideDeviceFlow(deps, codeOf(flow.code), { approve: accountId })).toBe(false);
  });

  it('reads not_found for an unknown poll token, and after the purge 24 h past expiry', async () => {
    expect((await pollDeviceFlow(deps, 'no-such-token')).status).toBe('not_found');
    const flow = await startDeviceFlow(deps, undefined);
    now += 600_000 + DEVICE_RETENTION_MS - 1;
    await store.purgeExpired(now, DEVICE_RETENTION_MS);
    expect((await pollDeviceFlow(deps, flow.pollToken)).status).toBe('expired');
    now += 2;
    await store.purgeExpired(now, DEVICE_RETENTION_MS);
    expect((await pollDeviceFlow(deps, flow.pollToken)).status).toBe('not_found');
  });

  it('accepts only the first of two approvals (and of concurrent ones)', async () => {
    const other = (await ensureAccount({ store, clock: deps.clock }, { provider: 'local', subject: 'bo', login: 'bo' }))
      .id;
    const flow = await startDeviceFlow(deps, undefined);
    const results = await Promise.all([
      decideDeviceFlow(deps, codeOf(flow.code), { approve: accountId }),
      decideDeviceFlow(deps, codeOf(flow.code), { approve: other }),
      decideDeviceFlow(deps, codeOf(flow.code), 'deny'),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await decideDeviceFlow(deps, codeOf(flow.code), { approve: other })).toBe(false);
  });

  it('reveals the token to exactly one of 20 concurrent polls', async () => {
    const flow = await startDeviceFlow(deps, undefined);
    await decideDeviceFlow(deps, codeOf(flow.code), { approve: accountId });
    const polls = await Promise.all(Array.from({ length: 20 }, () => pollDeviceFlow(deps, flow.pollToken)));
    expect(polls.filter((p) => p.status === 'verified')).toHaveLength(1);
    expect(polls.filter((p) => p.status === 'claimed')).toHaveLength(19);
    expect(await store.listActiveTokens(accountId)).toHaveLength(1);
  });

  it('normalises typed codes (case, dashes, spaces) and rejects impossible ones', () => {
    expect(normalizeUserCode(' abcd - efgh ')).toBe('ABCDEFGH');
    expect(normalizeUserCode('ABCD-EFG0')).toBeUndefined();
    expect(normalizeUserCode('ABCD-EFG')).toBeUndefined();
  });

  it('stores only a hash of the poll token', async () => {
    const flow = await startDeviceFlow(deps, undefined);
    const request = await store.findDeviceRequestByPollHash(sha256Hex(flow.pollToken));
    expect(request).toBeDefined();
    const raw = fs.readFileSync(path.join(dir, 'htmldrop.sqlite-wal'));
    expect(raw.includes(Buffer.from(flow.pollToken))).toBe(false);
  });
});
