/**
 * The typed SDK: one method per endpoint of docs/api.md section 4. Zero runtime dependencies: Node's global fetch.
 * Every failure is an HtmlDropError whose `code` is the service's `error.code`, or a client code (`network_error`,
 * `bad_response`, `timeout`, `aborted`, `no_token`) when the service did not answer with an error body. The requests
 * themselves (token, timeout, 429 retries, error bodies) are in transport.ts.
 */
import { type DeviceLoginOptions, type DeviceLoginResult, deviceLogin } from './device-flow.js';
import { HtmlDropError } from './errors.js';
import { type CallOptions, type ClientOptions, DEFAULT_SERVER, normalizeServer, Transport } from './transport.js';
import type {
  CreateDropInput,
  DeviceFlowPoll,
  DeviceFlowStart,
  Drop,
  DropList,
  ListDropsQuery,
  Me,
  Onboarding,
  PatchDropInput,
  TokenListItem,
  UpdateDropInput,
  Version,
  VersionListItem,
} from './types.js';

export {
  type CallOptions,
  CLIENT_VERSION,
  type ClientOptions,
  DEFAULT_SERVER,
  normalizeServer,
  type RetryNotice,
} from './transport.js';

function slugPath(slug: string): string {
  return encodeURIComponent(slug);
}

function versionNumber(n: number): string {
  if (!Number.isInteger(n) || n < 1) throw new HtmlDropError('usage', `A version is a whole number from 1 (got ${n}).`);
  return String(n);
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

  /** POST /api/drops: a new drop at version 1. */
  createDrop(input: CreateDropInput, options: CallOptions = {}): Promise<Drop> {
    return this.#transport.request({ method: 'POST', path: '/api/drops', body: input, expect: 'json', ...options });
  }

  /** GET /api/drops: one page of the caller's drops. */
  listDrops(query: ListDropsQuery = {}, options: CallOptions = {}): Promise<DropList> {
    const params = new URLSearchParams();
    if (query.page !== undefined) params.set('page', String(query.page));
    if (query.pageSize !== undefined) params.set('pageSize', String(query.pageSize));
    if (query.sortBy !== undefined) params.set('sortBy', query.sortBy);
    if (query.sortOrder !== undefined) params.set('sortOrder', query.sortOrder);
    for (const [key, value] of Object.entries(query.metadata ?? {})) params.set(`metadata.${key}`, value);
    return this.#transport.request({ method: 'GET', path: '/api/drops', query: params, expect: 'json', ...options });
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

  /** GET /api/drops/<slug>. */
  getDrop(slug: string, options: CallOptions = {}): Promise<Drop> {
    return this.#transport.request({ method: 'GET', path: `/api/drops/${slugPath(slug)}`, expect: 'json', ...options });
  }

  /** PUT /api/drops/<slug>: always creates a new version. */
  updateDrop(slug: string, input: UpdateDropInput, options: CallOptions = {}): Promise<Drop> {
    return this.#transport.request({
      method: 'PUT',
      path: `/api/drops/${slugPath(slug)}`,
      body: input,
      expect: 'json',
      ...options,
    });
  }

  /** PATCH /api/drops/<slug>: title, description, metadata; no new version. */
  patchDrop(slug: string, input: PatchDropInput, options: CallOptions = {}): Promise<Drop> {
    return this.#transport.request({
      method: 'PATCH',
      path: `/api/drops/${slugPath(slug)}`,
      body: input,
      expect: 'json',
      ...options,
    });
  }

  /** DELETE /api/drops/<slug>: the drop and all its versions. */
  async deleteDrop(slug: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'DELETE',
      path: `/api/drops/${slugPath(slug)}`,
      expect: 'empty',
      ...options,
    });
  }

  /** GET /api/drops/<slug>/versions: newest first. */
  listVersions(slug: string, options: CallOptions = {}): Promise<VersionListItem[]> {
    return this.#transport.request({
      method: 'GET',
      path: `/api/drops/${slugPath(slug)}/versions`,
      expect: 'json',
      ...options,
    });
  }

  /** GET /api/drops/<slug>/v/<n>. */
  getVersion(slug: string, version: number, options: CallOptions = {}): Promise<Version> {
    return this.#transport.request({
      method: 'GET',
      path: `/api/drops/${slugPath(slug)}/v/${versionNumber(version)}`,
      expect: 'json',
      ...options,
    });
  }

  /** DELETE /api/drops/<slug>/v/<n>: the updated drop; 409 last_version_cannot_be_deleted for the only one. */
  deleteVersion(slug: string, version: number, options: CallOptions = {}): Promise<Drop> {
    return this.#transport.request({
      method: 'DELETE',
      path: `/api/drops/${slugPath(slug)}/v/${versionNumber(version)}`,
      expect: 'json',
      ...options,
    });
  }

  /** POST /api/drops/<slug>/passcode: sets or changes it (at least 4 characters); "" removes it. */
  setPasscode(slug: string, passcode: string, options: CallOptions = {}): Promise<Drop> {
    return this.#transport.request({
      method: 'POST',
      path: `/api/drops/${slugPath(slug)}/passcode`,
      body: { passcode },
      expect: 'json',
      ...options,
    });
  }

  /** Removes the passcode (POST passcode ""). */
  removePasscode(slug: string, options: CallOptions = {}): Promise<Drop> {
    return this.setPasscode(slug, '', options);
  }

  // ---- account and tokens (docs/api.md 4.4) ----

  /** GET /api/me. */
  me(options: CallOptions = {}): Promise<Me> {
    return this.#transport.request({ method: 'GET', path: '/api/me', expect: 'json', ...options });
  }

  /** GET /api/tokens: the caller's active tokens. */
  listTokens(options: CallOptions = {}): Promise<TokenListItem[]> {
    return this.#transport.request({ method: 'GET', path: '/api/tokens', expect: 'json', ...options });
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
