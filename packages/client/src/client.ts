/**
 * The typed SDK: one method per endpoint of docs/api.md section 4. Zero runtime dependencies: Node's global fetch.
 * Every failure is an HtmlDropError whose `code` is the service's `error.code`, or a client code (`network_error`,
 * `bad_response`, `timeout`, `aborted`, `no_token`) when the service did not answer with an error body.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type DeviceLoginOptions, type DeviceLoginResult, deviceLogin } from './device-flow.js';
import { type ErrorDetails, HtmlDropError } from './errors.js';
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

export const DEFAULT_SERVER = 'http://localhost:8787';
export const CLIENT_VERSION = '1.0.0';

/** Told before each wait on a 429. */
export interface RetryNotice {
  /** 1 for the first retry. */
  readonly attempt: number;
  readonly waitSeconds: number;
  readonly code: string;
}

export interface ClientOptions {
  /** Base URL of the service; default http://localhost:8787. */
  readonly server?: string;
  /** Bearer token (`hd_...`); needed by every owner endpoint. */
  readonly token?: string;
  /**
   * How many times a 429 (`rate_limited`, `daily_quota_exceeded`, or any 429 with `Retry-After`) is retried after
   * waiting `Retry-After` seconds. Default 3; 0 disables. `quota_exceeded` carries no Retry-After and is never retried.
   */
  readonly maxRetries?: number;
  /** A 429 asking to wait longer than this many seconds is not waited for: it fails at once. Default 90. */
  readonly maxRetryWaitSeconds?: number;
  /** Per-request timeout in milliseconds (default 60000; 0 disables). */
  readonly timeoutMs?: number;
  readonly onRetry?: (notice: RetryNotice) => void;
  /** A fetch implementation (tests, proxies); default the global fetch. */
  readonly fetch?: typeof fetch;
  readonly userAgent?: string;
}

/** Per-call options. */
export interface CallOptions {
  readonly signal?: AbortSignal;
}

interface RequestSpec {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: URLSearchParams;
  readonly body?: unknown;
  /** Default true: sends the bearer token and fails with no_token without one. */
  readonly auth?: boolean;
  /** What a successful answer carries. */
  readonly expect: 'json' | 'empty' | 'text';
  readonly accept?: string;
  readonly signal?: AbortSignal | undefined;
}

/** Normalizes and checks a base URL: http(s), no trailing slash, no query. */
export function normalizeServer(server: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new HtmlDropError('usage', `The server address "${server}" is not a URL (expected e.g. ${DEFAULT_SERVER}).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new HtmlDropError('usage', `The server address "${server}" must start with http:// or https://.`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeCause(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code !== undefined && !cause.message.includes(code) ? `${code} ${cause.message}` : cause.message;
  }
  return String(cause);
}

function parseRetryAfter(header: string | null, details: unknown): number | undefined {
  if (header !== null && /^\d+$/.test(header.trim())) return Number(header.trim());
  if (isRecord(details) && typeof details.retry_after_seconds === 'number') return details.retry_after_seconds;
  return undefined;
}

function slugPath(slug: string): string {
  return encodeURIComponent(slug);
}

function versionNumber(n: number): string {
  if (!Number.isInteger(n) || n < 1) throw new HtmlDropError('usage', `A version is a whole number from 1 (got ${n}).`);
  return String(n);
}

export class HtmlDropClient {
  /** Base URL without trailing slash. */
  readonly server: string;
  readonly #token: string | undefined;
  readonly #options: ClientOptions;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions = {}) {
    this.server = normalizeServer(options.server ?? DEFAULT_SERVER);
    this.#token = options.token;
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  /** Whether a token was given. */
  get hasToken(): boolean {
    return this.#token !== undefined;
  }

  /** The same client with another token (e.g. the one a device flow just returned). */
  withToken(token: string): HtmlDropClient {
    return new HtmlDropClient({ ...this.#options, server: this.server, token });
  }

  // ---- onboarding and device flow (docs/api.md 4.2) ----

  /** GET /api/onboard: the agent protocol as Markdown. */
  onboard(options: CallOptions = {}): Promise<string> {
    return this.#request({ method: 'GET', path: '/api/onboard', auth: false, expect: 'text', ...options });
  }

  /** GET /api/onboard with Accept: application/json. */
  onboardJson(options: CallOptions = {}): Promise<Onboarding> {
    return this.#request({
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
    return this.#request({
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
    return this.#request({
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
    return this.#request({ method: 'POST', path: '/api/drops', body: input, expect: 'json', ...options });
  }

  /** GET /api/drops: one page of the caller's drops. */
  listDrops(query: ListDropsQuery = {}, options: CallOptions = {}): Promise<DropList> {
    const params = new URLSearchParams();
    if (query.page !== undefined) params.set('page', String(query.page));
    if (query.pageSize !== undefined) params.set('pageSize', String(query.pageSize));
    if (query.sortBy !== undefined) params.set('sortBy', query.sortBy);
    if (query.sortOrder !== undefined) params.set('sortOrder', query.sortOrder);
    for (const [key, value] of Object.entries(query.metadata ?? {})) params.set(`metadata.${key}`, value);
    return this.#request({ method: 'GET', path: '/api/drops', query: params, expect: 'json', ...options });
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
    return this.#request({ method: 'GET', path: `/api/drops/${slugPath(slug)}`, expect: 'json', ...options });
  }

  /** PUT /api/drops/<slug>: always creates a new version. */
  updateDrop(slug: string, input: UpdateDropInput, options: CallOptions = {}): Promise<Drop> {
    return this.#request({
      method: 'PUT',
      path: `/api/drops/${slugPath(slug)}`,
      body: input,
      expect: 'json',
      ...options,
    });
  }

  /** PATCH /api/drops/<slug>: title, description, metadata; no new version. */
  patchDrop(slug: string, input: PatchDropInput, options: CallOptions = {}): Promise<Drop> {
    return this.#request({
      method: 'PATCH',
      path: `/api/drops/${slugPath(slug)}`,
      body: input,
      expect: 'json',
      ...options,
    });
  }

  /** DELETE /api/drops/<slug>: the drop and all its versions. */
  async deleteDrop(slug: string, options: CallOptions = {}): Promise<void> {
    await this.#request({ method: 'DELETE', path: `/api/drops/${slugPath(slug)}`, expect: 'empty', ...options });
  }

  /** GET /api/drops/<slug>/versions: newest first. */
  listVersions(slug: string, options: CallOptions = {}): Promise<VersionListItem[]> {
    return this.#request({
      method: 'GET',
      path: `/api/drops/${slugPath(slug)}/versions`,
      expect: 'json',
      ...options,
    });
  }

  /** GET /api/drops/<slug>/v/<n>. */
  getVersion(slug: string, version: number, options: CallOptions = {}): Promise<Version> {
    return this.#request({
      method: 'GET',
      path: `/api/drops/${slugPath(slug)}/v/${versionNumber(version)}`,
      expect: 'json',
      ...options,
    });
  }

  /** DELETE /api/drops/<slug>/v/<n>: the updated drop; 409 last_version_cannot_be_deleted for the only one. */
  deleteVersion(slug: string, version: number, options: CallOptions = {}): Promise<Drop> {
    return this.#request({
      method: 'DELETE',
      path: `/api/drops/${slugPath(slug)}/v/${versionNumber(version)}`,
      expect: 'json',
      ...options,
    });
  }

  /** POST /api/drops/<slug>/passcode: sets or changes it (at least 4 characters); "" removes it. */
  setPasscode(slug: string, passcode: string, options: CallOptions = {}): Promise<Drop> {
    return this.#request({
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
    return this.#request({ method: 'GET', path: '/api/me', expect: 'json', ...options });
  }

  /** GET /api/tokens: the caller's active tokens. */
  listTokens(options: CallOptions = {}): Promise<TokenListItem[]> {
    return this.#request({ method: 'GET', path: '/api/tokens', expect: 'json', ...options });
  }

  /** DELETE /api/tokens/<id>: the token stops working at once. */
  async revokeToken(id: string, options: CallOptions = {}): Promise<void> {
    await this.#request({
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
      return await this.#request({
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

  // ---- transport ----

  async #request<T>(spec: RequestSpec): Promise<T> {
    const maxRetries = Math.max(0, this.#options.maxRetries ?? 3);
    const maxWait = this.#options.maxRetryWaitSeconds ?? 90;
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.#once(spec)) as T;
      } catch (error) {
        if (!(error instanceof HtmlDropError) || error.status !== 429) throw error;
        const wait = error.retryAfterSeconds;
        if (wait === undefined || attempt >= maxRetries || wait > maxWait) throw error;
        this.#options.onRetry?.({ attempt: attempt + 1, waitSeconds: wait, code: String(error.code) });
        try {
          await sleep(wait * 1000, undefined, spec.signal === undefined ? {} : { signal: spec.signal });
        } catch {
          throw new HtmlDropError('aborted', 'The request was aborted.');
        }
      }
    }
  }

  async #once(spec: RequestSpec): Promise<unknown> {
    const url = new URL(`${this.server}${spec.path}`);
    if (spec.query !== undefined) url.search = spec.query.toString();
    const headers: Record<string, string> = {
      accept: spec.accept ?? 'application/json',
      'user-agent': this.#options.userAgent ?? `htmldrop-client/${CLIENT_VERSION} node/${process.versions.node}`,
    };
    if (spec.auth !== false) {
      if (this.#token === undefined) {
        throw new HtmlDropError('no_token', 'No token: sign in with `htmldrop login` or set HTMLDROP_TOKEN.');
      }
      headers.authorization = `Bearer ${this.#token}`;
    }
    let body: string | undefined;
    if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.body);
    }
    const timeoutMs = this.#options.timeoutMs ?? 60_000;
    const timeout = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
    const signals = [spec.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    const where = `${spec.method} ${url.origin}${url.pathname}`;

    let response: Response;
    let text: string;
    try {
      // Reads may follow redirects (http -> https behind a proxy); writes must not silently turn into GETs.
      const redirect = spec.method === 'GET' ? 'follow' : 'manual';
      response = await this.#fetch(url, { method: spec.method, headers, body, signal, redirect });
      text = await response.text();
    } catch (error) {
      if (spec.signal?.aborted === true)
        throw new HtmlDropError('aborted', 'The request was aborted.', { cause: error });
      if (timeout?.aborted === true) {
        throw new HtmlDropError('timeout', `No answer from ${where} within ${timeoutMs / 1000} s.`, { cause: error });
      }
      throw new HtmlDropError(
        'network_error',
        `Cannot reach the htmldrop service at ${this.server} (${describeCause(error)}). Is it running, and is --server or HTMLDROP_SERVER right?`,
        { cause: error },
      );
    }

    const requestId = response.headers.get('x-request-id') ?? undefined;
    const contentType = response.headers.get('content-type') ?? '';
    const parseJson = (): { ok: true; value: unknown } | { ok: false } => {
      try {
        return { ok: true, value: JSON.parse(text) };
      } catch {
        return { ok: false };
      }
    };
    const notApi = (what: string) =>
      new HtmlDropError(
        'bad_response',
        `${where} answered HTTP ${response.status} with ${what}: is ${this.server} an htmldrop service?`,
        { status: response.status, ...(requestId === undefined ? {} : { requestId }) },
      );

    if (response.status >= 400) {
      const parsed = parseJson();
      const error = parsed.ok && isRecord(parsed.value) ? parsed.value.error : undefined;
      if (!isRecord(error) || typeof error.code !== 'string') {
        throw notApi(parsed.ok ? 'JSON that is not an htmldrop error body' : `non-JSON (${contentType || 'no type'})`);
      }
      const details = isRecord(error.details) ? (error.details as ErrorDetails) : undefined;
      const retryAfterSeconds = parseRetryAfter(response.headers.get('retry-after'), details);
      throw new HtmlDropError(
        error.code,
        typeof error.message === 'string' && error.message !== '' ? error.message : error.code,
        {
          status: response.status,
          ...(details === undefined ? {} : { details }),
          ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
          ...(requestId === undefined ? {} : { requestId }),
        },
      );
    }
    if (response.status >= 300) throw notApi(`a redirect to ${response.headers.get('location') ?? 'nowhere'}`);

    if (spec.expect === 'empty') return undefined;
    if (spec.expect === 'text') return text;
    const parsed = parseJson();
    if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) {
      throw notApi(parsed.ok ? 'JSON that is not an object or array' : `non-JSON (${contentType || 'no type'})`);
    }
    return parsed.value;
  }
}

/** Factory form of `new HtmlDropClient(options)`. */
export function createClient(options: ClientOptions = {}): HtmlDropClient {
  return new HtmlDropClient(options);
}
