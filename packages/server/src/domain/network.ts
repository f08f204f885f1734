/**
 * A drop's network policy (docs/api.md, "Each drop on its own origin"): `open` (the default), `none`, or a list of
 * origins the drop may load from. The owner sets it; the service enforces it with a Content-Security-Policy on the
 * drop's documents, on its own origin and on the raw path alike.
 */
import { ApiError } from '../errors.js';

export type NetworkPolicy = 'open' | 'none' | readonly string[];

/** At most this many origins in an allow-list: a policy for a few CDNs, not a crawl list. */
export const MAX_NETWORK_ORIGINS = 10;

const invalid = (message: string, extra: Record<string, unknown> = {}) =>
  new ApiError('invalid_arg', { message, details: { field: 'network', ...extra } });

/**
 * One allow-list entry as an origin (`https://cdn.example.com`, an optional port): anything else (a path, a query,
 * a user name, another scheme) is refused rather than trimmed, so what the owner reads back is what applies.
 */
function checkedOrigin(item: unknown): string {
  if (typeof item !== 'string' || item.length > 200)
    throw invalid('network origins are strings of at most 200 characters.');
  let url: URL;
  try {
    url = new URL(item);
  } catch {
    throw invalid(`network: "${item}" is not an origin such as https://cdn.jsdelivr.net.`, { value: item });
  }
  // Exact origins only, of host-name characters: a wildcard would be a CSP pattern the owner may not mean, and `;`,
  // `,` or quotes (which the URL parser lets through) would add directives or policies to the header.
  const plainHost = /^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/.test(url.hostname);
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== item || !plainHost) {
    throw invalid(`network: "${item}" is not an origin such as https://cdn.jsdelivr.net (scheme and host, no path).`, {
      value: item,
    });
  }
  return url.origin;
}

/** The policy as given in a request body; undefined leaves it unchanged. Throws 400 invalid_arg. */
export function checkedNetwork(value: unknown): NetworkPolicy | undefined {
  if (value === undefined) return undefined;
  if (value === 'open' || value === 'none') return value;
  if (!Array.isArray(value)) throw invalid('network must be "open", "none" or a list of origins.');
  if (value.length === 0 || value.length > MAX_NETWORK_ORIGINS) {
    throw invalid(`network lists 1 to ${MAX_NETWORK_ORIGINS} origins ("none" allows none).`, {
      max_items: MAX_NETWORK_ORIGINS,
    });
  }
  return Object.freeze([...new Set(value.map(checkedOrigin))]);
}

/**
 * The CSP directives that enforce a policy, or undefined for `open`. Inline and `data:`/`blob:` content stays
 * allowed (a self-contained document is made of them); every other load, fetch, WebSocket and frame is refused
 * unless its origin is listed, and form posts are refused whatever the list (it names CDNs to load from, not places
 * to send to). `'self'` is not listed: on the raw path it would be the service's origin. `own`: where a version with
 * files loads them from (docs/api.md, "Many files in one drop"), `'self'` on the drop's own origin or its raw folder.
 */
export function networkDirectives(policy: NetworkPolicy, own?: string): string | undefined {
  if (policy === 'open') return undefined;
  const sources = [...(own === undefined ? [] : [own]), ...(policy === 'none' ? [] : policy)];
  return `default-src data: blob: 'unsafe-inline' 'unsafe-eval'${sources.map((s) => ` ${s}`).join('')}; form-action 'none'`;
}
