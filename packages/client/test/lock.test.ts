/** The upsert lock file: serializes holders, takes over locks of dead or silent holders, times out on live ones. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockFileName, withLockFile } from '../src/upsert.js';
import { tempDir } from './run.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = tempDir('htmldrop-locks-');
  file = path.join(dir, 'x.lock');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const holder = (pid: number) => JSON.stringify({ pid, host: os.hostname(), nonce: 'abc', created_at: Date.now() });

describe('withLockFile', () => {
  it('runs holders one after the other, and leaves no file behind', async () => {
    const events: string[] = [];
    const task = (name: string) =>
      withLockFile(file, async () => {
        events.push(`${name} in`);
        await sleep(50);
        events.push(`${name} out`);
      });
    await Promise.all([task('a'), task('b'), task('c')]);
    for (let i = 0; i < events.length; i += 2)
      expect(events[i]?.replace(' in', '')).toBe(events[i + 1]?.replace(' out', ''));
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('releases the lock when the work fails', async () => {
    await expect(withLockFile(file, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(fs.existsSync(file)).toBe(false);
  });

  it('takes over a lock whose holder process is gone', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid ?? 0;
    fs.writeFileSync(file, holder(dead));
    expect(await withLockFile(file, async () => 'ran', { lockTimeoutMs: 1000 })).toBe('ran');
  });

  it('takes over a lock that was not refreshed for staleLockMs', async () => {
    fs.writeFileSync(file, holder(process.pid));
    const old = new Date(Date.now() - 10_000);
    fs.utimesSync(file, old, old);
    expect(await withLockFile(file, async () => 'ran', { staleLockMs: 5000, lockTimeoutMs: 1000 })).toBe('ran');
  });

  it('gives up on a live holder after lockTimeoutMs with lock_timeout', async () => {
    fs.writeFileSync(file, holder(process.pid));
    let told = 0;
    await expect(
      withLockFile(file, async () => 'never', { lockTimeoutMs: 300, onWait: () => told++ }),
    ).rejects.toMatchObject({ code: 'lock_timeout' });
    expect(told).toBe(1);
    expect(fs.existsSync(file)).toBe(true);
  });

  it('names one lock per service and tag set, whatever the order of the tags', () => {
    const a = lockFileName('http://x', { a: '1', b: '2' });
    expect(lockFileName('http://x', { b: '2', a: '1' })).toBe(a);
    expect(lockFileName('http://y', { a: '1', b: '2' })).not.toBe(a);
    expect(lockFileName('http://x', { a: '1' })).not.toBe(a);
  });
});
