/**
 * The one error type of the service. Spec section 7 codes plus `internal` and the transport's own refusals; statuses as docs/api.md 7 lists them.
 * Routes and domain functions throw ApiError; the HTTP error handler is the only writer of error bodies.
 */

/** Every error code the service emits, mapped to its default HTTP status. */
export const ERROR_STATUS = {
  unauthorized: 401,
  invalid_token: 401,
  token_required: 400,
  rate_limited: 429,
  daily_quota_exceeded: 429,
  quota_exceeded: 429,
  html_too_large: 400,
  html_required: 400,
  title_required: 400,
  title_too_long: 400,
  description_too_long: 400,
  context_too_large: 400,
  passcode_required: 400,
  passcode_too_short: 400,
  metadata_only_on_patch: 400,
  /** A file path outside the rules of docs/api.md, "Many files in one drop". */
  invalid_file_path: 400,
  /** More files in one version than HTMLDROP_MAX_FILES_PER_VERSION. */
  too_many_files: 400,
  /** A version's HTML and files together above HTMLDROP_MAX_VERSION_BYTES. */
  version_too_large: 400,
  forbidden: 403,
  not_found: 404,
  version_not_found: 404,
  last_version_cannot_be_deleted: 409,
  /** An If-Match precondition failed: the drop's latest version is another (docs/api.md, "Optimistic concurrency"). */
  version_conflict: 412,
  /** An Idempotency-Key was used before with another request (docs/api.md, "Idempotency keys"). */
  idempotency_key_reused: 422,
  /** The first request with this Idempotency-Key is still running: retry after Retry-After (its claim's lease). */
  request_in_progress: 409,
  version_limit_reached: 409,
  /** A write in block mode found secrets or personal data; nothing was stored (docs/api.md, "A look before publishing"). */
  sensitive_content: 422,
  invalid_slug: 400,
  invalid_arg: 400,
  invalid_json: 400,
  /** POST /api/import: the archive is not an export this service reads; nothing was imported (docs/api.md, "Export and import"). */
  invalid_archive: 400,
  /** A request body larger than its route takes (the document routes answer html_too_large instead). */
  body_too_large: 413,
  /** The drop's `comments` setting is `off` (docs/api.md, "Comments"). */
  comments_closed: 403,
  /** The drop takes comments only from people signed in through the identity provider. */
  sign_in_required: 401,
  /** The drop already has the maximum number of comments. */
  comment_limit_reached: 409,
  /** Readiness: a dependency (the database, the invalidation bus) is down. */
  not_ready: 503,
  /** The instance is shutting down: retry (another instance, or this one once restarted). */
  shutting_down: 503,
  /** The HTTP parser refused the request itself (malformed request line or headers). */
  bad_request: 400,
  /** The request's headers are larger than the HTTP parser accepts. */
  headers_too_large: 431,
  /** The client did not send its headers or body in time. */
  request_timeout: 408,
  /** The readable copy only: too many documents wait for the Markdown converter; retry after `Retry-After`. */
  busy: 503,
  /** `GET /oembed` with a `format` other than `json` (oEmbed 1.0, section 2.3.4: 501 Not Implemented). */
  unsupported_format: 501,
  /** Pages only (/p/ raw): the drop is locked and the request holds no capability. */
  locked: 401,
  /** Pages only (the passcode gate): the passcode is wrong. */
  wrong_passcode: 401,
  /** Pages only: the device request expired or was denied (/verify); the drop expired (/p/). */
  expired: 410,
  /** Pages only (/p/, a content origin): the signed-in person is not on a drop's list (docs/api.md, "Who can see a drop"). */
  not_on_list: 403,
  /** Pages only (/verify): the device request was already approved or denied. */
  already_decided: 409,
  /** Pages only: the identity provider refused the sign-in, or the sign-in cookie is missing or stale. */
  sign_in_failed: 400,
  /** Pages only: the identity provider could not be reached. */
  provider_unreachable: 502,
  /** Pages only: a form POST without the service's Origin (and, where signed in, its CSRF token). */
  cross_site: 403,
  /** Pages only: a POST to one of the service's HTML forms whose body is not a form (application/x-www-form-urlencoded). */
  unsupported_media_type: 415,
  internal: 500,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

const DEFAULT_MESSAGES: Record<ErrorCode, string> = {
  unauthorized: 'Authentication is required: send Authorization: Bearer <token>.',
  invalid_token: 'The token is not valid (malformed, unknown or revoked).',
  token_required: 'The token query parameter is required.',
  rate_limited: 'Too many writes this minute.',
  daily_quota_exceeded: 'Too many writes today.',
  quota_exceeded: 'The account has reached its maximum number of drops.',
  html_too_large: 'The HTML is larger than the service accepts.',
  html_required: 'html is required.',
  title_required: 'title is required.',
  title_too_long: 'title is longer than the service accepts.',
  description_too_long: 'description is longer than the service accepts.',
  context_too_large: 'context is larger than the service accepts.',
  passcode_required: 'passcode is required ("" removes it).',
  passcode_too_short: 'passcode is shorter than the service accepts.',
  metadata_only_on_patch: 'PATCH changes title, description and metadata only; use PUT to upload new html.',
  invalid_file_path: 'A file path is not valid.',
  too_many_files: 'The version has more files than the service accepts.',
  version_too_large: 'The version (HTML and files together) is larger than the service accepts.',
  forbidden: 'This drop belongs to another account.',
  not_found: 'Not found.',
  version_not_found: 'This version does not exist.',
  last_version_cannot_be_deleted: 'The only remaining version cannot be deleted; delete the drop instead.',
  version_limit_reached: 'The drop already has the maximum number of versions.',
  sensitive_content: 'The content looks like it carries secrets or personal data; nothing was stored.',
  version_conflict: 'The drop changed since the version named in If-Match; nothing was changed.',
  idempotency_key_reused: 'This Idempotency-Key was already used for another request.',
  request_in_progress:
    'A request with this Idempotency-Key is still running; retry with the same key after Retry-After seconds.',
  invalid_slug: 'The slug is not valid (1 to 64 characters of A-Z, a-z, 0-9, _ and -).',
  invalid_arg: 'An argument is not valid.',
  invalid_json: 'The request body is not a valid JSON object.',
  invalid_archive: 'The archive is not an htmldrop export this service can read; nothing was imported.',
  comments_closed: 'Comments are off for this drop.',
  sign_in_required: 'Sign in to comment on this drop.',
  comment_limit_reached: 'The drop already has the maximum number of comments.',
  body_too_large: 'The request body is larger than this endpoint accepts.',
  shutting_down: 'This instance is shutting down; retry in a moment.',
  not_ready: 'This instance cannot serve correctly right now.',
  bad_request: 'The request is not valid HTTP.',
  headers_too_large: 'The request headers are too large.',
  request_timeout: 'The request was not received in time.',
  busy: 'Too many documents are waiting to be converted; retry after Retry-After seconds.',
  unsupported_format: 'Only format=json is answered.',
  locked: 'This drop is locked: open it in the viewer and enter its passcode.',
  wrong_passcode: 'The passcode is not right.',
  not_on_list: 'The signed-in person is not among those this drop is shared with.',
  expired: 'This request expired or was denied.',
  already_decided: 'This request was already approved or denied.',
  sign_in_failed: 'The sign-in did not complete.',
  provider_unreachable: 'The identity provider could not be reached.',
  cross_site: 'This form did not come from this site.',
  unsupported_media_type: 'This page takes a web form (application/x-www-form-urlencoded), not another kind of body.',
  internal: 'Internal error.',
};

export type ErrorDetails = Readonly<Record<string, unknown>>;

export interface ApiErrorOptions {
  readonly message?: string;
  readonly details?: ErrorDetails;
  /** Overrides the code's default status (html_too_large is 413 when the transport cap is hit). */
  readonly status?: number;
  /** Seconds for the Retry-After header (429 rate windows only). */
  readonly retryAfterSeconds?: number;
  readonly cause?: unknown;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    super(options.message ?? DEFAULT_MESSAGES[code], options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.details =
      options.retryAfterSeconds === undefined
        ? options.details
        : { ...options.details, retry_after_seconds: options.retryAfterSeconds };
  }

  /** The spec section 7 body. */
  toBody(): { error: { code: ErrorCode; message: string; details?: ErrorDetails } } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details === undefined ? {} : { details: this.details }),
      },
    };
  }
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}
