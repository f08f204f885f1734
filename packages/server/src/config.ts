/**
 * The only reader of process.env. Parses, types and freezes the service configuration once; fails fast on bad input.
 * Names and defaults: docs/operating.md, "Configuration" (the docs test checks that its table matches this file).
 */
import path from 'node:path';

export type AuthProviderName = 'local' | 'github' | 'oidc';

/** Every limit the service enforces. Spec section 8 defaults; tests shrink them. */
export interface Limits {
  /** Per-account writes per UTC calendar minute. */
  readonly maxWritesPerMinute: number;
  /** Per-account writes per UTC calendar day. */
  readonly maxWritesPerDay: number;
  readonly maxDropsPerAccount: number;
  readonly maxVersionsPerDrop: number;
  /** UTF-8 bytes of one version's HTML. */
  readonly maxHtmlBytes: number;
  /** UTF-8 bytes of one version's context. */
  readonly maxContextBytes: number;
  /** Files beside the HTML in one version (docs/api.md, "Many files in one drop"); 0 takes none. */
  readonly maxFilesPerVersion: number;
  /** Bytes of one version: its HTML (UTF-8) plus its files (decoded). */
  readonly maxVersionBytes: number;
  /** Characters (code points). */
  readonly maxTitleChars: number;
  readonly maxDescriptionChars: number;
  readonly minPasscodeChars: number;
  readonly maxMetadataKeys: number;
  readonly maxMetadataKeyChars: number;
  readonly maxMetadataValueChars: number;
  readonly defaultPageSize: number;
  readonly maxPageSize: number;
  /**
   * Transport cap on the body of a request that carries a document (create, PUT): well above maxHtmlBytes after JSON
   * escaping (docs/api.md 7: 413 html_too_large). Refused from Content-Length before a byte is read.
   */
  readonly maxBodyBytes: number;
  /** Cap on every other request body (PATCH, passcodes, forms, unknown paths): 413 body_too_large. */
  readonly maxSmallBodyBytes: number;
  /** Cap on the unauthenticated device-flow start (`{"label": …}`): 413 body_too_large before it is read. */
  readonly maxAuthStartBodyBytes: number;
  /** Wrong passcodes per drop and client address per window (docs/api.md 4.6: 10 per 15 minutes). */
  readonly maxPasscodeAttempts: number;
  readonly passcodeWindowMs: number;
  /** Wrong passcodes per drop per window from all addresses together (docs/api.md 4.6). */
  readonly maxDropPasscodeAttempts: number;
  /** Wrong passcodes per drop per UTC day from all addresses together. */
  readonly maxDropPasscodeAttemptsPerDay: number;
  /** Device-flow starts per client address per minute. */
  readonly maxAuthStartsPerMinute: number;
  /** Polls of one poll token per minute; more are answered `pending` with Retry-After (docs/api.md 3.1). */
  readonly maxPollsPerMinute: number;
  /** Wrong user codes per client address per window on /verify (docs/api.md 5.4: 20 per 15 minutes). */
  readonly maxUserCodeGuesses: number;
  readonly userCodeGuessWindowMs: number;
  /** Comments per drop by others than its owner, all versions together (docs/api.md, "Comments"). */
  readonly maxCommentsPerDrop: number;
  /** Comments per page of the viewer's panel and of the console's list (the newest first). */
  readonly commentsPerPage: number;
  /**
   * Cap on the body of `POST /api/import` (a zip), its own limit (docs/api.md, "Export and import"): refused from
   * Content-Length before a byte is read, and counted while the upload streams to a temporary file.
   */
  readonly maxImportBytes: number;
  /** Bytes an import's entries may inflate to, all together: an archive declaring more is refused unread. */
  readonly maxImportInflatedBytes: number;
}

/** Settings of the configured identity provider (docs/api.md 5.4). */
export type IdentityConfig =
  | { readonly provider: 'local' }
  | {
      readonly provider: 'github';
      readonly clientId: string;
      readonly clientSecret: string;
      /** https://github.com; a loopback stand-in in tests. */
      readonly webUrl: string;
      /** https://api.github.com */
      readonly apiUrl: string;
    }
  | {
      readonly provider: 'oidc';
      readonly issuer: string;
      readonly clientId: string;
      readonly clientSecret: string | undefined;
      readonly scopes: string;
    };

export interface Config {
  readonly port: number;
  readonly host: string;
  /** {base_url} of the spec, without a trailing slash. */
  readonly baseUrl: string;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  /** Prefix of every Redis key and channel, so several deployments can share one Redis. */
  readonly redisPrefix: string;
  readonly authProvider: AuthProviderName;
  readonly identity: IdentityConfig;
  readonly allowLocalAuth: boolean;
  readonly limits: Limits;
  /** How often coalesced token last_used_at values and view counts are written, in milliseconds (at most 5000). */
  readonly flushIntervalMs: number;
  /** How long a passcode capability (cookie and iframe token) stays valid, in milliseconds. */
  readonly capabilityTtlMs: number;
  /** Memory for ready-to-send raw documents (all encodings), in bytes. */
  readonly rawCacheBytes: number;
  /**
   * Origins besides the service's own that may frame the viewer `/p/<slug>` (its `frame-ancestors`); `['*']` lets
   * any site embed it. Empty by default: only the service's own pages frame it.
   */
  readonly embedOrigins: readonly string[];
  /**
   * HTMLDROP_CONTENT_ORIGIN: the template of each drop's own origin, e.g. `https://{id}.drops-usercontent.example`
   * (docs/api.md, "Each drop on its own origin"); undefined: drops run in an opaque origin, as on the raw path.
   */
  readonly contentOrigin: string | undefined;
  /** Trust X-Forwarded-For from this many proxy hops / these addresses (Fastify trustProxy); false when unset. */
  readonly trustProxy: boolean | string;
  readonly logLevel: string;
  /** While the invalidation bus is down, how long a cached raw document may be served before it is re-read. */
  readonly cacheMaxAgeWithoutBusMs: number;
  /** Time a client has to send its request headers, in milliseconds. */
  readonly headersTimeoutMs: number;
  /** Time a client has to send its whole request (headers and body), in milliseconds. */
  readonly requestTimeoutMs: number;
  /** Open connections per client address (IPv6: per /64); 0 turns the cap off. */
  readonly maxConnectionsPerAddress: number;
  /** Open events streams (`/p/<slug>/events`) on this instance; beyond, 429 (docs/api.md, "Live pages"). */
  readonly maxEventStreams: number;
  /** HTMLDROP_WEBHOOK_ALLOW_PRIVATE=1: webhook targets may be loopback or private addresses, over http too (tests). */
  readonly webhookAllowPrivate: boolean;
  /**
   * HTMLDROP_SECRET: the signing secret shared by every instance; unset: the data directory's key file
   * (keys/signing-keys.ts).
   */
  readonly secret: string | undefined;
  /** HTMLDROP_SECRET_PREVIOUS: the secret before a rotation, accepted for verification only. */
  readonly previousSecret: string | undefined;
  /**
   * HTMLDROP_SCAN: what a finding of the look before publishing does (docs/api.md, "A look before publishing"):
   * `warn` (default) answers it with the write, and a request may ask for `block`; `block` refuses every such write.
   */
  readonly scan: 'warn' | 'block';
  /**
   * HTMLDROP_CHROMIUM: the path of a Chromium executable for the previews' screenshots (docs/api.md, "Previews and
   * embeds"); unset: previews are title cards only.
   */
  readonly chromium: string | undefined;
}

export const DEFAULT_LIMITS: Limits = Object.freeze({
  maxWritesPerMinute: 60,
  maxWritesPerDay: 500,
  maxDropsPerAccount: 500,
  maxVersionsPerDrop: 200,
  maxHtmlBytes: 2_097_152,
  maxContextBytes: 65_536,
  maxFilesPerVersion: 500,
  maxVersionBytes: 20 * 1_048_576,
  maxTitleChars: 200,
  maxDescriptionChars: 500,
  minPasscodeChars: 4,
  maxMetadataKeys: 10,
  maxMetadataKeyChars: 64,
  maxMetadataValueChars: 256,
  defaultPageSize: 50,
  maxPageSize: 200,
  maxBodyBytes: 16 * 1_048_576,
  maxSmallBodyBytes: 65_536,
  maxAuthStartBodyBytes: 1_024,
  maxPasscodeAttempts: 10,
  passcodeWindowMs: 15 * 60_000,
  maxDropPasscodeAttempts: 30,
  maxDropPasscodeAttemptsPerDay: 100,
  maxAuthStartsPerMinute: 20,
  maxPollsPerMinute: 60,
  maxUserCodeGuesses: 20,
  userCodeGuessWindowMs: 15 * 60_000,
  maxCommentsPerDrop: 1000,
  commentsPerPage: 50,
  maxImportBytes: 1_073_741_824,
  maxImportInflatedBytes: 8 * 1_073_741_824,
});

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

function readInt(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readFlag(env: Env, name: string): boolean {
  const raw = env[name]?.trim().toLowerCase();
  return raw === '1' || raw === 'true' || raw === 'yes';
}

function readScanMode(env: Env): 'warn' | 'block' {
  const raw = env.HTMLDROP_SCAN?.trim().toLowerCase() || 'warn';
  if (raw !== 'warn' && raw !== 'block') throw new ConfigError(`HTMLDROP_SCAN must be warn or block, got "${raw}"`);
  return raw;
}

/** HTMLDROP_CHROMIUM: an absolute path, or unset. Whether it runs is found at the first screenshot (and logged). */
function readChromium(env: Env): string | undefined {
  const raw = env.HTMLDROP_CHROMIUM?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!raw.startsWith('/')) throw new ConfigError(`HTMLDROP_CHROMIUM must be an absolute path, got "${raw}"`);
  return raw;
}

function readBaseUrl(env: Env, port: number): string {
  const raw = env.HTMLDROP_BASE_URL?.trim() || `http://localhost:${port}`;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`HTMLDROP_BASE_URL must be an absolute http(s) URL, got "${raw}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`HTMLDROP_BASE_URL must use http or https, got "${raw}"`);
  }
  return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
}

/** HTMLDROP_TRUST_PROXY: unset/0 = no proxy; 1/true = trust all hops; otherwise a comma-separated address list. */
function readTrustProxy(env: Env): boolean | string {
  const raw = env.HTMLDROP_TRUST_PROXY?.trim();
  if (raw === undefined || raw === '' || raw === '0' || raw.toLowerCase() === 'false') return false;
  if (raw === '1' || raw.toLowerCase() === 'true') return true;
  return raw;
}

function required(env: Env, name: string, why: string): string {
  const value = env[name]?.trim();
  if (value === undefined || value === '') throw new ConfigError(`${name} is required ${why}`);
  return value;
}

function readUrl(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim() || fallback;
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

function readIdentity(env: Env, provider: AuthProviderName): IdentityConfig {
  switch (provider) {
    case 'local':
      return { provider };
    case 'github':
      return {
        provider,
        clientId: required(env, 'HTMLDROP_GITHUB_CLIENT_ID', 'with HTMLDROP_AUTH_PROVIDER=github'),
        clientSecret: required(env, 'HTMLDROP_GITHUB_CLIENT_SECRET', 'with HTMLDROP_AUTH_PROVIDER=github'),
        webUrl: readUrl(env, 'HTMLDROP_GITHUB_URL', 'https://github.com'),
        apiUrl: readUrl(env, 'HTMLDROP_GITHUB_API_URL', 'https://api.github.com'),
      };
    case 'oidc': {
      const issuer = required(env, 'HTMLDROP_OIDC_ISSUER', 'with HTMLDROP_AUTH_PROVIDER=oidc');
      readUrl(env, 'HTMLDROP_OIDC_ISSUER', issuer);
      return {
        provider,
        // Kept exactly as given: an issuer identifier is compared byte for byte (OpenID Connect Discovery 4.3).
        issuer,
        clientId: required(env, 'HTMLDROP_OIDC_CLIENT_ID', 'with HTMLDROP_AUTH_PROVIDER=oidc'),
        clientSecret: env.HTMLDROP_OIDC_CLIENT_SECRET?.trim() || undefined,
        scopes: env.HTMLDROP_OIDC_SCOPES?.trim() || 'openid profile',
      };
    }
  }
}

/** True for addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** HTMLDROP_EMBED_ORIGINS: `*`, or origins (`https://wiki.example.com`) separated by commas or spaces. */
function readEmbedOrigins(env: Env): readonly string[] {
  const raw = env.HTMLDROP_EMBED_ORIGINS?.trim() ?? '';
  const items = raw.split(/[\s,]+/).filter((item) => item !== '');
  if (items.includes('*')) {
    if (items.length > 1) throw new ConfigError('HTMLDROP_EMBED_ORIGINS is either * or a list of origins, not both');
    return Object.freeze(['*']);
  }
  return Object.freeze(
    items.map((item) => {
      let url: URL;
      try {
        url = new URL(item);
      } catch {
        throw new ConfigError(`HTMLDROP_EMBED_ORIGINS: "${item}" is not an origin such as https://wiki.example.com`);
      }
      if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== item.replace(/\/$/, '')) {
        throw new ConfigError(`HTMLDROP_EMBED_ORIGINS: "${item}" is not an origin such as https://wiki.example.com`);
      }
      return url.origin;
    }),
  );
}

/**
 * HTMLDROP_CONTENT_ORIGIN: `<scheme>://{id}.<domain>[:port]`, or `off`. Unset, on a loopback HOST with a loopback
 * base URL: `{id}.localhost` on the base URL's port, which browsers resolve to this machine with no set-up; unset
 * otherwise: off (a public deployment needs wildcard DNS and a certificate first: docs/operating.md, "Content
 * origins").
 */
function readContentOrigin(env: Env, host: string, baseUrl: string): string | undefined {
  const raw = env.HTMLDROP_CONTENT_ORIGIN?.trim();
  const base = new URL(baseUrl);
  if (raw === undefined || raw === '') {
    if (!isLoopbackHost(host) || !isLoopbackHost(base.hostname)) return undefined;
    return `${base.protocol}//{id}.localhost${base.port === '' ? '' : `:${base.port}`}`;
  }
  if (raw.toLowerCase() === 'off') return undefined;
  const template = raw.replace(/\/+$/, '');
  const shape = /^(https?):\/\/\{id\}\.([^/?#{}]+)$/.exec(template);
  let sample: URL | undefined;
  try {
    sample = shape === null ? undefined : new URL(template.replace('{id}', 'label'));
  } catch {
    sample = undefined;
  }
  if (shape === null || sample === undefined || sample.origin !== template.replace('{id}', 'label').toLowerCase()) {
    throw new ConfigError(
      `HTMLDROP_CONTENT_ORIGIN must be an origin whose host starts with {id}. (https://{id}.drops-usercontent.example) or off, got "${raw}"`,
    );
  }
  const suffix = sample.host.slice('label'.length);
  if (base.host.endsWith(suffix)) {
    throw new ConfigError(
      `HTMLDROP_CONTENT_ORIGIN: the service's own host ${base.host} would be a content host; use a separate domain`,
    );
  }
  // Drops under the service's own name could set cookies the service receives (Domain=<service host>).
  const domain = sample.hostname.slice('label.'.length);
  if (!isLoopbackHost(base.hostname) && (domain === base.hostname || domain.endsWith(`.${base.hostname}`))) {
    throw new ConfigError(
      `HTMLDROP_CONTENT_ORIGIN: drops under the service's own host ${base.hostname} could set its cookies; use a separate domain`,
    );
  }
  return template;
}

/** A signing secret from the environment: at least 32 characters (generate one with `openssl rand -base64 32`). */
function readSecret(env: Env, name: string): string | undefined {
  const value = env[name]?.trim() || undefined;
  if (value !== undefined && value.length < 32) {
    throw new ConfigError(`${name} must be at least 32 characters (openssl rand -base64 32 makes one)`);
  }
  return value;
}

/** Parses the environment into a frozen Config. Throws ConfigError with a one-line reason. */
export function loadConfig(env: Env = process.env): Config {
  const port = readInt(env, 'PORT', 8787, 0, 65_535);
  const host = env.HOST?.trim() || '127.0.0.1';
  const provider = (env.HTMLDROP_AUTH_PROVIDER?.trim() || 'local') as AuthProviderName;
  if (!['local', 'github', 'oidc'].includes(provider)) {
    throw new ConfigError(`HTMLDROP_AUTH_PROVIDER must be local, github or oidc, got "${provider}"`);
  }
  const databaseUrl = env.HTMLDROP_DATABASE_URL?.trim() || undefined;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('HTMLDROP_DATABASE_URL must start with postgres:// (leave it unset for embedded SQLite)');
  }
  const limits: Limits = Object.freeze({
    ...DEFAULT_LIMITS,
    maxWritesPerMinute: readInt(env, 'HTMLDROP_MAX_WRITES_PER_MINUTE', DEFAULT_LIMITS.maxWritesPerMinute, 1),
    maxWritesPerDay: readInt(env, 'HTMLDROP_MAX_WRITES_PER_DAY', DEFAULT_LIMITS.maxWritesPerDay, 1),
    maxDropsPerAccount: readInt(env, 'HTMLDROP_MAX_DROPS_PER_ACCOUNT', DEFAULT_LIMITS.maxDropsPerAccount, 1),
    maxVersionsPerDrop: readInt(env, 'HTMLDROP_MAX_VERSIONS_PER_DROP', DEFAULT_LIMITS.maxVersionsPerDrop, 1),
    maxBodyBytes: readInt(env, 'HTMLDROP_MAX_BODY_BYTES', DEFAULT_LIMITS.maxBodyBytes, 4 * 1_048_576),
    maxFilesPerVersion: readInt(env, 'HTMLDROP_MAX_FILES_PER_VERSION', DEFAULT_LIMITS.maxFilesPerVersion, 0, 10_000),
    // At least the HTML's own limit, so a version of HTML alone always fits.
    maxVersionBytes: readInt(
      env,
      'HTMLDROP_MAX_VERSION_BYTES',
      DEFAULT_LIMITS.maxVersionBytes,
      DEFAULT_LIMITS.maxHtmlBytes,
      1_073_741_824,
    ),
    maxImportBytes: readInt(env, 'HTMLDROP_MAX_IMPORT_BYTES', DEFAULT_LIMITS.maxImportBytes, 1_048_576),
    maxDropPasscodeAttemptsPerDay: readInt(
      env,
      'HTMLDROP_MAX_PASSCODE_GUESSES_PER_DAY',
      DEFAULT_LIMITS.maxDropPasscodeAttemptsPerDay,
      1,
    ),
    maxAuthStartsPerMinute: readInt(
      env,
      'HTMLDROP_MAX_AUTH_STARTS_PER_MINUTE',
      DEFAULT_LIMITS.maxAuthStartsPerMinute,
      1,
    ),
  });
  const baseUrl = readBaseUrl(env, port);
  return Object.freeze({
    port,
    host,
    baseUrl,
    dataDir: path.resolve(env.HTMLDROP_DATA_DIR?.trim() || './data'),
    databaseUrl,
    redisUrl: env.HTMLDROP_REDIS_URL?.trim() || undefined,
    redisPrefix: env.HTMLDROP_REDIS_PREFIX?.trim() || 'htmldrop:',
    authProvider: provider,
    identity: readIdentity(env, provider),
    allowLocalAuth: readFlag(env, 'HTMLDROP_ALLOW_LOCAL_AUTH'),
    limits,
    flushIntervalMs: readInt(env, 'HTMLDROP_FLUSH_INTERVAL_MS', 5_000, 10),
    capabilityTtlMs: readInt(env, 'HTMLDROP_CAPABILITY_TTL_SECONDS', 12 * 3600, 60) * 1000,
    rawCacheBytes: readInt(env, 'HTMLDROP_RAW_CACHE_MB', 256, 1, 65_536) * 1_048_576,
    embedOrigins: readEmbedOrigins(env),
    contentOrigin: readContentOrigin(env, host, baseUrl),
    trustProxy: readTrustProxy(env),
    logLevel: env.HTMLDROP_LOG_LEVEL?.trim() || 'info',
    cacheMaxAgeWithoutBusMs: readInt(env, 'HTMLDROP_CACHE_MAX_AGE_WITHOUT_BUS_MS', 2000, 1, 60_000),
    headersTimeoutMs: readInt(env, 'HTMLDROP_HEADERS_TIMEOUT_SECONDS', 20, 1, 600) * 1000,
    requestTimeoutMs: readInt(env, 'HTMLDROP_REQUEST_TIMEOUT_SECONDS', 120, 1, 3600) * 1000,
    // Behind a trusted proxy every connection comes from the proxy: no cap unless one is set.
    maxConnectionsPerAddress: readInt(
      env,
      'HTMLDROP_MAX_CONNECTIONS_PER_ADDRESS',
      env.HTMLDROP_TRUST_PROXY?.trim() ? 0 : 256,
      0,
    ),
    maxEventStreams: readInt(env, 'HTMLDROP_MAX_EVENT_STREAMS', 10_000, 1),
    webhookAllowPrivate: readFlag(env, 'HTMLDROP_WEBHOOK_ALLOW_PRIVATE'),
    secret: readSecret(env, 'HTMLDROP_SECRET'),
    previousSecret: readSecret(env, 'HTMLDROP_SECRET_PREVIOUS'),
    scan: readScanMode(env),
    chromium: readChromium(env),
  });
}
