/**
 * The SDK's HTTP transport: one request to the service with the bearer token, a timeout and the caller's signal;
 * 429 answers retried after `Retry-After`; writes sent with an `Idempotency-Key` retried with the same key when the
 * answer was lost or the service was briefly away; the service's error bodies (docs/api.md section 2.6) turned into
 * HtmlDropError, and a client code (`network_error`, `bad_response`, `timeout`, `aborted`, `no_token`) when the
 * service did not answer with an error body. Zero runtime dependencies: Node's global fetch.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type ErrorDetails, HtmlDropError } from './errors.js';
import { localhostFetch } from './localhost-fetch.js';

/** The service address when none is given (docs/api.md section 1, "Names and conventions"). */
export const DEFAULT_SERVER = 'http://localhost:8787';
/** The version of this SDK and CLI (`htmldrop --version`, the user agent). */
export const CLIENT_VERSION = '1.0.0';

/** A request body other than JSON: bytes, text or a web stream (fetch's own body types). */
export type UploadBody = NonNullable<RequestInit['body']>;

/** Told before each wait on a 429, and before each retry of an idempotent write. */
export interface RetryNotice {
  /** 1 for the first retry (counted separately for 429s and for write retries). */
  readonly attempt: number;
  /** May be fractional for a write retry's backoff. */
  readonly waitSeconds: number;
  /** What failed: the 429's code, or `network_error`, `timeout`, `request_in_progress`, a 502/503/504's code. */
  readonly code: string;
  /** Only for the retry of an idempotent write (POST /api/drops, PUT): the Idempotency-Key it is sent again with. */
  readonly idempotencyKey?: string;
}

/** What an answer said besides its body (CallOptions.onResponse). */
export interface ResponseInfo {
  readonly status: number;
  /** The version the `ETag` names (single-drop answers carry `ETag: "<latest_version>"`), else undefined. */
  readonly etagVersion: number | undefined;
  /** `Idempotent-Replayed: true`: the service answered from an earlier request with the same Idempotency-Key. */
  readonly replayed: boolean;
  readonly requestId: string | undefined;
}

/** Options of HtmlDropClient (and createClient). */
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
  /**
   * How many times a write sent with an `Idempotency-Key` (createDrop, updateDrop) is sent again, with the same key,
   * after a network error, a timeout, a 502/503/504 or a 409 `request_in_progress`. Default 3; 0 disables. The
   * service answers a repeat of a write it already did from its record, so a retry never writes twice.
   */
  readonly maxWriteRetries?: number;
  readonly onRetry?: (notice: RetryNotice) => void;
  /**
   * A fetch implementation (tests, proxies); default the global fetch, reaching `*.localhost` names as browsers do
   * (localhost-fetch.ts).
   */
  readonly fetch?: typeof fetch;
  readonly userAgent?: string;
}

/** Per-call options. */
export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Told the status and headers of the successful answer (ETag version, idempotent replay). */
  readonly onResponse?: (info: ResponseInfo) => void;
}

/** One request, as the resource methods describe it. */
export interface RequestSpec {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: URLSearchParams;
  readonly body?: unknown;
  /** Default true: sends the bearer token and fails with no_token without one. */
  readonly auth?: boolean;
  /** What a successful answer carries; `response`: the unread Response, to stream its body (an export). */
  readonly expect: 'json' | 'empty' | 'text' | 'response';
  /**
   * A body that is not JSON (an import's zip): made anew for each attempt, sent with its type and, when known, its
   * length (so the service can refuse it from Content-Length before reading it).
   */
  readonly upload?: {
    readonly body: () => UploadBody;
    readonly contentType: string;
    readonly length?: number;
  };
  /** This request's timeout in milliseconds, instead of the client's (0: none; a long export or import). */
  readonly timeoutMs?: number;
  readonly accept?: string;
  readonly signal?: AbortSignal | undefined;
  /**
   * Seconds the service may hold this request before answering (a comment listing's `wait`): its timeout is then at
   * least this plus 15 s, whatever `timeoutMs` says (0 still disables it).
   */
  readonly holdSeconds?: number;
  /** More request headers (If-Match). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as `Idempotency-Key`; the request is then retried with it (ClientOptions.maxWriteRetries). */
  readonly idempotencyKey?: string | undefined;
  readonly onResponse?: ((info: ResponseInfo) => void) | undefined;
}

/** Margin above a held request's wait: the answer, a slow network, the service's own timer. */
const HOLD_MARGIN_MS = 15_000;

/** Statuses of a proxy or service that is briefly away: an idempotent write is sent again. */
const TRANSIENT_STATUSES = new Set([502, 503, 504]);

/** Whether an idempotent write that failed with `error` may be sent again with the same key. */
function isTransient(error: HtmlDropError): boolean {
  if (error.code === 'network_error' || error.code === 'timeout' || error.code === 'request_in_progress') return true;
  return error.status !== undefined && TRANSIENT_STATUSES.has(error.status);
}

/** The backoff before write retry `n` (from 0): 0.5 s doubling to at most 4 s, with up to 25% jitter. */
function backoffSeconds(n: number): number {
  const base = Math.min(4, 0.5 * 2 ** n);
  return Math.round(base * (1 + Math.random() * 0.25) * 10) / 10;
}

/** The version an `ETag: "<n>"` (or `W/"<n>"`) names. */
export function etagVersion(header: string | null): number | undefined {
  const match = header === null ? null : /^(?:W\/)?"(\d+)"$/.exec(header.trim());
  return match?.[1] === undefined ? undefined : Number(match[1]);
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

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Sends requests to one service with one token (or none); HtmlDropClient's resource methods go through it. */
export class Transport {
  /** Base URL without trailing slash. */
  readonly server: string;
  readonly #token: string | undefined;
  readonly #options: ClientOptions;
  readonly #fetch: typeof fetch;

  /** @param server the normalized base URL (normalizeServer) */
  constructor(server: string, options: ClientOptions) {
    this.server = server;
    this.#token = options.token;
    this.#options = options;
    // *.localhost names reach the loopback host, as in a browser (a local service's drop origins, RFC 6761).
    this.#fetch = options.fetch ?? localhostFetch;
  }

  /** Whether a token was given. */
  get hasToken(): boolean {
    return this.#token !== undefined;
  }

  /**
   * The request, retried after `Retry-After` on a 429 (at most maxRetries times, waits up to maxRetryWaitSeconds);
   * a request with an idempotency key also after a transient failure (at most maxWriteRetries times, with backoff).
   */
  async request<T>(spec: RequestSpec): Promise<T> {
    const done = { rate: 0, write: 0 };
    for (;;) {
      try {
        return (await this.#once(spec)) as T;
      } catch (error) {
        const retry = this.#retryOf(spec, error, done);
        if (retry === undefined) throw error;
        done[retry.kind]++;
        this.#options.onRetry?.(retry.notice);
        try {
          await sleep(
            retry.notice.waitSeconds * 1000,
            undefined,
            spec.signal === undefined ? {} : { signal: spec.signal },
          );
        } catch {
          throw new HtmlDropError('aborted', 'The request was aborted.');
        }
      }
    }
  }

  /** Whether and after how long a failed request is sent again; undefined: it fails with `error`. */
  #retryOf(
    spec: RequestSpec,
    error: unknown,
    done: { readonly rate: number; readonly write: number },
  ): { kind: 'rate' | 'write'; notice: RetryNotice } | undefined {
    if (!(error instanceof HtmlDropError)) return undefined;
    const maxWait = this.#options.maxRetryWaitSeconds ?? 90;
    const code = String(error.code);
    if (error.status === 429) {
      const wait = error.retryAfterSeconds;
      if (wait === undefined || done.rate >= Math.max(0, this.#options.maxRetries ?? 3) || wait > maxWait) {
        return undefined;
      }
      return { kind: 'rate', notice: { attempt: done.rate + 1, waitSeconds: wait, code } };
    }
    const key = spec.idempotencyKey;
    if (key === undefined || !isTransient(error) || done.write >= Math.max(0, this.#options.maxWriteRetries ?? 3)) {
      return undefined;
    }
    const asked = error.retryAfterSeconds;
    const wait = asked !== undefined && asked <= maxWait ? asked : backoffSeconds(done.write);
    return { kind: 'write', notice: { attempt: done.write + 1, waitSeconds: wait, code, idempotencyKey: key } };
  }

  async #once(spec: RequestSpec): Promise<unknown> {
    const { url, headers, body } = this.#prepare(spec);
    const where = `${spec.method} ${url.origin}${url.pathname}`;
    const { response, text } = await this.#send(spec, url, headers, body, where);
    return this.#answer(spec, response, text, where);
  }

  /** The URL, headers and body of a request; no_token for an authenticated request without a token. */
  #prepare(spec: RequestSpec): { url: URL; headers: Record<string, string>; body: UploadBody | undefined } {
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
    for (const [name, value] of Object.entries(spec.headers ?? {})) headers[name.toLowerCase()] = value;
    if (spec.idempotencyKey !== undefined) headers['idempotency-key'] = spec.idempotencyKey;
    let body: UploadBody | undefined;
    if (spec.upload !== undefined) {
      headers['content-type'] = spec.upload.contentType;
      if (spec.upload.length !== undefined) headers['content-length'] = String(spec.upload.length);
      body = spec.upload.body();
    } else if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.body);
    }
    return { url, headers, body };
  }

  /** Fetches and reads the answer, under the timeout and the caller's signal: aborted, timeout or network_error. */
  async #send(
    spec: RequestSpec,
    url: URL,
    headers: Record<string, string>,
    body: UploadBody | undefined,
    where: string,
  ): Promise<{ response: Response; text: string }> {
    const configured = spec.timeoutMs ?? this.#options.timeoutMs ?? 60_000;
    const held = spec.holdSeconds === undefined ? 0 : spec.holdSeconds * 1000 + HOLD_MARGIN_MS;
    const timeoutMs = configured > 0 ? Math.max(configured, held) : 0;
    const timeout = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
    const signals = [spec.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    try {
      // Reads may follow redirects (http -> https behind a proxy); writes must not silently turn into GETs.
      const redirect = spec.method === 'GET' ? 'follow' : 'manual';
      // A streamed upload needs Node's half-duplex mode (undici); a string or bytes body ignores it.
      const init = { method: spec.method, headers, body, signal, redirect, duplex: 'half' } as RequestInit;
      const response = await this.#fetch(url, init);
      const streamed = spec.expect === 'response' && response.status < 300;
      return { response, text: streamed ? '' : await response.text() };
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
  }

  /** What the answer carries (spec.expect), or the service's error as HtmlDropError; bad_response for anything else. */
  #answer(spec: RequestSpec, response: Response, text: string, where: string): unknown {
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const contentType = response.headers.get('content-type') ?? '';
    const notApi = (what: string) =>
      new HtmlDropError(
        'bad_response',
        `${where} answered HTTP ${response.status} with ${what}: is ${this.server} an htmldrop service?`,
        { status: response.status, ...(requestId === undefined ? {} : { requestId }) },
      );

    if (response.status >= 400) {
      const parsed = parseJson(text);
      const error = parsed.ok && isRecord(parsed.value) ? parsed.value.error : undefined;
      if (!isRecord(error) || typeof error.code !== 'string') {
        if (response.status === 412) {
          throw new HtmlDropError('version_conflict', `${where}: the drop has another version than If-Match named.`, {
            status: 412,
            ...(requestId === undefined ? {} : { requestId }),
          });
        }
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
    spec.onResponse?.({
      status: response.status,
      etagVersion: etagVersion(response.headers.get('etag')),
      replayed: response.headers.get('idempotent-replayed')?.trim().toLowerCase() === 'true',
      requestId,
    });

    if (spec.expect === 'empty') return undefined;
    if (spec.expect === 'text') return text;
    if (spec.expect === 'response') return response;
    const parsed = parseJson(text);
    if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) {
      throw notApi(parsed.ok ? 'JSON that is not an object or array' : `non-JSON (${contentType || 'no type'})`);
    }
    return parsed.value;
  }
}
