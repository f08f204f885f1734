/**
 * The client-side upsert ("lookup, then mutate", docs/api.md sections 1 and 4.3): list the caller's drops with metadata
 * equality filters; exactly one match gets a PUT (new version), none gets a POST tagged with the filter, several
 * is refused. Runs on one machine are serialized with a lock file per (service, filter) (lock.ts). Writers on other
 * machines are caught by the service (docs/decisions/0018, "Later: If-Match and idempotent creates"): the PUT carries
 * `If-Match` with the version the lookup saw, so a version published meanwhile is a 412 and the upsert reads again
 * and publishes on top of it, telling the caller; the POST carries an Idempotency-Key derived from the service and
 * the filter, so a second machine's create with another body is refused (422) and becomes an update of the first
 * machine's drop.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { HtmlDropClient } from './client.js';
import { HtmlDropError } from './errors.js';
import { defaultLockDir, type LockOptions, withLockFile } from './lock.js';
import { sameNetwork } from './network.js';
import { newIdempotencyKey } from './request-parts.js';
import { ensurePrivateDir } from './token-store.js';
import type { CallOptions } from './transport.js';
import type { CommentSetting, CreateDropInput, Drop, DropFiles, Metadata, NetworkPolicy, ScanMode } from './types.js';

export { type LockHolder, type LockOptions, withLockFile } from './lock.js';

export interface UpsertInput {
  /** The metadata filter that identifies the drop; at least one pair. The created drop carries it. */
  readonly match: Metadata;
  readonly html: string;
  /** The files beside the HTML (docs/api.md, "Many files in one drop"); the new version has none when omitted. */
  readonly files?: DropFiles;
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
   * When the drop expires (Unix ms; see parseExpires), or null for never. On create, null is the default; on update
   * it is one more write, a PATCH after the PUT (null clears an expiry). Omitted: left as it is.
   */
  readonly expires_at?: number | null;
  /**
   * What the drop may load from the network (see parseNetwork). On create it is in the POST; on update it is one
   * more write, a PATCH after the PUT, when it differs. Omitted: left as it is (`open` for a new drop).
   */
  readonly network?: NetworkPolicy;
  /**
   * Ids of comments the new version addresses: marked resolved in it. Only for an update: when no drop matches,
   * nothing is created and the call fails with `usage` (the ids cannot belong to a drop that does not exist yet).
   */
  readonly resolves?: readonly string[];
  /** `block`: refuse the create or the update if the document looks like it carries secrets or personal data. */
  readonly scan?: ScanMode;
}

/** Something another writer did between this upsert's lookup and its write, which the upsert then built on. */
export interface UpsertConflict {
  /** `version`: another writer published a version meanwhile; `created`: another writer created the drop meanwhile. */
  readonly kind: 'version' | 'created';
  readonly slug: string;
  /** The drop's latest version when the upsert found out. */
  readonly version: number;
  readonly message: string;
}

export interface UpsertOptions extends LockOptions {
  /** Told each time another writer got in between; the upsert then publishes on top of what it wrote. */
  readonly onConflict?: (conflict: UpsertConflict) => void;
  /**
   * Serializes the upserts of one (service, filter) by other means than a lock file: `name` is the lock's name. For
   * a long-running process that makes every upsert itself (the service's remote MCP endpoint).
   */
  readonly serialize?: <T>(name: string, run: () => Promise<T>) => Promise<T>;
}

export interface UpsertResult {
  readonly action: 'created' | 'updated';
  readonly drop: Drop;
  /** What other writers did meanwhile, oldest first; empty when nobody got in between. */
  readonly conflicts: readonly UpsertConflict[];
}

/** How many times a PUT refused with 412 is tried again on the newer version before the upsert gives up. */
export const MAX_CONFLICT_RETRIES = 3;
/** How many times a create whose key is still in use by a running request (409) is tried again. */
const MAX_IN_PROGRESS_ROUNDS = 3;

/** Canonical, order-independent form of a filter. */
function canonical(match: Metadata): string {
  return JSON.stringify(Object.entries(match).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function digest(server: string, match: Metadata): string {
  return createHash('sha256')
    .update(`${server}\n${canonical(match)}`)
    .digest('hex');
}

export function lockFileName(server: string, match: Metadata): string {
  return `upsert-${digest(server, match).slice(0, 32)}.lock`;
}

/** The Idempotency-Key of an upsert's create: the same on every machine for one service and tag set. */
export function upsertCreateKey(server: string, match: Metadata): string {
  return `upsert-${digest(server, match)}`;
}

function validateMatch(match: Metadata): void {
  if (Object.keys(match).length === 0) {
    throw new HtmlDropError('usage', 'An upsert needs at least one metadata pair to match (key=value).');
  }
}

/** Lookup, then mutate, under the lock; other machines' writes in between are detected and built on. */
export async function upsertDrop(
  client: HtmlDropClient,
  input: UpsertInput,
  options: UpsertOptions = {},
): Promise<UpsertResult> {
  validateMatch(input.match);
  const run = () => new Upsert(client, input, options).run();
  if (options.serialize !== undefined) return options.serialize(lockFileName(client.server, input.match), run);
  const lockDir = options.lockDir ?? (await defaultLockDir());
  if (options.lockDir !== undefined) await ensurePrivateDir(lockDir);
  const file = path.join(lockDir, lockFileName(client.server, input.match));
  return withLockFile(file, run, options);
}

/** One upsert's rounds: lookup, then create or update; a round that loses a race to another writer starts over. */
class Upsert {
  readonly #call: CallOptions;
  readonly #conflicts: UpsertConflict[] = [];
  /** The create's key: derived from the filter, until a refused create proves it stale. */
  #createKey: string;
  /** Set once a create was refused because another request used the key: the next lookup should find its drop. */
  #raced = false;

  constructor(
    private readonly client: HtmlDropClient,
    private readonly input: UpsertInput,
    private readonly options: UpsertOptions,
  ) {
    this.#call = options.signal === undefined ? {} : { signal: options.signal };
    this.#createKey = upsertCreateKey(client.server, input.match);
  }

  async run(): Promise<UpsertResult> {
    let conflictsLeft = MAX_CONFLICT_RETRIES;
    let inProgressLeft = MAX_IN_PROGRESS_ROUNDS;
    for (;;) {
      const existing = await this.#lookup();
      if (existing === undefined) {
        const created = await this.#create();
        if (typeof created !== 'string') return this.#result('created', created);
        if (created === 'in_progress' && inProgressLeft-- === 0) {
          throw new HtmlDropError(
            'request_in_progress',
            `Another create of the drop tagged ${describeMatch(this.input.match)} is still running; try again shortly.`,
            { status: 409 },
          );
        }
        continue;
      }
      if (this.#raced) {
        this.#raced = false;
        this.#note('created', existing, `another writer created ${existing.slug} meanwhile`);
      }
      try {
        return this.#result('updated', await this.#update(existing));
      } catch (error) {
        if (!(error instanceof HtmlDropError) || error.code !== 'version_conflict') throw error;
        const latest = error.latestVersion ?? existing.latest_version + 1;
        if (conflictsLeft-- === 0) throw this.#gaveUp(existing.slug, latest);
        this.#note('version', { slug: existing.slug, latest_version: latest }, 'another writer published');
      }
    }
  }

  #result(action: UpsertResult['action'], drop: Drop): UpsertResult {
    return { action, drop, conflicts: this.#conflicts };
  }

  #note(kind: UpsertConflict['kind'], drop: Pick<Drop, 'slug' | 'latest_version'>, what: string): void {
    const message =
      kind === 'created'
        ? `${what} (version ${drop.latest_version}); publishing this document as a new version of it.`
        : `${what} version ${drop.latest_version} of ${drop.slug} meanwhile; publishing this document on top of it.`;
    const conflict: UpsertConflict = { kind, slug: drop.slug, version: drop.latest_version, message };
    this.#conflicts.push(conflict);
    this.options.onConflict?.(conflict);
  }

  #gaveUp(slug: string, latest: number): HtmlDropError {
    return new HtmlDropError(
      'version_conflict',
      `Other writers kept publishing new versions of ${slug} (now version ${latest}) while this upsert tried ${MAX_CONFLICT_RETRIES + 1} times; nothing was published. Try again.`,
      { status: 412, details: { slug, latest_version: latest } },
    );
  }

  /** The one drop carrying the tags, or undefined; several is `upsert_ambiguous`. */
  async #lookup(): Promise<Drop | undefined> {
    const { match } = this.input;
    const query = { metadata: match, pageSize: 20, sortBy: 'created_at', sortOrder: 'asc' } as const;
    const found = await this.client.listDrops(query, this.#call);
    const total = found.pagination.total_items;
    if (total > 1) {
      const slugs = found.data.map((d) => d.slug);
      const more = total > slugs.length ? ` (and ${total - slugs.length} more)` : '';
      throw new HtmlDropError(
        'upsert_ambiguous',
        `${total} drops match ${describeMatch(match)}: ${slugs.join(', ')}${more}. Refusing to guess; narrow the tags or update one by slug.`,
        { details: { slugs, total } },
      );
    }
    const existing = found.data[0];
    const resolves = this.input.resolves ?? [];
    if (existing === undefined && resolves.length > 0) {
      throw new HtmlDropError(
        'usage',
        `No drop matches ${describeMatch(match)}, so there is nothing to resolve ${resolves.join(', ')} in; nothing was published.`,
      );
    }
    return existing;
  }

  /**
   * POST with the filter's key. The drop, or `reused` (another request used the key with another body: the next
   * lookup finds its drop, or, if it finds none, the key is stale and replaced), or `in_progress` (still running).
   */
  async #create(): Promise<Drop | 'reused' | 'in_progress'> {
    if (this.#raced) this.#createKey = newIdempotencyKey(); // refused, yet no drop carries the tags: a stale key
    const body = this.#createBody();
    let replayed = false;
    const onResponse = (info: { replayed: boolean }) => {
      replayed = info.replayed;
    };
    try {
      const drop = await this.client.createDrop(body, { ...this.#call, idempotencyKey: this.#createKey, onResponse });
      if (!replayed) return drop;
      // An earlier identical create answered again: its drop may have been deleted or retagged since.
      const current = await this.client.getDrop(drop.slug, this.#call).catch((error: unknown) => {
        if (error instanceof HtmlDropError && error.code === 'not_found') return undefined;
        throw error;
      });
      if (current !== undefined && carries(current.metadata, this.input.match)) return current;
      return await this.client.createDrop(body, { ...this.#call, idempotencyKey: newIdempotencyKey() });
    } catch (error) {
      if (!(error instanceof HtmlDropError)) throw error;
      if (error.code === 'idempotency_key_reused') {
        this.#raced = true;
        return 'reused';
      }
      if (error.code === 'request_in_progress') return 'in_progress';
      throw error;
    }
  }

  #createBody(): CreateDropInput {
    const { input } = this;
    return {
      title: input.title,
      html: input.html,
      ...(input.files === undefined ? {} : { files: input.files }),
      metadata: { ...input.metadata, ...input.match },
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(input.context === undefined ? {} : { context: input.context }),
      ...(input.passcode === undefined ? {} : { passcode: input.passcode }),
      ...(input.comments === undefined ? {} : { comments: input.comments }),
      ...(input.expires_at === undefined || input.expires_at === null ? {} : { expires_at: input.expires_at }),
      ...(input.network === undefined ? {} : { network: input.network }),
      ...(input.scan === undefined ? {} : { scan: input.scan }),
    };
  }

  /**
   * PUT If-Match the version the lookup saw, then the comment setting, expiry and network policy (one PATCH) and the
   * passcode.
   */
  async #update(existing: Drop): Promise<Drop> {
    const { input } = this;
    const slug = existing.slug;
    const resolves = input.resolves ?? [];
    const put = await this.client.updateDrop(
      slug,
      {
        html: input.html,
        ...(input.files === undefined ? {} : { files: input.files }),
        title: input.title,
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.context === undefined ? {} : { context: input.context }),
        ...(input.metadata === undefined
          ? {}
          : { metadata: { ...existing.metadata, ...input.metadata, ...input.match } }),
        ...(resolves.length === 0 ? {} : { resolves }),
        ...(input.scan === undefined ? {} : { scan: input.scan }),
      },
      { ...this.#call, ifMatch: existing.latest_version },
    );
    let drop = put;
    const comments = input.comments !== undefined && input.comments !== drop.comments ? input.comments : undefined;
    const expires =
      input.expires_at !== undefined && input.expires_at !== drop.expires_at ? input.expires_at : undefined;
    // `?? 'open'`: a service from before network policies sends no `network`.
    const network =
      input.network !== undefined && !sameNetwork(input.network, drop.network ?? 'open') ? input.network : undefined;
    if (comments !== undefined || expires !== undefined || network !== undefined) {
      const patch = {
        ...(comments === undefined ? {} : { comments }),
        ...(expires === undefined ? {} : { expires_at: expires }),
        ...(network === undefined ? {} : { network }),
      };
      drop = await this.client.patchDrop(slug, patch, this.#call);
    }
    if (input.passcode !== undefined) drop = await this.client.setPasscode(slug, input.passcode, this.#call);
    return withWarningsOf(put, drop);
  }
}

/** `drop` as later writes left it, with the warnings the version's PUT answered (the later answers carry none). */
export function withWarningsOf(put: Drop, drop: Drop): Drop {
  return put.warnings === undefined || drop === put ? drop : { ...drop, warnings: put.warnings };
}

/** Whether `metadata` has every pair of `match`. */
function carries(metadata: Metadata, match: Metadata): boolean {
  return Object.entries(match).every(([key, value]) => metadata[key] === value);
}

export function describeMatch(match: Metadata): string {
  return Object.entries(match)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}
