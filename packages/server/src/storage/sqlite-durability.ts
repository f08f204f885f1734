/**
 * Group commit for SQLite (docs/decisions/0027-compressed-deduplicated-bodies.md, "Flushing"). The connection runs
 * with `synchronous=NORMAL`: a commit writes its WAL frames and returns without flushing them. Before a write is
 * acknowledged, the connection is released and its caller waits for one `fdatasync` of the WAL file that began
 * after the commit, run on the thread pool. Every commit made meanwhile waits for the same flush, so concurrent
 * writers share it and the event loop never blocks on the disk. An acknowledged write is on disk as it was with
 * `synchronous=FULL`; a crash before the flush can only lose writes nobody was told about. Checkpoints keep SQLite's
 * own flushes (the WAL before, the database after), so a frame checkpointed before the flush is safe too.
 */
import { open } from 'node:fs/promises';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  type TransactionSettings,
} from 'kysely';

/** One flush of the WAL at a time; a caller waits for a flush that began after it asked. */
export interface WalFlusher {
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createWalFlusher(walFile: string): WalFlusher {
  let handle: ReturnType<typeof open> | undefined;
  let requested = 0;
  let running: Promise<void> | undefined;
  const waiting: Array<{ upTo: number; resolve: () => void; reject: (error: unknown) => void }> = [];

  function settle(upTo: number, error?: unknown): void {
    for (let i = waiting.length - 1; i >= 0; i--) {
      const waiter = waiting[i];
      if (waiter === undefined || waiter.upTo > upTo) continue;
      waiting.splice(i, 1);
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
  }

  async function loop(): Promise<void> {
    while (waiting.length > 0) {
      // Every request made so far committed before this flush begins, so this flush covers them all.
      const upTo = requested;
      try {
        handle ??= open(walFile, 'r');
        await (await handle).datasync();
        settle(upTo);
      } catch (error) {
        handle = undefined;
        settle(upTo, error);
      }
    }
    running = undefined;
  }

  return {
    flush() {
      const upTo = ++requested;
      const done = new Promise<void>((resolve, reject) => waiting.push({ upTo, resolve, reject }));
      running ??= loop();
      return done;
    },
    async close() {
      await running;
      const closing = handle;
      handle = undefined;
      await (await closing?.catch(() => undefined))?.close();
    },
  };
}

/** Statements that never change the database: no flush is owed for them. */
const READ_ONLY = /^\s*(select|begin|commit|rollback|savepoint|release|pragma\s+synchronous)\b/i;

/**
 * Kysely's SQLite dialect, flushing the WAL before a connection use that wrote anything hands its result back.
 * `lazy` marks the current use (the one connection is exclusive while used) as one whose commit need not wait.
 */
export class GroupCommitSqliteDialect extends SqliteDialect {
  readonly #flusher: WalFlusher;
  readonly #state: { lazy: boolean };

  constructor(config: SqliteDialectConfig, flusher: WalFlusher, state: { lazy: boolean }) {
    super(config);
    this.#flusher = flusher;
    this.#state = state;
  }

  override createDriver(): Driver {
    return groupCommitDriver(super.createDriver(), this.#flusher, this.#state);
  }
}

function groupCommitDriver(inner: Driver, flusher: WalFlusher, state: { lazy: boolean }): Driver {
  let wrote = false;
  let wrapped: DatabaseConnection | undefined;
  const wrap = (connection: DatabaseConnection): DatabaseConnection => ({
    executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      if (!READ_ONLY.test(query.sql)) wrote = true;
      return connection.executeQuery<R>(query);
    },
    streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
  });
  return {
    init: () => inner.init(),
    async acquireConnection() {
      const connection = await inner.acquireConnection();
      wrapped ??= wrap(connection);
      return wrapped;
    },
    beginTransaction: (connection, settings: TransactionSettings) => inner.beginTransaction(connection, settings),
    commitTransaction: (connection) => inner.commitTransaction(connection),
    rollbackTransaction: (connection) => inner.rollbackTransaction(connection),
    async releaseConnection(connection) {
      const flush = wrote && !state.lazy;
      wrote = false;
      state.lazy = false;
      // Released first: the next writer commits while this one waits, and joins the same flush.
      await inner.releaseConnection(connection);
      if (flush) await flusher.flush();
    },
    async destroy() {
      await inner.destroy();
      await flusher.close();
    },
  };
}
