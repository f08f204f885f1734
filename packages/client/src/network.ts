/**
 * A drop's network policy as people write it (docs/api.md, "Each drop on its own origin"): `open` (the default: the
 * drop may load anything), `none` (it may load nothing from the network and post no forms), or 1 to 10 origins it
 * may load from (`https://cdn.jsdelivr.net,https://unpkg.com`). The service enforces it with a Content-Security-Policy
 * and refuses a malformed value with 400 `invalid_arg`; parseNetwork and checkNetwork refuse the same mistakes
 * before anything is sent, with a message that says how to write the origin.
 */
import { HtmlDropError } from './errors.js';
import type { NetworkPolicy } from './types.js';

/** The most origins a policy may list. */
export const MAX_NETWORK_ORIGINS = 10;

const FORMS = 'open, none, or origins separated by commas such as https://cdn.jsdelivr.net,https://unpkg.com';

/** A DNS name (labels of letters, digits and inner hyphens), an IPv4 address, or an IPv6 address in brackets. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/;

function invalid(text: string, why: string, flag: string): HtmlDropError {
  return new HtmlDropError('usage', `${flag} "${text}": ${why} (expected ${FORMS}).`);
}

/**
 * One origin, checked and in canonical form (`URL.origin`: host in lower case, a default port dropped); `usage` for
 * anything but `http(s)://host[:port]`: another scheme, a user name, a path, a trailing slash, a query, a fragment,
 * a wildcard.
 */
function checkOrigin(text: string, flag: string): string {
  const value = text.trim();
  if (value === '') throw invalid(text, 'an empty origin', flag);
  if (!/^https?:\/\//i.test(value)) {
    const guess = /^[a-z0-9.-]+(?::\d+)?$/i.test(value) ? `; write https://${value.toLowerCase()}` : '';
    throw invalid(text, `an origin starts with http:// or https://${guess}`, flag);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(text, 'not a URL', flag);
  }
  const write = `write ${url.origin}`;
  if (url.username !== '' || url.password !== '') throw invalid(text, `no user name or password; ${write}`, flag);
  if (/[?#]/.test(value)) throw invalid(text, `an origin has no query or fragment; ${write}`, flag);
  if (url.pathname !== '/') throw invalid(text, `an origin has no path (${url.pathname}); ${write}`, flag);
  if (value.endsWith('/')) throw invalid(text, `an origin has no trailing slash; ${write}`, flag);
  if (!HOST.test(url.hostname)) {
    throw invalid(text, `"${url.hostname}" is not a host name (wildcards are not supported: list each host)`, flag);
  }
  return url.origin;
}

/**
 * A policy given as data (the SDK's and the MCP tools' `network`), checked: `open` and `none` as they are, a list of
 * origins each checked and in canonical form, without repeats. `usage` for an empty list, more than
 * MAX_NETWORK_ORIGINS origins, or a malformed origin.
 * @param flag how the caller names the input in messages (`--network`, `network`)
 */
export function checkNetwork(policy: NetworkPolicy, flag = 'network'): NetworkPolicy {
  if (policy === 'open' || policy === 'none') return policy;
  if (typeof policy === 'string') throw invalid(policy, 'not a policy', flag);
  if (policy.length === 0) throw invalid('', 'no origins: to allow none, give none', flag);
  const origins = [...new Set(policy.map((origin) => checkOrigin(origin, flag)))];
  if (origins.length > MAX_NETWORK_ORIGINS) {
    throw invalid(policy.join(','), `at most ${MAX_NETWORK_ORIGINS} origins (got ${origins.length})`, flag);
  }
  return origins;
}

/**
 * The policy a text names: `open` or `none` (any case), or origins separated by commas; `usage` for anything else
 * (see checkNetwork).
 * @param flag how the caller names the input in messages (`--network`, `network`)
 */
export function parseNetwork(text: string, flag = '--network'): NetworkPolicy {
  const value = text.trim();
  const word = value.toLowerCase();
  if (word === 'open' || word === 'none') return word;
  const parts = value.split(',').map((part) => part.trim());
  if (parts.some((part) => part.toLowerCase() === 'open' || part.toLowerCase() === 'none')) {
    throw invalid(text, 'open and none stand alone, not in a list of origins', flag);
  }
  if (parts.some((part) => part === '')) throw invalid(text, 'an empty origin', flag);
  return checkNetwork(parts, flag);
}

/** Whether two policies allow the same (the same word, or the same origins in any order). */
export function sameNetwork(a: NetworkPolicy, b: NetworkPolicy): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  return a.length === b.length && a.every((origin) => b.includes(origin));
}

/** A policy for people: `open`, `none (no network access)`, or `only https://a, https://b`. */
export function describeNetwork(policy: NetworkPolicy): string {
  if (policy === 'open') return 'open';
  if (policy === 'none') return 'none (no network access)';
  if (typeof policy === 'string') return policy;
  return `only ${policy.join(', ')}`;
}
