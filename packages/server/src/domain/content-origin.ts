/**
 * Each drop on its own origin (docs/api.md, "Each drop on its own origin"; docs/decisions/0024-content-origins.md).
 * A content origin is a template such as `https://{id}.drops-usercontent.example`: `{id}` is the drop's content
 * label, a lowercase DNS label made for the drop when it is created and stored with it. It is never derived from the
 * slug: slugs are case-sensitive and host names are not, so `aB` and `Ab` would share an origin.
 */
import { type RandomInt, randomBase36 } from './ids.js';

/** Characters of a content label: 20 base36 characters, about 103 bits; DNS-safe and already lowercase. */
export const CONTENT_LABEL_LENGTH = 20;
const LABEL_RE = /^[0-9a-z]{20}$/;

export function newContentLabel(random?: RandomInt): string {
  return randomBase36(CONTENT_LABEL_LENGTH, random);
}

export function isContentLabel(value: string): boolean {
  return LABEL_RE.test(value);
}

/** The configured template, split once into what a request's Host is matched against. */
export interface ContentOrigins {
  /** The template as configured, e.g. `http://{id}.localhost:8787`. */
  readonly template: string;
  /** `http:` or `https:`. */
  readonly protocol: string;
  /** What follows the label in a Host header, lowercase: `.localhost:8787`. */
  readonly hostSuffix: string;
  /** The drop's origin (no trailing slash). */
  originOf(label: string): string;
  /**
   * What a request's Host names, read once: undefined for no content host (the service's), null for a host on the
   * content domain without a valid label (only the content route's 404 answers it), else the label.
   */
  classify(host: string | undefined): string | null | undefined;
  /** Whether a request's Host is on the content domain (whatever precedes the suffix): never the service's. */
  isContentHost(host: string | undefined): boolean;
  /**
   * The label a request's Host names, or undefined when it names no content host. Host names are compared
   * lowercase (RFC 9110 4.2.3); a label must have the exact stored shape.
   */
  labelOf(host: string | undefined): string | undefined;
}

/**
 * The spellings of one host name that browsers and clients may send besides the plain one: a trailing dot (the
 * absolute form) and the scheme's default port. Cheap tests first: this runs for every request on the service's host.
 */
function canonicalHost(lower: string, protocol: string): string {
  const last = lower.length - 1;
  if (lower.charCodeAt(last) !== 46 && !lower.includes('.:') && !lower.endsWith(':443') && !lower.endsWith(':80')) {
    return lower;
  }
  const colon = lower.lastIndexOf(':');
  const hasPort = colon > lower.lastIndexOf(']');
  let name = hasPort ? lower.slice(0, colon) : lower;
  let port = hasPort ? lower.slice(colon) : '';
  if (name.endsWith('.')) name = name.slice(0, -1);
  if ((protocol === 'https:' && port === ':443') || (protocol === 'http:' && port === ':80')) port = '';
  return name + port;
}

export function contentOrigins(template: string): ContentOrigins {
  const at = template.indexOf('://{id}.');
  if (at === -1) throw new Error(`content origin template must start with <scheme>://{id}.: ${template}`);
  const protocol = `${template.slice(0, at)}:`;
  const hostSuffix = template.slice(at + '://{id}'.length).toLowerCase();
  const prefix = `${template.slice(0, at)}://`;
  const seen = new Map<string, string | null | false>();
  return {
    template,
    protocol,
    hostSuffix,
    originOf: (label) => `${prefix}${label}${hostSuffix}`,
    classify,
    isContentHost: (host) => classify(host) !== undefined,
    labelOf: (host) => classify(host) ?? undefined,
  };

  function classify(host: string | undefined): string | null | undefined {
    if (host === undefined) return undefined;
    const known = seen.get(host);
    if (known !== undefined) return known === false ? undefined : known;
    const verdict = classifyOnce(host);
    if (seen.size >= SEEN_HOSTS) seen.clear();
    seen.set(host, verdict === undefined ? false : verdict);
    return verdict;
  }

  function classifyOnce(host: string): string | null | undefined {
    const canonical = canonicalHost(host.toLowerCase(), protocol);
    if (!canonical.endsWith(hostSuffix)) return undefined;
    if (canonical.length !== CONTENT_LABEL_LENGTH + hostSuffix.length) return null;
    const label = canonical.slice(0, CONTENT_LABEL_LENGTH);
    return isContentLabel(label) ? label : null;
  }
}

/**
 * Host headers already classified, as they were spelled, with their verdict (false for "not a content host"). The
 * same hosts come back request after request: a hit is one Map lookup instead of a lowercase copy, three suffix
 * tests and a regular expression, on the fast path's every request. Bounded: started again when full, so a client
 * sending made-up hosts costs it nothing but the work it saves.
 */
const SEEN_HOSTS = 4096;

/** The content hosts as served: the configured origins, and who may frame them (`contentFrameAncestors`). */
export interface ContentHosts {
  readonly origins: ContentOrigins;
  readonly frameAncestors: string;
}

/** The service's content hosts, or undefined when no content origin is configured. */
export function contentHostsOf(config: {
  readonly baseUrl: string;
  readonly contentOrigin: string | undefined;
  readonly embedOrigins: readonly string[];
}): ContentHosts | undefined {
  if (config.contentOrigin === undefined) return undefined;
  return {
    origins: contentOrigins(config.contentOrigin),
    frameAncestors: contentFrameAncestors(new URL(config.baseUrl).origin, config.embedOrigins),
  };
}

/**
 * Who may frame a drop's own origin: the service (its viewer) and the drop itself, plus the sites allowed to embed
 * the viewer (HTMLDROP_EMBED_ORIGINS), since a frame's every ancestor is checked. `*` when any site may embed it.
 */
export function contentFrameAncestors(serviceOrigin: string, embedOrigins: readonly string[]): string {
  return embedOrigins.includes('*') ? '*' : ["'self'", serviceOrigin, ...embedOrigins].join(' ');
}
