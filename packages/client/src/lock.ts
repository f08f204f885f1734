/**
 * The lock file that serializes upserts of one tag set on one machine (docs/decisions/0018): created with O_EXCL,
 * refreshed by its holder, taken over when its holder died or stopped refreshing it.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HtmlDropError } from './errors.js';
import { ensurePrivateDir, userConfigDir } from './token-store.js';

export interface LockOptions {
  /** Directory of the lock files; default ~/.config/htmldrop/locks (os.tmpdir() when that cannot be created). */
  readonly lockDir?: string;
  /** Give up waiting for another holder after this long (default 60 s): `lock_timeout`. */
  readonly lockTimeoutMs?: number;
  /** A lock whose holder stopped refreshing it this long ago is taken over (default 30 s). */
  readonly staleLockMs?: number;
  readonly signal?: AbortSignal;
  /** Told once when the lock is busy and the call starts waiting. */
  readonly onWait?: (holder: LockHolder | undefined) => void;
}

export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  readonly nonce: string;
  readonly created_at: number;
}

export async function defaultLockDir(): Promise<string> {
  const preferred = path.join(userConfigDir(), 'locks');
  try {
    await ensurePrivateDir(preferred);
    return preferred;
  } catch {
    const fallback = path.join(os.tmpdir(), `htmldrop-locks-${os.userInfo().uid}`);
    await ensurePrivateDir(fallback);
    const stat = await fs.lstat(fallback);
    // A shared temp directory: refuse one that someone else created for us.
    if (!stat.isDirectory() || (process.getuid !== undefined && stat.uid !== process.getuid())) {
      throw new HtmlDropError('usage', `The lock directory ${fallback} is not a private directory of yours.`);
    }
    return fallback;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readHolder(file: string): Promise<{ holder: LockHolder | undefined; mtimeMs: number } | undefined> {
  try {
    const [text, stat] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)]);
    let holder: LockHolder | undefined;
    try {
      const parsed = JSON.parse(text) as Partial<LockHolder>;
      if (typeof parsed.pid === 'number' && typeof parsed.host === 'string' && typeof parsed.nonce === 'string') {
        holder = parsed as LockHolder;
      }
    } catch {
      // Half-written by a holder that is starting: judged by age alone.
    }
    return { holder, mtimeMs: stat.mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * Runs `fn` while holding the lock file `file` (created with O_EXCL). The holder refreshes the file's mtime; a lock
 * whose holder died (same host, pid gone) or stopped refreshing for `staleLockMs` is taken over. The takeover
 * renames the stale file away first and checks it took what it judged stale, so two waiters cannot both take it.
 */
export async function withLockFile<T>(file: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const timeoutMs = options.lockTimeoutMs ?? 60_000;
  const staleMs = options.staleLockMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  const me: LockHolder = {
    pid: process.pid,
    host: os.hostname(),
    nonce: randomBytes(8).toString('hex'),
    created_at: Date.now(),
  };
  let told = false;
  for (let round = 0; ; round++) {
    try {
      const handle = await fs.open(file, 'wx', 0o600);
      try {
        await handle.writeFile(JSON.stringify(me));
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const seen = await readHolder(file);
    if (seen !== undefined) {
      const { holder, mtimeMs } = seen;
      const dead = holder !== undefined && holder.host === me.host && !isAlive(holder.pid);
      if (dead || Date.now() - mtimeMs > staleMs) {
        await takeOverStale(file, holder, mtimeMs);
        continue;
      }
      if (!told) {
        told = true;
        options.onWait?.(holder);
      }
    }
    if (Date.now() > deadline) {
      const who = seen?.holder === undefined ? 'another process' : `process ${seen.holder.pid} on ${seen.holder.host}`;
      throw new HtmlDropError(
        'lock_timeout',
        `Another upsert with the same tags (${who}) held the lock ${file} for more than ${Math.round(timeoutMs / 1000)} s.`,
        { details: { path: file } },
      );
    }
    try {
      // Jittered, growing to 200 ms: two waiters do not retry in lockstep.
      await sleep(
        Math.min(200, 20 + round * 10) + Math.random() * 30,
        undefined,
        options.signal === undefined ? {} : { signal: options.signal },
      );
    } catch {
      throw new HtmlDropError('aborted', 'Waiting for the upsert lock was cancelled.');
    }
  }
  const refresh = setInterval(
    () => {
      const now = new Date();
      fs.utimes(file, now, now).catch(() => undefined);
    },
    Math.max(50, Math.floor(staleMs / 3)),
  );
  refresh.unref();
  try {
    return await fn();
  } finally {
    clearInterval(refresh);
    const current = await readHolder(file);
    if (current?.holder?.nonce === me.nonce) await fs.unlink(file).catch(() => undefined);
  }
}

async function takeOverStale(file: string, judged: LockHolder | undefined, judgedMtime: number): Promise<void> {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await fs.rename(file, aside);
  } catch {
    return; // someone else moved or released it: just try again
  }
  const moved = await readHolder(aside);
  const same =
    moved !== undefined &&
    (judged === undefined
      ? moved.holder === undefined && moved.mtimeMs === judgedMtime
      : moved.holder?.nonce === judged.nonce);
  if (!same) {
    // We moved a fresh lock that replaced the stale one in between: put it back (link fails if a third took it).
    await fs.link(aside, file).catch(() => undefined);
  }
  await fs.unlink(aside).catch(() => undefined);
}
