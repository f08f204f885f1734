/**
 * @htmldrop/client: the typed SDK for the htmldrop service. Zero runtime dependencies beyond Node (global fetch).
 *
 *   const client = createClient({ server: 'http://localhost:8787', token: (await requireToken()).token });
 *   const drop = await client.createDrop({ title: 'Report', html: '<!doctype html>...' });
 */
export {
  type CallOptions,
  CLIENT_VERSION,
  type ClientOptions,
  type CollectOptions,
  type ConditionalOptions,
  createClient,
  DEFAULT_SERVER,
  type ExportOptions,
  HtmlDropClient,
  type IdempotentOptions,
  type ImportOptions,
  MAX_COMMENT_WAIT_SECONDS,
  newIdempotencyKey,
  normalizeServer,
  type ResponseInfo,
  type RetryNotice,
  type UpdateOptions,
} from './client.js';
export {
  type DeviceCodePrompt,
  type DeviceLoginOptions,
  type DeviceLoginResult,
  deviceLogin,
  promptOf,
  type WaitOptions,
  waitForDeviceToken,
} from './device-flow.js';
export {
  type ApiErrorCode,
  type ClientErrorCode,
  type ErrorCode,
  type ErrorDetails,
  HtmlDropError,
  type HtmlDropErrorOptions,
  isHtmlDropError,
} from './errors.js';
export { EXIT, type ExitCode, exitCodeFor } from './exit-codes.js';
export { describeExpiry, MAX_EXPIRY_MS, MIN_EXPIRY_MS, parseExpires } from './expires.js';
export {
  type Folder,
  type FolderEntry,
  fileInput,
  filePathProblem,
  INDEX,
  readFileMap,
  readFolder,
  referenceWarnings,
} from './folder.js';
export {
  assertPublishable,
  byteLength,
  type CheckOptions,
  checkHtml,
  documentTitle,
  type HtmlWarning,
  type HtmlWarningCode,
  looksLikeHtml,
  MAX_HTML_BYTES,
  relativeReferences,
} from './html-checks.js';
export { createLocalhostFetch, isUnderLocalhost, localhostFetch } from './localhost-fetch.js';
export { checkNetwork, describeNetwork, MAX_NETWORK_ORIGINS, parseNetwork, sameNetwork } from './network.js';
export { MIN_NODE_VERSION, supportsNode } from './node-version.js';
export { type OpenOptions, openUrl } from './open.js';
export { type ReadOptions, readTextSource, type TextSource } from './source.js';
export {
  describeTokenSource,
  explainTokenError,
  isTokenRejected,
  signInAgainAdvice,
  type TokenOrigin,
  tokenRejectedMessage,
  tokenSourceLabel,
} from './token-messages.js';
export {
  ensurePrivateDir,
  isWellFormedToken,
  noTokenMessage,
  PROJECT_DIR,
  projectTokenPath,
  type ResolvedToken,
  type ResolveOptions,
  readTokenFile,
  removeTokenFile,
  requireToken,
  resolveToken,
  TOKEN_ENV,
  type TokenLocations,
  type TokenSource,
  userConfigDir,
  userTokenPath,
  writeProjectToken,
  writeTokenFile,
} from './token-store.js';
export type * from './types.js';
export {
  describeMatch,
  type LockHolder,
  type LockOptions,
  lockFileName,
  MAX_CONFLICT_RETRIES,
  type UpsertConflict,
  type UpsertInput,
  type UpsertOptions,
  type UpsertResult,
  upsertCreateKey,
  upsertDrop,
  withLockFile,
  withWarningsOf,
} from './upsert.js';
