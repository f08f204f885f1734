/**
 * What a visitor of /p/<slug> may see (spec 4.6; docs/api.md 4.6): which drop and version a URL names, whether a
 * drop opens for this visitor, and the viewer page's content. decideAccess() is THE access decision, for every path
 * to a drop's bytes (viewer, raw, readable copy, content origin, files, comments): who can see the drop
 * (docs/api.md, "Who can see a drop": visibility, the `allow` list, recipient links) and then its passcode (a
 * capability for its current passcode, or its owner's token). Every refusal it makes goes through refuse(), which
 * writes the access log. The HTTP layer only adapts these answers; the bytes, variants and cache belong to serve/.
 */

import { recordAccess } from './access-log.js';
import { authenticate, type TokenUseRecorder } from './accounts.js';
import type { Capabilities } from './capability.js';
import type { Clock } from './clock.js';
import { type EventSink, reportAccessRefused } from './events.js';
import { isLinkSecret, linkSecretHash, linkState } from './recipient-links.js';
import type { AccessStore, AccessWho, AccountStore, DropStore, RecipientLink, RefusalReason } from './store.js';
import {
  type DropRecord,
  isExpired,
  type VersionContent,
  type VersionFileContent,
  type VersionInfo,
  type VersionRecord,
} from './types.js';
import { isOnList, type Person } from './visibility.js';

export interface PublicViewDeps {
  readonly store: DropStore &
    Pick<AccountStore, 'findActiveToken'> &
    Pick<AccessStore, 'findLinkBySecretHash' | 'findLink' | 'countLinkView' | 'appendAccess'>;
  readonly clock: Clock;
  readonly tokenUses: TokenUseRecorder;
  readonly capabilities: Capabilities;
  /** Where `access.refused` goes (domain/events.ts); none: nowhere. */
  readonly events?: EventSink;
}

/**
 * What a visitor presents, each optional: a capability (the cookie, or the raw frame's token), a frame ticket (on
 * a content host only) and an Authorization header.
 */
export interface VisitorAccess {
  readonly capability: string | undefined;
  readonly ticket?: string | undefined;
  readonly authorization: string | undefined;
  /** The person signed in to the service's pages (its session); never known on a content host. */
  readonly person?: Person | undefined;
  /** A recipient link's secret (`?k=`, or the cookie the viewer set for it). */
  readonly link?: string | undefined;
}

/** Who a drop was opened for, and how (a link is counted and logged as itself). */
export interface Admitted {
  readonly who: AccessWho;
  /** The recipient link that opened it, if one did. */
  readonly linkId?: string | undefined;
  /** The grant to put in a frame's URL so that the frame opens for the same visitor (issueView), if one is needed. */
  readonly viewGrant?: string | undefined;
}

/** The outcome of decideAccess(). `locked`: the passcode gate (not a refusal: the visitor is asked). */
export type AccessDecision =
  | ({ readonly kind: 'open' } & Admitted)
  | { readonly kind: 'locked'; readonly who: AccessWho }
  | { readonly kind: 'refused'; readonly reason: RefusalReason; readonly who: AccessWho };

/** What the decision needs of a drop (a DropRecord, or a cached raw entry). */
export type GatedDrop = Pick<
  DropRecord,
  'slug' | 'accountId' | 'locked' | 'passcodeGeneration' | 'visibility' | 'allow'
>;

const ANONYMOUS: AccessWho = { kind: 'anonymous', name: null };
const personWho = (person: Person): AccessWho => ({ kind: 'person', name: person.login });
const linkWho = (link: Pick<RecipientLink, 'label'>): AccessWho => ({ kind: 'link', name: link.label });

/** A view grant's `who` (capability.ts): a link by id, or a person as the viewer knew them. */
type GrantWho = { readonly k: string } | { readonly a: string; readonly l: string; readonly e?: string };

function parseGrantWho(value: string | undefined): GrantWho | undefined {
  if (value === undefined) return undefined;
  try {
    const who = JSON.parse(value) as Partial<{ k: unknown; a: unknown; l: unknown; e: unknown }>;
    if (typeof who.k === 'string') return { k: who.k };
    if (typeof who.a === 'string' && typeof who.l === 'string') {
      return { a: who.a, l: who.l, ...(typeof who.e === 'string' ? { e: who.e } : {}) };
    }
  } catch {
    // not a grant of ours
  }
  return undefined;
}

/**
 * The one place a visitor is refused (docs/api.md, "Who can see a drop"): the refusal is written to the drop's
 * access log, whichever path it came from. (Anything else told about refusals belongs here too.)
 */
async function refuse(
  deps: PublicViewDeps,
  drop: Pick<GatedDrop, 'slug'>,
  reason: RefusalReason,
  who: AccessWho,
  version: number | null,
): Promise<AccessDecision> {
  await recordAccess(deps, drop.slug, { outcome: 'refused', reason, who, version });
  // The wrong passcode's event is the gate's own (domain/viewing.ts), which knows the drop's owner.
  if (deps.events !== undefined && 'accountId' in drop) {
    await reportAccessRefused(deps.events, drop as GatedDrop, reason, deps.clock.now(), who);
  }
  return { kind: 'refused', reason, who };
}

/** The wrong passcode of the gate (domain/viewing.ts), logged as a refusal like every other. */
export async function refuseWrongPasscode(
  deps: PublicViewDeps,
  slug: string,
  access: Pick<VisitorAccess, 'person'>,
  version: number | null,
): Promise<void> {
  await refuse(
    deps,
    { slug },
    'wrong_passcode',
    access.person === undefined ? ANONYMOUS : personWho(access.person),
    version,
  );
}

/** A link's row for a secret or an id, with what it is now; undefined for none of this drop. */
async function linkFor(deps: PublicViewDeps, slug: string, by: { secret: string } | { id: string }) {
  const link =
    'secret' in by
      ? isLinkSecret(by.secret)
        ? await deps.store.findLinkBySecretHash(slug, linkSecretHash(by.secret))
        : undefined
      : await deps.store.findLink(slug, by.id);
  return link === undefined ? undefined : { link, state: linkState(link, deps.clock.now()) };
}

/** Whether the request carries the bearer token of the drop's owner. */
async function ownerToken(deps: PublicViewDeps, drop: Pick<GatedDrop, 'accountId'>, access: VisitorAccess) {
  if (access.authorization === undefined) return false;
  try {
    const caller = await authenticate(deps.store, deps.clock, deps.tokenUses, access.authorization);
    return caller.account.id === drop.accountId;
  } catch {
    return false;
  }
}

/**
 * Whether this visitor may see the drop, and as whom (docs/api.md, "Who can see a drop"). In order:
 * 1. a valid recipient link (its secret, or a view grant naming it) opens the drop whatever its visibility and
 *    passcode; a revoked or expired one opens nothing, and is the reason given if nothing else opens the drop;
 * 2. who can see it: anyone (`public`), anyone signed in (`signed_in`), the owner and those on `allow` (`people`);
 *    the owner (session or token) always; a person named by a view grant is checked against the list as it is now;
 * 3. the passcode on top: a capability for its current generation, the owner's token, or a view grant (the viewer
 *    issued it past the gate).
 * `version`: what the request asked for, for the log (null: the latest).
 */
export async function decideAccess(
  deps: PublicViewDeps,
  drop: GatedDrop,
  access: VisitorAccess,
  version: number | null = null,
): Promise<AccessDecision> {
  const grant = access.ticket ?? access.capability;
  const grantWho = parseGrantWho(deps.capabilities.verifyView(grant, drop.slug, drop.passcodeGeneration));
  let linkRefusal: RefusalReason | undefined;
  let linkRefused: AccessWho | undefined;
  const byLink =
    access.link !== undefined
      ? { secret: access.link }
      : grantWho !== undefined && 'k' in grantWho
        ? { id: grantWho.k }
        : undefined;
  if (byLink !== undefined) {
    const found = await linkFor(deps, drop.slug, byLink);
    if (found?.state === 'valid') {
      const viewGrant = deps.capabilities.issueView(
        drop.slug,
        drop.passcodeGeneration,
        JSON.stringify({ k: found.link.id }),
      );
      return { kind: 'open', who: linkWho(found.link), linkId: found.link.id, viewGrant };
    }
    if (found !== undefined) {
      linkRefusal = found.state === 'revoked' ? 'link_revoked' : 'link_expired';
      linkRefused = linkWho(found.link);
    }
  }
  const granted = grantWho !== undefined && 'a' in grantWho;
  const person: Person | undefined = granted
    ? { accountId: grantWho.a, login: grantWho.l, email: grantWho.e }
    : access.person;
  const sessionOwner = person !== undefined && person.accountId === drop.accountId;
  // The token is looked at only where it can change the answer (a gated drop), never for a public one.
  const tokenOwner =
    !sessionOwner && (drop.visibility !== 'public' || drop.locked) && (await ownerToken(deps, drop, access));
  const owner = sessionOwner || tokenOwner;
  const who: AccessWho = owner
    ? { kind: 'owner', name: person?.login ?? null }
    : person === undefined
      ? ANONYMOUS
      : personWho(person);
  if (!owner && drop.visibility !== 'public') {
    const listed = person !== undefined && (drop.visibility === 'signed_in' || isOnList(drop.allow, person));
    if (!listed && linkRefusal !== undefined && linkRefused !== undefined) {
      return refuse(deps, drop, linkRefusal, linkRefused, version);
    }
    if (person === undefined) return refuse(deps, drop, 'sign_in_required', who, version);
    if (!listed) return refuse(deps, drop, 'not_on_list', who, version);
  }
  if (drop.locked && !granted && !tokenOwner && !holdsCapability(deps, drop.slug, drop.passcodeGeneration, access)) {
    return { kind: 'locked', who };
  }
  if (drop.visibility === 'public' || person === undefined) return { kind: 'open', who };
  const grantFor = JSON.stringify({
    a: person.accountId,
    l: person.login,
    ...(person.email === undefined ? {} : { e: person.email }),
  });
  return { kind: 'open', who, viewGrant: deps.capabilities.issueView(drop.slug, drop.passcodeGeneration, grantFor) };
}

/**
 * A viewer render (docs/api.md, "Read receipts" and "Who can see a drop"): logged as `viewed`, and counted for the
 * link that opened it.
 */
export async function recordView(
  deps: PublicViewDeps,
  slug: string,
  version: number,
  admitted: Admitted,
): Promise<void> {
  await recordAccess(deps, slug, { outcome: 'viewed', reason: null, who: admitted.who, version });
  if (admitted.linkId !== undefined) await deps.store.countLinkView(admitted.linkId, deps.clock.now());
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
  return ownerToken(deps, drop, access);
}

/** The viewer page for `/p/<slug>[?v=<n>]`: what it shows, or why it shows something else. */
export type ViewerPage =
  | { readonly kind: 'not_found' }
  /** The drop's expiry has passed (docs/api.md, "Expiry"): gone, whether or not the purge has deleted it yet. */
  | { readonly kind: 'expired' }
  /** Locked, and the visitor holds no capability: the passcode gate, and not a byte of the drop. */
  | { readonly kind: 'locked' }
  /** Not for this visitor (docs/api.md, "Who can see a drop"): a sign-in page or "not on the list", nothing more. */
  | { readonly kind: 'refused'; readonly reason: RefusalReason; readonly who: AccessWho }
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
      /** Who it was shown to, for the access log and the link's views (recordView). */
      readonly admitted: Admitted;
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
  const decision = await decideAccess(deps, drop, access, requested ?? null);
  if (decision.kind === 'refused') return decision;
  if (decision.kind === 'locked') return { kind: 'locked' };
  if (requested === null) return { kind: 'version_not_found', latestVersion: drop.latestVersion };
  const number = requested ?? drop.latestVersion;
  const [shown, versions] = await Promise.all([deps.store.getVersion(slug, number), deps.store.listVersions(slug)]);
  if (shown === undefined) return { kind: 'version_not_found', latestVersion: drop.latestVersion };
  const grant = frameOf(drop) === 'own-origin' ? deps.capabilities.issueTicket : deps.capabilities.issue;
  // A drop that is not public (or opened by a link) gets the view grant, which the frame's answers check again.
  const needsViewGrant = drop.visibility !== 'public' || (decision.linkId !== undefined && drop.locked);
  const frameCapability = needsViewGrant
    ? decision.viewGrant
    : drop.locked
      ? grant(slug, drop.passcodeGeneration).token
      : undefined;
  return { kind: 'visible', drop, shown, versions, frameCapability, admitted: decision };
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
