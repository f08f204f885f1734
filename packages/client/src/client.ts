/**
 * The typed SDK: one method per endpoint of docs/api.md section 4. Zero runtime dependencies: Node's global fetch.
 * Every failure is an HtmlDropError whose `code` is the service's `error.code`, or a client code (`network_error`,
 * `bad_response`, `timeout`, `aborted`, `no_token`) when the service did not answer with an error body. The requests
 * themselves (token, timeout, 429 and idempotent-write retries, error bodies) are in transport.ts; If-Match and
 * Idempotency-Key headers come from the call's options (request-parts.ts).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type DeviceLoginOptions, type DeviceLoginResult, deviceLogin } from './device-flow.js';
import { HtmlDropError } from './errors.js';
import {
  type CollectOptions,
  type ConditionalOptions,
  callParts,
  commentPath,
  type IdempotentOptions,
  MAX_COMMENT_WAIT_SECONDS,
  pause,
  slugPath,
  type UpdateOptions,
  versionNumber,
  webhookPath,
  wholeNumber,
} from './request-parts.js';
import {
  type CallOptions,
  type ClientOptions,
  DEFAULT_SERVER,
  normalizeServer,
  type RequestSpec,
  Transport,
} from './transport.js';
import type {
  AccessEntry,
  Comment,
  CommentInput,
  CommentList,
  CommentQuery,
  CommentScope,
  CreateDropInput,
  CreatedWebhook,
  DeviceFlowPoll,
  DeviceFlowStart,
  DiffQuery,
  Drop,
  DropDiff,
  DropList,
  DropStats,
  ImportResult,
  ListDropsQuery,
  Me,
  Onboarding,
  PatchDropInput,
  RecipientLink,
  TokenListItem,
  UpdateDropInput,
  Version,
  VersionListItem,
  WebhookDelivery,
  WebhookInfo,
  WebhookInput,
} from './types.js';

/** Options of an export: which drops (all when absent) and the bytes received so far. */
export interface ExportOptions extends CallOptions {
  /** Only these drops (each yours). */
  readonly slugs?: readonly string[];
  /** Told the bytes written so far, as the archive arrives. */
  readonly onProgress?: (bytes: number) => void;
}

/** Options of an import: the bytes sent so far of the archive's total. */
export interface ImportOptions extends CallOptions {
  readonly onProgress?: (sent: number, total: number) => void;
}

export {
  type CollectOptions,
  type ConditionalOptions,
  type IdempotentOptions,
  MAX_COMMENT_WAIT_SECONDS,
  newIdempotencyKey,
  type UpdateOptions,
} from './request-parts.js';
export {
  type CallOptions,
  CLIENT_VERSION,
  type ClientOptions,
  DEFAULT_SERVER,
  normalizeServer,
  type ResponseInfo,
  type RetryNotice,
} from './transport.js';

function dropPath(slug: string): string {
  return `/api/drops/${slugPath(slug)}`;
}

/** The htmldrop service's API, one method per endpoint (docs/api.md section 4); requests go through a Transport. */
export class HtmlDropClient {
  /** Base URL without trailing slash. */
  readonly server: string;
  readonly #options: ClientOptions;
  readonly #transport: Transport;

  constructor(options: ClientOptions = {}) {
    this.server = normalizeServer(options.server ?? DEFAULT_SERVER);
    this.#options = options;
    this.#transport = new Transport(this.server, options);
  }

  /** Whether a token was given. */
  get hasToken(): boolean {
    return this.#transport.hasToken;
  }

  /** The same client with another token (e.g. the one a device flow just returned). */
  withToken(token: string): HtmlDropClient {
    return new HtmlDropClient({ ...this.#options, server: this.server, token });
  }

  /** An authenticated request whose answer is JSON. */
  #json<T>(method: RequestSpec['method'], path: string, rest: Partial<RequestSpec> = {}): Promise<T> {
    return this.#transport.request({ method, path, expect: 'json', ...rest });
  }

  // ---- onboarding and device flow (docs/api.md 4.2) ----

  /** GET /api/onboard: the agent protocol as Markdown. */
  onboard(options: CallOptions = {}): Promise<string> {
    return this.#transport.request({ method: 'GET', path: '/api/onboard', auth: false, expect: 'text', ...options });
  }

  /** GET /api/onboard with Accept: application/json. */
  onboardJson(options: CallOptions = {}): Promise<Onboarding> {
    return this.#transport.request({
      method: 'GET',
      path: '/api/onboard',
      auth: false,
      expect: 'json',
      accept: 'application/json',
      ...options,
    });
  }

  /** POST /api/auth/start. See deviceLogin() for the whole flow in one call. */
  startDeviceFlow(label?: string, options: CallOptions = {}): Promise<DeviceFlowStart> {
    return this.#transport.request({
      method: 'POST',
      path: '/api/auth/start',
      auth: false,
      body: label === undefined ? {} : { label },
      expect: 'json',
      ...options,
    });
  }

  /**
   * The whole device-code flow in one call: `onCode` shows the URL and code to the human; resolves with the token
   * (revealed once: store it) or rejects (denied, expired, aborted through `signal`).
   */
  deviceLogin(options: DeviceLoginOptions): Promise<DeviceLoginResult> {
    return deviceLogin(this, options);
  }

  /** GET /api/auth/poll. */
  pollDeviceFlow(pollToken: string, options: CallOptions = {}): Promise<DeviceFlowPoll> {
    return this.#transport.request({
      method: 'GET',
      path: '/api/auth/poll',
      query: new URLSearchParams({ token: pollToken }),
      auth: false,
      expect: 'json',
      ...options,
    });
  }

  // ---- drops (docs/api.md 4.3) ----

  /**
   * POST /api/drops: a new drop at version 1. Sent with an Idempotency-Key (a new random one unless
   * `idempotencyKey` is given) and retried with it when the answer is lost: a retry never creates a second drop.
   */
  async createDrop(input: CreateDropInput, options: IdempotentOptions = {}): Promise<Drop> {
    return this.#json('POST', '/api/drops', { body: input, ...callParts(options, true) });
  }

  /** GET /api/drops: one page of the caller's drops. */
  listDrops(query: ListDropsQuery = {}, options: CallOptions = {}): Promise<DropList> {
    const params = new URLSearchParams();
    if (query.page !== undefined) params.set('page', String(query.page));
    if (query.pageSize !== undefined) params.set('pageSize', String(query.pageSize));
    if (query.sortBy !== undefined) params.set('sortBy', query.sortBy);
    if (query.sortOrder !== undefined) params.set('sortOrder', query.sortOrder);
    for (const [key, value] of Object.entries(query.metadata ?? {})) params.set(`metadata.${key}`, value);
    if (query.q !== undefined) params.set('q', query.q);
    return this.#json('GET', '/api/drops', { query: params, ...callParts(options, false) });
  }

  /**
   * GET /api/drops?q=: one page of the caller's drops that hold every word of `words` (docs/api.md, "Search"), best
   * match first unless `query.sortBy` is given, each with its `match` (snippet and fields).
   */
  searchDrops(words: string, query: Omit<ListDropsQuery, 'q'> = {}, options: CallOptions = {}): Promise<DropList> {
    return this.listDrops({ ...query, q: words }, options);
  }

  /** Every drop matching the query, page after page (at most `limit`, default all). */
  async listAllDrops(query: ListDropsQuery = {}, limit = Number.POSITIVE_INFINITY, options: CallOptions = {}) {
    const drops: Drop[] = [];
    const pageSize = Math.min(200, query.pageSize ?? 200, Math.max(1, limit));
    for (let page = query.page ?? 1; drops.length < limit; page++) {
      const result = await this.listDrops({ ...query, page, pageSize }, options);
      drops.push(...result.data.slice(0, limit - drops.length));
      if (page >= result.pagination.total_pages || result.data.length === 0) break;
    }
    return drops;
  }

  /** GET /api/drops/<slug> (its ETag, the latest version, reaches `onResponse`). */
  getDrop(slug: string, options: CallOptions = {}): Promise<Drop> {
    return this.#json('GET', dropPath(slug), callParts(options, false));
  }

  /**
   * PUT /api/drops/<slug>: always creates a new version. With `ifMatch`, only while the latest version is that one
   * (else `version_conflict`). Idempotent like createDrop: a retried PUT never makes two versions.
   */
  async updateDrop(slug: string, input: UpdateDropInput, options: UpdateOptions = {}): Promise<Drop> {
    return this.#json('PUT', dropPath(slug), { body: input, ...callParts(options, true) });
  }

  /** PATCH /api/drops/<slug>: title, description, metadata, comments, expires_at, network; no new version. */
  async patchDrop(slug: string, input: PatchDropInput, options: ConditionalOptions = {}): Promise<Drop> {
    return this.#json('PATCH', dropPath(slug), { body: input, ...callParts(options, false) });
  }

  /** DELETE /api/drops/<slug>: the drop and all its versions (with `ifMatch`: only while that is the latest). */
  async deleteDrop(slug: string, options: ConditionalOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'DELETE',
      path: dropPath(slug),
      expect: 'empty',
      ...callParts(options, false),
    });
  }

  /** GET /api/drops/<slug>/versions: newest first. */
  listVersions(slug: string, options: CallOptions = {}): Promise<VersionListItem[]> {
    return this.#json('GET', `${dropPath(slug)}/versions`, callParts(options, false));
  }

  /** GET /api/drops/<slug>/v/<n>. */
  async getVersion(slug: string, version: number, options: CallOptions = {}): Promise<Version> {
    return this.#json('GET', `${dropPath(slug)}/v/${versionNumber(version)}`, callParts(options, false));
  }

  /** DELETE /api/drops/<slug>/v/<n>: the updated drop; 409 last_version_cannot_be_deleted for the only one. */
  async deleteVersion(slug: string, version: number, options: CallOptions = {}): Promise<Drop> {
    return this.#json('DELETE', `${dropPath(slug)}/v/${versionNumber(version)}`, callParts(options, false));
  }

  /**
   * POST /api/drops/<slug>/v/<n>/restore: a new version with version n's HTML and context (a write: limits and the
   * version cap apply; `version_not_found` for an unknown n). With `ifMatch`, only while the latest is that one.
   */
  async restore(slug: string, version: number, options: ConditionalOptions = {}): Promise<Drop> {
    const path = `${dropPath(slug)}/v/${versionNumber(version)}/restore`;
    return this.#json('POST', path, callParts(options, false));
  }

  /**
   * GET /api/drops/<slug>/diff: a unified diff of two versions' HTML, with the lines added and removed. `to` defaults
   * to the latest, `from` to the version before `to`; an unknown version is `version_not_found`.
   */
  async diff(slug: string, query: DiffQuery = {}, options: CallOptions = {}): Promise<DropDiff> {
    const params = new URLSearchParams();
    if (query.from !== undefined) params.set('from', versionNumber(query.from));
    if (query.to !== undefined) params.set('to', versionNumber(query.to));
    return this.#json('GET', `${dropPath(slug)}/diff`, { query: params, ...callParts(options, false) });
  }

  /** POST /api/drops/<slug>/passcode: sets or changes it (at least 4 characters); "" removes it. */
  setPasscode(slug: string, passcode: string, options: CallOptions = {}): Promise<Drop> {
    return this.#json('POST', `${dropPath(slug)}/passcode`, { body: { passcode }, ...callParts(options, false) });
  }

  /** Removes the passcode (POST passcode ""). */
  removePasscode(slug: string, options: CallOptions = {}): Promise<Drop> {
    return this.setPasscode(slug, '', options);
  }

  /** GET /api/drops/<slug>/stats: read receipts (views, distinct viewers, times), for the drop and each version. */
  stats(slug: string, options: CallOptions = {}): Promise<DropStats> {
    return this.#json('GET', `${dropPath(slug)}/stats`, callParts(options, false));
  }

  // ---- export and import (docs/api.md, "Export and import") ----

  /**
   * GET /api/export: the zip of your drops (or of `slugs`), as the answer's stream: read it to the end or cancel it.
   * No timeout: a large account takes as long as it takes.
   */
  async exportArchive(options: ExportOptions = {}): Promise<{ body: ReadableStream<Uint8Array>; fileName?: string }> {
    const query = new URLSearchParams();
    for (const slug of options.slugs ?? []) query.append('slug', slug);
    const response: Response = await this.#transport.request({
      method: 'GET',
      path: '/api/export',
      query,
      expect: 'response',
      accept: 'application/zip',
      timeoutMs: 0,
      ...callParts(options, false),
    });
    if (response.body === null) throw new HtmlDropError('bad_response', 'GET /api/export answered no body.');
    const named = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1];
    return { body: response.body as ReadableStream<Uint8Array>, ...(named === undefined ? {} : { fileName: named }) };
  }

  /**
   * GET /api/export written to `file`: to `<file>.part` first, renamed once complete, so a broken download never
   * leaves a file that looks whole.
   */
  async exportToFile(file: string, options: ExportOptions = {}): Promise<{ file: string; bytes: number }> {
    const { body } = await this.exportArchive(options);
    let bytes = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        options.onProgress?.(bytes);
        done(null, chunk);
      },
    });
    const part = `${file}.part`;
    try {
      await pipeline(
        Readable.fromWeb(body as import('node:stream/web').ReadableStream),
        count,
        createWriteStream(part),
      );
      await rename(part, file);
    } catch (error) {
      await rm(part, { force: true });
      if (error instanceof HtmlDropError) throw error;
      throw new HtmlDropError(
        'network_error',
        `The export broke off after ${bytes} bytes: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    return { file, bytes };
  }

  /**
   * POST /api/import of the zip at `file` (an export of this or another instance), streamed from the disk. Drops get
   * new slugs; the same archive imported again creates nothing. No timeout: the service checks the whole archive
   * before it answers.
   */
  async importArchive(file: string, options: ImportOptions = {}): Promise<ImportResult> {
    const total = (await stat(file)).size;
    return this.#transport.request({
      method: 'POST',
      path: '/api/import',
      expect: 'json',
      timeoutMs: 0,
      upload: {
        contentType: 'application/zip',
        length: total,
        body: () => {
          let sent = 0;
          const progress = new Transform({
            transform(chunk: Buffer, _encoding, done) {
              sent += chunk.length;
              options.onProgress?.(sent, total);
              done(null, chunk);
            },
          });
          return Readable.toWeb(createReadStream(file).pipe(progress)) as unknown as ReadableStream<Uint8Array>;
        },
      },
      ...callParts(options, false),
    });
  }

  // ---- who can see a drop (docs/api.md, "Who can see a drop") ----

  /**
   * POST /api/drops/<slug>/links: a recipient link for one person (`label`, 1-100 characters), opening the drop
   * whatever its visibility and passcode until `expires_at` (Unix ms, at least now + 60 s) or revokeLink(). The
   * answer's `url` is shown this once.
   */
  createLink(
    slug: string,
    input: { readonly label: string; readonly expires_at?: number },
    options: CallOptions = {},
  ): Promise<RecipientLink & { readonly url: string }> {
    return this.#json('POST', `${dropPath(slug)}/links`, { body: input, ...callParts(options, false) });
  }

  /** GET /api/drops/<slug>/links: the drop's links, newest first, with their views (never their secrets). */
  async listLinks(slug: string, options: CallOptions = {}): Promise<RecipientLink[]> {
    const answer = await this.#json<{ data: RecipientLink[] }>(
      'GET',
      `${dropPath(slug)}/links`,
      callParts(options, false),
    );
    return answer.data;
  }

  /** DELETE /api/drops/<slug>/links/<id>: the link stops opening the drop at once. */
  async revokeLink(slug: string, id: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'DELETE',
      path: `${dropPath(slug)}/links/${encodeURIComponent(id)}`,
      expect: 'empty',
      ...callParts(options, false),
    });
  }

  /** GET /api/drops/<slug>/access: views and refusals, with the reason and who, newest first (kept 90 days). */
  async access(
    slug: string,
    query: { readonly since?: number } = {},
    options: CallOptions = {},
  ): Promise<AccessEntry[]> {
    const params = new URLSearchParams();
    if (query.since !== undefined) params.set('since', wholeNumber(query.since, 'since'));
    const answer = await this.#json<{ data: AccessEntry[] }>('GET', `${dropPath(slug)}/access`, {
      query: params,
      ...callParts(options, false),
    });
    return answer.data;
  }

  // ---- comments (docs/api.md, "Comments") ----

  /** POST /api/drops/<slug>/comments: the owner's comment on a version (the latest unless `version` is given). */
  comment(slug: string, input: CommentInput, options: CallOptions = {}): Promise<Comment> {
    return this.#json('POST', `${dropPath(slug)}/comments`, { body: input, ...callParts(options, false) });
  }

  /**
   * GET /api/drops/<slug>/comments, or GET /api/comments for `{ all: true }` (each comment then carries its `slug`):
   * comments created after `since`, oldest first. With `wait` (seconds, at most 60) and nothing new, the service holds
   * the request until a comment arrives or the wait ends (`{"data":[]}`); the request's timeout is raised to cover
   * it. One listing holds at most the service's page (500): page on with `since` = the last `created_at`, or use
   * collectComments().
   */
  listComments(scope: CommentScope, query: CommentQuery = {}, options: CallOptions = {}): Promise<CommentList> {
    const since = wholeNumber(query.since ?? 0, 'since');
    const wait = wholeNumber(query.wait ?? 0, 'wait', MAX_COMMENT_WAIT_SECONDS);
    const path = typeof scope === 'string' ? `/api/drops/${slugPath(scope)}/comments` : '/api/comments';
    return this.#transport.request({
      method: 'GET',
      path,
      query: new URLSearchParams({ since, wait }),
      expect: 'json',
      holdSeconds: Number(wait),
      ...options,
    });
  }

  /**
   * Every comment created after `since`, oldest first, listing page after page. With `waitSeconds` and nothing new
   * yet, waits up to that long in all for the first one (listings of at most 60 s each); [] when none came.
   */
  async collectComments(scope: CommentScope, options: CollectOptions = {}): Promise<Comment[]> {
    const { since = 0, waitSeconds = 0, ...call } = options;
    wholeNumber(since, 'since');
    wholeNumber(waitSeconds, 'waitSeconds');
    const deadline = Date.now() + waitSeconds * 1000;
    const found: Comment[] = [];
    let after = since;
    for (;;) {
      const left = found.length > 0 ? 0 : Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      const wait = Math.min(left, MAX_COMMENT_WAIT_SECONDS);
      const asked = Date.now();
      const page = await this.listComments(scope, { since: after, wait }, call);
      found.push(...page.data);
      const last = page.data.at(-1);
      if (last !== undefined) after = last.created_at;
      // Nothing more: a page came back empty, after comments (all read) or once the wait is spent.
      else if (found.length > 0 || left <= wait) return found;
      // An instance that stops waiting early (it is shutting down) is not asked again at once.
      else if (Date.now() - asked < wait * 1000 - 1000) await pause(1000, call.signal);
    }
  }

  /** POST /api/drops/<slug>/comments/<id>/resolve: marks it resolved in the drop's latest version. */
  resolveComment(slug: string, id: string, options: CallOptions = {}): Promise<Comment> {
    return this.#json('POST', `${commentPath(slug, id)}/resolve`, callParts(options, false));
  }

  /** DELETE /api/drops/<slug>/comments/<id>. */
  async deleteComment(slug: string, id: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({ method: 'DELETE', path: commentPath(slug, id), expect: 'empty', ...options });
  }

  // ---- account and tokens (docs/api.md 4.4) ----

  /** GET /api/me. */
  me(options: CallOptions = {}): Promise<Me> {
    return this.#json('GET', '/api/me', callParts(options, false));
  }

  /** GET /api/tokens: the caller's active tokens. */
  listTokens(options: CallOptions = {}): Promise<TokenListItem[]> {
    return this.#json('GET', '/api/tokens', callParts(options, false));
  }

  /** DELETE /api/tokens/<id>: the token stops working at once. */
  async revokeToken(id: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'DELETE',
      path: `/api/tokens/${encodeURIComponent(id)}`,
      expect: 'empty',
      ...options,
    });
  }

  // ---- webhooks (docs/api.md, "Webhooks") ----

  /** POST /api/webhooks: a new endpoint; its `secret` is in this answer only. */
  createWebhook(input: WebhookInput, options: CallOptions = {}): Promise<CreatedWebhook> {
    return this.#json('POST', '/api/webhooks', { body: input, ...callParts(options, false) });
  }

  /** GET /api/webhooks: your endpoints, oldest first, each with its last delivery attempt. */
  async listWebhooks(options: CallOptions = {}): Promise<WebhookInfo[]> {
    return (await this.#json<{ data: WebhookInfo[] }>('GET', '/api/webhooks', callParts(options, false))).data;
  }

  /** DELETE /api/webhooks/<id>: the endpoint, its pending deliveries and its log go. */
  async deleteWebhook(id: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({ method: 'DELETE', path: webhookPath(id), expect: 'empty', ...options });
  }

  /** GET /api/webhooks/<id>/deliveries: the endpoint's last 100 attempts, newest first. */
  async listWebhookDeliveries(id: string, options: CallOptions = {}): Promise<WebhookDelivery[]> {
    const path = `${webhookPath(id)}/deliveries`;
    return (await this.#json<{ data: WebhookDelivery[] }>('GET', path, callParts(options, false))).data;
  }

  // ---- public serving (docs/api.md 4.6) ----

  /**
   * GET /p/<slug>/raw[?v=<n>]: the served document (with the service's additions, docs/api.md 4.6). These public paths
   * answer HTML pages, not error bodies: 404 becomes `not_found`, the passcode gate (401) `unauthorized`.
   */
  async getRawHtml(slug: string, version?: number, options: CallOptions = {}): Promise<string> {
    const query = version === undefined ? undefined : new URLSearchParams({ v: versionNumber(version) });
    try {
      return await this.#transport.request({
        method: 'GET',
        path: `/p/${slugPath(slug)}/raw`,
        ...(query === undefined ? {} : { query }),
        auth: false,
        expect: 'text',
        accept: 'text/html',
        ...options,
      });
    } catch (error) {
      if (error instanceof HtmlDropError && error.code === 'bad_response') {
        if (error.status === 404)
          throw new HtmlDropError(
            'not_found',
            `No drop ${slug}${version === undefined ? '' : ` version ${version}`}.`,
            { status: 404 },
          );
        if (error.status === 401)
          throw new HtmlDropError('unauthorized', `The drop ${slug} is locked by a passcode.`, { status: 401 });
      }
      throw error;
    }
  }
}

/** Factory form of `new HtmlDropClient(options)`. */
export function createClient(options: ClientOptions = {}): HtmlDropClient {
  return new HtmlDropClient(options);
}
