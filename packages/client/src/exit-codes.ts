/** The CLI's exit codes: one table, one mapping from error to code. Documented in README.md; stable. */
import { HtmlDropError } from './errors.js';

export const EXIT = {
  /** Success. */
  ok: 0,
  /** Unexpected failure (a bug in htmldrop: please report it). */
  unexpected: 1,
  /** Bad usage or bad input: unknown command or flag, missing argument, missing/unreadable/binary/non-HTML file, a value the service rejects (400). */
  usage: 2,
  /** Authentication: no token, invalid or revoked token, token file with wrong permissions or garbage, sign-in denied or expired. */
  auth: 3,
  /** Not found or forbidden: unknown drop, version or token id; a drop of another account. */
  notFound: 4,
  /** Limits: rate limit or daily quota still exceeded after the retries, account drop quota. */
  limits: 5,
  /** Service unreachable, timed out, answered something that is not the htmldrop API, or failed (5xx). */
  unavailable: 6,
  /**
   * Conflict: upsert matched several drops, upsert lock held too long, If-Match named another version than the latest
   * (also an upsert that other writers kept overtaking), an Idempotency-Key reused or still in use, last version,
   * version limit, comment limit.
   */
  conflict: 7,
  /**
   * Refused by the look before publishing (--block, or a service that blocks): the document looks like it carries
   * secrets or personal data; nothing was published. The findings are printed on stderr.
   */
  sensitive: 8,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

const BY_CODE: Readonly<Record<string, ExitCode>> = {
  usage: EXIT.usage,
  file_not_found: EXIT.usage,
  file_unreadable: EXIT.usage,
  is_directory: EXIT.usage,
  binary_file: EXIT.usage,
  not_html: EXIT.usage,
  html_too_large: EXIT.usage,
  no_index: EXIT.usage,
  invalid_file_path: EXIT.usage,
  too_many_files: EXIT.usage,
  version_too_large: EXIT.usage,
  no_token: EXIT.auth,
  unauthorized: EXIT.auth,
  invalid_token: EXIT.auth,
  token_file_permissions: EXIT.auth,
  device_flow_expired: EXIT.auth,
  device_flow_claimed: EXIT.auth,
  device_flow_not_found: EXIT.auth,
  sign_in_required: EXIT.auth,
  forbidden: EXIT.notFound,
  comments_closed: EXIT.notFound,
  not_found: EXIT.notFound,
  version_not_found: EXIT.notFound,
  rate_limited: EXIT.limits,
  daily_quota_exceeded: EXIT.limits,
  quota_exceeded: EXIT.limits,
  network_error: EXIT.unavailable,
  bad_response: EXIT.unavailable,
  timeout: EXIT.unavailable,
  internal: EXIT.unavailable,
  upsert_ambiguous: EXIT.conflict,
  lock_timeout: EXIT.conflict,
  last_version_cannot_be_deleted: EXIT.conflict,
  version_limit_reached: EXIT.conflict,
  comment_limit_reached: EXIT.conflict,
  version_conflict: EXIT.conflict,
  idempotency_key_reused: EXIT.conflict,
  request_in_progress: EXIT.conflict,
  sensitive_content: EXIT.sensitive,
  aborted: EXIT.interrupted,
};

/** The exit code for an error: by its code, else by HTTP status class, else 1. */
export function exitCodeFor(error: unknown): ExitCode {
  if (!(error instanceof HtmlDropError)) return EXIT.unexpected;
  const known = BY_CODE[error.code];
  if (known !== undefined) return known;
  const status = error.status;
  if (status === undefined) return EXIT.unexpected;
  if (status === 401) return EXIT.auth;
  if (status === 403 || status === 404) return EXIT.notFound;
  if (status === 409) return EXIT.conflict;
  if (status === 429) return EXIT.limits;
  if (status >= 500) return EXIT.unavailable;
  if (status >= 400) return EXIT.usage;
  return EXIT.unexpected;
}
