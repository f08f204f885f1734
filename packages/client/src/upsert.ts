/**
 * The client-side upsert ("lookup, then mutate", docs/api.md sections 1 and 4.3): list the caller's drops with metadata
 * equality filters; exactly one match gets a PUT (new version), none gets a POST tagged with the filter, several
 * is refused. The service does not prevent two writers from both creating, so runs on one machine are serialized
 * with a lock file per (service, filter).
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HtmlDropClient } from './client.js';
import { HtmlDropError } from './errors.js';
import { ensurePrivateDir, userConfigDir } from './token-store.js';
import type { CommentSetting, Drop, Metadata } from './types.js';

export interface UpsertInput {
  /** The metadata filter that identifies the drop; at least one pair. The created drop carries it. */
  readonly match: Metadata;
  readonly html: string;
  /** Required: a drop may be created. On update it replaces the title. */
  readonly title: string;
  readonly description?: string;
  readonly context?: string;
  /** Sets or changes the passcode (after the PUT on update: one more write). */
  readonly passcode?: string;
  /**
   * More tags. On create the drop gets `match` + these. On update they are merged into the drop's existing tags
   * (the keys named here are set, the others kept); without them the tags are left untouched.
   */
  readonly metadata?: Metadata;
  /** Who may comment (on update: one more write, a PATCH after the PUT). */
  readonly comments?: CommentSetting;
  /**
   * Ids of comments the new version addresses: marked resolved in it. Only for an update: when no drop matches,
   * nothing is created and the call fails with `usage` (the ids cannot belong to a drop that does not exist yet).
   */
  readonly resolves?: readonly string[];
}

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

export interface UpsertResult {
  readonly action: 'created' | 'updated';
  readonly drop: Drop;
}

export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  readonly nonce: string;
  readonly created_at: number;
}

/** Canonical, order-independent form of a filter. */
function canonical(match: Metadata): string {
  return JSON.stringify(Object.entries(match).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function lockFileName(server: string, match: Metadata): string {
  const digest = createHash('sha256')
    .update(`${server}\n${canonical(match)}`)
    .digest('hex')
    .slice(0, 32);
  return `upsert-${digest}.lock`;
}

async function defaultLockDir(): Promise<string> {
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

function validateMatch(match: Metadata): void {
  if (Object.keys(match).length === 0) {
    throw new HtmlDropError('usage', 'An upsert needs at least one metadata pair to match (key=value).');
  }
}

/** Lookup, then mutate, under the lock. */
export async function upsertDrop(
  client: HtmlDropClient,
  input: UpsertInput,
  options: LockOptions = {},
): Promise<UpsertResult> {
  validateMatch(input.match);
  const lockDir = options.lockDir ?? (await defaultLockDir());
  if (options.lockDir !== undefined) await ensurePrivateDir(lockDir);
  const file = path.join(lockDir, lockFileName(client.server, input.match));
  const call = options.signal === undefined ? {} : { signal: options.signal };
  return withLockFile(
    file,
    async () => {
      const found = await client.listDrops(
        { metadata: input.match, pageSize: 20, sortBy: 'created_at', sortOrder: 'asc' },
        call,
      );
      const total = found.pagination.total_items;
      if (total > 1) {
        const slugs = found.data.map((d) => d.slug);
        const more = total > slugs.length ? ` (and ${total - slugs.length} more)` : '';
        throw new HtmlDropError(
          'upsert_ambiguous',
          `${total} drops match ${describeMatch(input.match)}: ${slugs.join(', ')}${more}. Refusing to guess; narrow the tags or update one by slug.`,
          { details: { slugs, total } },
        );
      }
      const existing = found.data[0];
      if (existing === undefined && input.resolves !== undefined && input.resolves.length > 0) {
        throw new HtmlDropError(
          'usage',
          `No drop matches ${describeMatch(input.match)}, so there is nothing to resolve ${input.resolves.join(', ')} in; nothing was published.`,
        );
      }
      if (existing === undefined) {
        const drop = await client.createDrop(
          {
            title: input.title,
            html: input.html,
            metadata: { ...input.metadata, ...input.match },
            ...(input.description === undefined ? {} : { description: input.description }),
            ...(input.context === undefined ? {} : { context: input.context }),
            ...(input.passcode === undefined ? {} : { passcode: input.passcode }),
            ...(input.comments === undefined ? {} : { comments: input.comments }),
          },
          call,
        );
        return { action: 'created', drop };
      }
      let drop = await client.updateDrop(
        existing.slug,
        {
          html: input.html,
          title: input.title,
          ...(input.description === undefined ? {} : { description: input.description }),
          ...(input.context === undefined ? {} : { context: input.context }),
          ...(input.metadata === undefined
            ? {}
            : { metadata: { ...existing.metadata, ...input.metadata, ...input.match } }),
          ...(input.resolves === undefined || input.resolves.length === 0 ? {} : { resolves: input.resolves }),
        },
        call,
      );
      if (input.comments !== undefined && input.comments !== drop.comments) {
        drop = await client.patchDrop(existing.slug, { comments: input.comments }, call);
      }
      if (input.passcode !== undefined) drop = await client.setPasscode(existing.slug, input.passcode, call);
      return { action: 'updated', drop };
    },
    options,
  );
}

export function describeMatch(match: Metadata): string {
  return Object.entries(match)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}
