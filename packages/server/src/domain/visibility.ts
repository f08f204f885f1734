/**
 * Who can see a drop (docs/api.md, "Who can see a drop"): its `visibility` and `allow` list, checked when the owner
 * sets them, and whether a signed-in person is on the list. The decision for a visitor, which also weighs links,
 * passcodes and the owner, is made in one place: decideAccess() in public-view.ts.
 */
import { ApiError } from '../errors.js';
import type { DropRecord, Visibility } from './types.js';

export const VISIBILITIES: readonly Visibility[] = ['public', 'signed_in', 'people'];

/** At most this many entries in an `allow` list. */
export const MAX_ALLOW_ENTRIES = 100;

/** A provider username: the characters GitHub, OIDC `preferred_username`s and the local provider use. */
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}$/;
/** A domain name of at least two labels. */
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
/** An address: a plain local part (no quotes, no spaces) at a domain. */
const LOCAL_PART = /^[a-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}$/;

const invalid = (field: string, message: string, extra: Record<string, unknown> = {}) =>
  new ApiError('invalid_arg', { message, details: { field, ...extra } });

/** `visibility` of a request body; undefined leaves it unchanged. Throws 400 invalid_arg. */
export function checkedVisibility(value: unknown): Visibility | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && (VISIBILITIES as readonly string[]).includes(value)) return value as Visibility;
  throw invalid('visibility', 'visibility must be "public", "signed_in" or "people".');
}

/**
 * One `allow` entry, as it is kept: an email address or `@domain` lowercased (addresses are compared without case),
 * a username as given (compared without case too).
 */
function checkedEntry(item: unknown): string {
  if (typeof item !== 'string' || item.length === 0 || item.length > 254) {
    throw invalid('allow', 'allow entries are non-empty strings of at most 254 characters.');
  }
  const entry = item.trim();
  const at = entry.lastIndexOf('@');
  if (at === 0 && DOMAIN.test(entry.slice(1).toLowerCase())) return entry.toLowerCase();
  if (at > 0) {
    const lower = entry.toLowerCase();
    if (LOCAL_PART.test(lower.slice(0, at)) && DOMAIN.test(lower.slice(at + 1))) return lower;
  } else if (USERNAME.test(entry)) return entry;
  throw invalid('allow', `allow: "${item.slice(0, 100)}" is not a username, an email address or @domain.`, {
    value: item.slice(0, 100),
  });
}

/** The `allow` list of a request body, without repeats; undefined leaves it unchanged. Throws 400 invalid_arg. */
export function checkedAllow(value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw invalid('allow', 'allow must be a list of usernames, email addresses or @domain.');
  if (value.length > MAX_ALLOW_ENTRIES) {
    throw invalid('allow', `allow takes at most ${MAX_ALLOW_ENTRIES} entries.`, { max_items: MAX_ALLOW_ENTRIES });
  }
  const seen = new Map<string, string>();
  for (const item of value) {
    const entry = checkedEntry(item);
    if (!seen.has(entry.toLowerCase())) seen.set(entry.toLowerCase(), entry);
  }
  return Object.freeze([...seen.values()]);
}

/** A signed-in person as the identity provider proved them (docs/operating.md, "Who can see a drop"). */
export interface Person {
  readonly accountId: string;
  /** The provider username. */
  readonly login: string;
  /** A verified email address, lowercase; undefined when the provider proves none. */
  readonly email?: string | undefined;
}

/**
 * Whether `person` is on the drop's list: a username entry names their provider username (without case); an
 * address names their verified email; `@domain` takes any verified email at that domain (not its subdomains).
 */
export function isOnList(allow: readonly string[], person: Person): boolean {
  const login = person.login.toLowerCase();
  const email = person.email?.toLowerCase();
  const domain = email === undefined ? undefined : `@${email.slice(email.lastIndexOf('@') + 1)}`;
  return allow.some((entry) => {
    const lower = entry.toLowerCase();
    if (lower.startsWith('@')) return lower === domain;
    if (lower.includes('@')) return lower === email;
    return lower === login;
  });
}

/** Whether a drop is shown to anyone with its URL (the spec's behaviour), so shared caches may keep its answers. */
export const isPublic = (drop: Pick<DropRecord, 'visibility'>): boolean => drop.visibility === 'public';
