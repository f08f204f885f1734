/**
 * The one error type of the client. `code` is the service's `error.code` (docs/api.md section 7) when the service answered
 * with an error body, or one of the client's own codes below when it did not (network, bad answer, local input).
 */

/** Codes the service sends (docs/api.md section 7). */
export type ApiErrorCode =
  | 'unauthorized'
  | 'invalid_token'
  | 'token_required'
  | 'rate_limited'
  | 'daily_quota_exceeded'
  | 'quota_exceeded'
  | 'html_too_large'
  | 'html_required'
  | 'title_required'
  | 'title_too_long'
  | 'description_too_long'
  | 'context_too_large'
  | 'passcode_required'
  | 'passcode_too_short'
  | 'metadata_only_on_patch'
  /** Many files in one drop (docs/api.md): a bad path (`details.path`), too many files, HTML and files too large. */
  | 'invalid_file_path'
  | 'too_many_files'
  | 'version_too_large'
  | 'forbidden'
  | 'not_found'
  | 'version_not_found'
  | 'last_version_cannot_be_deleted'
  | 'version_limit_reached'
  | 'invalid_slug'
  | 'invalid_arg'
  | 'invalid_json'
  | 'invalid_archive'
  /** Comments (docs/api.md, "Comments"): the drop takes none, only from signed-in people, or has the maximum. */
  | 'comments_closed'
  | 'sign_in_required'
  | 'comment_limit_reached'
  /** 412: an `If-Match` named another version than the drop's latest; `details.latest_version` is the latest. */
  | 'version_conflict'
  /** 422: an `Idempotency-Key` was used before with another body. */
  | 'idempotency_key_reused'
  /** 409: the first request with this `Idempotency-Key` is still running; retry shortly with the same key. */
  | 'request_in_progress'
  /** 422: `scan: "block"` (or the operator's block) and the document looks like it carries secrets or personal data; `details.findings` lists them, masked; nothing was stored. */
  | 'sensitive_content'
  | 'internal';

/** Codes the client raises itself; the service never sends them. */
export type ClientErrorCode =
  /** The service could not be reached (connection refused, DNS, TLS, reset). */
  | 'network_error'
  /** The service answered something that is not the htmldrop API (non-JSON, wrong shape, unexpected status). */
  | 'bad_response'
  /** A request took longer than the configured timeout. */
  | 'timeout'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** No token in any of the places looked at: --token, ./.htmldrop/token, HTMLDROP_TOKEN, ~/.config/htmldrop/token. */
  | 'no_token'
  /** A token file is readable by group or others (or cannot be read at all). */
  | 'token_file_permissions'
  /** The device flow ended without a token: denied, too late, already claimed or unknown. */
  | 'device_flow_expired'
  | 'device_flow_claimed'
  | 'device_flow_not_found'
  /** Local input problems, found before anything is sent. */
  | 'file_not_found'
  | 'file_unreadable'
  | 'is_directory'
  | 'binary_file'
  | 'not_html'
  /** A folder to publish has no index.html at its top (its entry document). */
  | 'no_index'
  | 'usage'
  /** Client-side upsert: the metadata filter matched several drops. */
  | 'upsert_ambiguous'
  /** Client-side upsert: another process held the lock for too long. */
  | 'lock_timeout';

/** Any code; known codes autocomplete, unknown future service codes still type-check. */
export type ErrorCode = ApiErrorCode | ClientErrorCode | (string & Record<never, never>);

export type ErrorDetails = Readonly<Record<string, unknown>>;

export interface HtmlDropErrorOptions {
  /** HTTP status when the service answered; undefined for errors raised before or without an answer. */
  readonly status?: number;
  readonly details?: ErrorDetails;
  /** Seconds to wait before retrying (429 `Retry-After`). */
  readonly retryAfterSeconds?: number;
  /** The service's `x-request-id`, to quote when reporting a 5xx. */
  readonly requestId?: string;
  readonly cause?: unknown;
}

export class HtmlDropError extends Error {
  override readonly name = 'HtmlDropError';
  readonly code: ErrorCode;
  readonly status: number | undefined;
  readonly details: ErrorDetails | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly requestId: string | undefined;

  constructor(code: ErrorCode, message: string, options: HtmlDropErrorOptions = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.requestId = options.requestId;
  }

  /** For `version_conflict` (412): the drop's latest version when the service refused the write, if it said. */
  get latestVersion(): number | undefined {
    const latest = this.details?.latest_version;
    return typeof latest === 'number' && Number.isInteger(latest) ? latest : undefined;
  }

  /** A plain object for JSON output (no stack, no cause). */
  toJSON(): { code: string; message: string; status?: number; details?: ErrorDetails; retry_after_seconds?: number } {
    return {
      code: this.code,
      message: this.message,
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.details === undefined ? {} : { details: this.details }),
      ...(this.retryAfterSeconds === undefined ? {} : { retry_after_seconds: this.retryAfterSeconds }),
    };
  }
}

export function isHtmlDropError(value: unknown): value is HtmlDropError {
  return value instanceof HtmlDropError;
}
