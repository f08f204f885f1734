/**
 * What a visitor of /p/<slug> may see (spec 4.6; docs/api.md 4.6): which drop and version a URL names, whether a
 * locked drop opens for this visitor (a capability for its current passcode, or its owner's token), and the viewer
 * page's content. The HTTP layer only adapts these answers; the bytes, variants and cache belong to serve/.
 */

import { authenticate, type TokenUseRecorder } from './accounts.js';
import type { Capabilities } from './capability.js';
import type { Clock } from './clock.js';
import type { AccountStore, DropStore } from './store.js';
import {
  type DropRecord,
  isExpired,
  type VersionContent,
  type VersionFileContent,
  type VersionInfo,
  type VersionRecord,
} from './types.js';

export interface PublicViewDeps {
  readonly store: DropStore & Pick<AccountStore, 'findActiveToken'>;
  readonly clock: Clock;
  readonly tokenUses: TokenUseRecorder;
  readonly capabilities: Capabilities;
}

/**
 * What a visitor presents, each optional: a capability (the cookie, or the raw frame's token), a frame ticket (on
 * a content host only) and an Authorization header.
 */
export interface VisitorAccess {
  readonly capability: string | undefined;
  readonly ticket?: string | undefined;
  readonly authorization: string | undefined;
}

/**
 * The stored document behind `/p/<slug>/raw[?v=<n>]` (by slug) or the drop's own origin (by content label), or
 * undefined when the drop or the version does not exist.
 */
export async function findRawDocument(
  store: DropStore,
  ref: { readonly slug: string } | { readonly label: string },
  version: number | undefined,
): Promise<{ drop: DropRecord; content: VersionContent } | undefined> {
  const drop = 'slug' in ref ? await store.findDrop(ref.slug) : await store.findDropByContentLabel(ref.label);
  if (drop === undefined) return undefined;
  const content = await store.getVersionContent(drop.slug, version);
  return content === undefined ? undefined : { drop, content };
}

/**
 * One file of a drop's version (docs/api.md, "Many files in one drop"), by slug or content label; the latest
 * version's when `version` is undefined; undefined when the drop, the version or the file does not exist.
 */
export async function findRawFile(
  store: DropStore,
  ref: { readonly slug: string } | { readonly label: string },
  version: number | undefined,
  path: string,
): Promise<{ drop: DropRecord; content: VersionFileContent } | undefined> {
  const drop = 'slug' in ref ? await store.findDrop(ref.slug) : await store.findDropByContentLabel(ref.label);
  if (drop === undefined) return undefined;
  const content = await store.getVersionFile(drop.slug, version, path);
  return content === undefined ? undefined : { drop, content };
}

/** Whether the visitor holds a valid capability for this drop's current passcode generation. */
export function holdsCapability(deps: PublicViewDeps, slug: string, generation: number, access: VisitorAccess) {
  return (
    deps.capabilities.verify(access.capability, slug, generation) ||
    (access.ticket !== undefined && deps.capabilities.verifyTicket(access.ticket, slug, generation))
  );
}

/**
 * Whether a locked drop opens for this visitor: a capability for its current passcode, or the bearer token of the
 * account that owns it (`ownerId`, known to the caller, so no second lookup of the drop).
 */
export async function opensLockedDrop(
  deps: PublicViewDeps,
  drop: { slug: string; passcodeGeneration: number; accountId: string },
  access: VisitorAccess,
): Promise<boolean> {
  if (holdsCapability(deps, drop.slug, drop.passcodeGeneration, access)) return true;
  if (access.authorization === undefined) return false;
  try {
    const caller = await authenticate(deps.store, deps.clock, deps.tokenUses, access.authorization);
    return caller.account.id === drop.accountId;
  } catch {
    return false;
  }
}

/** The viewer page for `/p/<slug>[?v=<n>]`: what it shows, or why it shows something else. */
export type ViewerPage =
  | { readonly kind: 'not_found' }
  /** The drop's expiry has passed (docs/api.md, "Expiry"): gone, whether or not the purge has deleted it yet. */
  | { readonly kind: 'expired' }
  /** Locked, and the visitor holds no capability: the passcode gate, and not a byte of the drop. */
  | { readonly kind: 'locked' }
  /** The drop exists and opens, but `?v=` names no version of it. */
  | { readonly kind: 'version_not_found'; readonly latestVersion: number }
  | {
      readonly kind: 'visible';
      readonly drop: DropRecord;
      readonly shown: VersionRecord;
      readonly versions: readonly VersionInfo[];
      /**
       * The grant in the iframe's URL (locked drops only), so the frame opens whatever the cookie policy: a frame
       * ticket when the frame is the drop's own origin, else a capability for the raw path.
       */
      readonly frameCapability: string | undefined;
    };

/**
 * `requested`: a version number, undefined for the latest, or null for a `?v=` that names no possible version (its
 * answer waits until the gate: a locked drop reveals nothing, not even which versions exist).
 */
export async function findViewerPage(
  deps: PublicViewDeps,
  slug: string,
  requested: number | null | undefined,
  access: VisitorAccess,
  frameOf: (drop: DropRecord) => 'own-origin' | 'raw',
): Promise<ViewerPage> {
  const drop = await deps.store.findDrop(slug);
  if (drop === undefined) return { kind: 'not_found' };
  if (isExpired(drop, deps.clock.now())) return { kind: 'expired' };
  if (drop.locked && !holdsCapability(deps, slug, drop.passcodeGeneration, access)) return { kind: 'locked' };
  if (requested === null) return { kind: 'version_not_found', latestVersion: drop.latestVersion };
  const number = requested ?? drop.latestVersion;
  const [shown, versions] = await Promise.all([deps.store.getVersion(slug, number), deps.store.listVersions(slug)]);
  if (shown === undefined) return { kind: 'version_not_found', latestVersion: drop.latestVersion };
  const grant = frameOf(drop) === 'own-origin' ? deps.capabilities.issueTicket : deps.capabilities.issue;
  const frameCapability = drop.locked ? grant(slug, drop.passcodeGeneration).token : undefined;
  return { kind: 'visible', drop, shown, versions, frameCapability };
}

/**
 * Whether a visitor may follow a drop's events (`/p/<slug>/events`, docs/api.md, "Live pages"): exactly when the
 * viewer page of its latest version would show it to them, so every rule of the viewer applies (the passcode, and any
 * rule added to `findViewerPage`). The answer carries the drop's latest version on success.
 */
export async function mayFollowDrop(
  deps: PublicViewDeps,
  slug: string,
  access: VisitorAccess,
): Promise<
  { readonly kind: 'open'; readonly latestVersion: number } | { readonly kind: Exclude<ViewerPage['kind'], 'visible'> }
> {
  const page = await findViewerPage(deps, slug, undefined, access, () => 'raw');
  return page.kind === 'visible' ? { kind: 'open', latestVersion: page.drop.latestVersion } : { kind: page.kind };
}
