/**
 * The wording of token errors, in one place for the CLI, the MCP server and SDK users: where a token came from, and
 * how to get a new one. The advice names the command as `htmldrop login`, which is right however the CLI is started
 * (`npx --no-install htmldrop login` inside the htmldrop repository, `npx --yes --package=<server>/cli/htmldrop.tgz
 * htmldrop login` elsewhere).
 */
import path from 'node:path';
import { HtmlDropError } from './errors.js';
import type { TokenSource } from './token-store.js';

/** Where a token came from: a resolved token, or just its source and file. */
export interface TokenOrigin {
  readonly source: TokenSource;
  /** The file it was read from (sources `project` and `user`). */
  readonly path?: string | undefined;
}

/** "the --token flag", "the HTMLDROP_TOKEN environment variable" or "the file /abs/path/token". */
export function describeTokenSource(origin: TokenOrigin): string {
  switch (origin.source) {
    case 'flag':
      return 'the --token flag';
    case 'env':
      return 'the HTMLDROP_TOKEN environment variable';
    default:
      return `the file ${origin.path ?? (origin.source === 'project' ? './.htmldrop/token' : '~/.config/htmldrop/token')}`;
  }
}

/** One sentence: how to replace a token from this place with a working one. */
export function signInAgainAdvice(origin: TokenOrigin): string {
  switch (origin.source) {
    case 'flag':
      return 'Run `htmldrop login` to sign in again, then stop passing --token (or pass the new token).';
    case 'env':
      return 'Run `htmldrop login` to sign in again, then unset HTMLDROP_TOKEN (or set it to the new token).';
    case 'project': {
      // <dir>/.htmldrop/token: `login --project` run in <dir> writes that same file.
      const dir = origin.path === undefined ? 'this directory' : path.dirname(path.dirname(origin.path));
      return `Run \`htmldrop login --project\` in ${dir} to sign in again; it replaces that file.`;
    }
    default:
      return 'Run `htmldrop login` to sign in again; it replaces that file.';
  }
}

/** The message of a token the service refused (401 `invalid_token` or `unauthorized`). */
export function tokenRejectedMessage(origin: TokenOrigin, code: string): string {
  const where = describeTokenSource(origin);
  const what =
    code === 'invalid_token'
      ? `The service refused the token from ${where}: it is revoked, unknown or malformed.`
      : `The service did not accept the token from ${where}.`;
  return `${what} ${signInAgainAdvice(origin)}`;
}

/** Whether an error is the service refusing the caller's token: 401 `invalid_token` or `unauthorized`. */
export function isTokenRejected(error: unknown): error is HtmlDropError {
  return (
    error instanceof HtmlDropError &&
    error.status === 401 &&
    (error.code === 'invalid_token' || error.code === 'unauthorized')
  );
}

/**
 * For an error of a call made with the token `origin` describes: when the service refused that token, the same
 * error (code, status, request id) with a message naming where the token came from and how to sign in again, and
 * `details.token_source` ("--token", "HTMLDROP_TOKEN" or the file's path). Any other error is returned unchanged.
 * Not for `getRawHtml`, whose 401 `unauthorized` is a passcode gate, not the token.
 */
export function explainTokenError(error: unknown, origin: TokenOrigin | undefined): unknown {
  if (origin === undefined || !isTokenRejected(error)) return error;
  return new HtmlDropError(error.code, tokenRejectedMessage(origin, error.code), {
    status: 401,
    details: { ...error.details, token_source: tokenSourceLabel(origin) },
    ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
    cause: error,
  });
}

/** The short form used in JSON (`whoami`'s `token_source`, error details): "--token", "HTMLDROP_TOKEN" or a path. */
export function tokenSourceLabel(origin: TokenOrigin): string {
  if (origin.source === 'flag') return '--token';
  if (origin.source === 'env') return 'HTMLDROP_TOKEN';
  return origin.path ?? describeTokenSource(origin).replace(/^the file /, '');
}
