/**
 * Recipient links (docs/api.md, "Who can see a drop"): a secret URL the owner sends to one person, which opens the
 * drop whatever its visibility and passcode, until it expires or the owner revokes it. The secret is shown once, in
 * the answer that creates the link, and kept only as its SHA-256; each link counts the views it opened. Revoking
 * announces the drop as changed (DropChangeListener), so every instance drops what it cached of it at once; the
 * decision itself always reads the link's row (public-view.ts), so nothing cached can open a revoked link.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../errors.js';
import type { Clock } from './clock.js';
import type { DropChangeListener } from './drops.js';
import { getOwnedDrop } from './drops.js';
import { randomBase62 } from './ids.js';
import type { AccessStore, DropStore, RecipientLink } from './store.js';

export interface RecipientLinkDeps {
  readonly store: Pick<DropStore, 'findDrop'> & Pick<AccessStore, 'createLink' | 'listLinks' | 'revokeLink'>;
  readonly clock: Clock;
  readonly listener: DropChangeListener;
}

/** A link's expiry is at least this far ahead when it is made. */
export const MIN_LINK_LIFETIME_MS = 60_000;
/** At most this many links per drop, revoked ones included. */
export const MAX_LINKS_PER_DROP = 200;

/** The query parameter that carries a link's secret: `{base_url}/p/<slug>?k=<secret>`. */
export const LINK_PARAM = 'k';

/** SHA-256 of a secret, lowercase hex: what the store keeps and looks up. */
export const linkSecretHash = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** Whether a secret has the shape the service issues (so anything else is not even looked up). */
export const isLinkSecret = (value: unknown): value is string =>
  typeof value === 'string' && /^[A-Za-z0-9]{32}$/.test(value);

/** What a link is now: opens the drop, or why not. */
export function linkState(link: Pick<RecipientLink, 'revokedAt' | 'expiresAt'>, now: number) {
  if (link.revokedAt !== null) return 'revoked' as const;
  if (link.expiresAt !== null && link.expiresAt <= now) return 'expired' as const;
  return 'valid' as const;
}

const invalid = (field: string, message: string) => new ApiError('invalid_arg', { message, details: { field } });

/** Makes a link for the owner's drop: the link and its secret (shown in this answer only). */
export async function createLink(
  deps: RecipientLinkDeps & { readonly store: Pick<AccessStore, 'listLinks'> },
  accountId: string,
  slug: string,
  input: { readonly label?: unknown; readonly expires_at?: unknown },
): Promise<{ link: RecipientLink; secret: string }> {
  await getOwnedDrop(deps, accountId, slug);
  const label = typeof input.label === 'string' ? input.label.trim() : undefined;
  if (label === undefined || label.length === 0 || [...label].length > 100) {
    throw invalid('label', 'label is 1 to 100 characters: who the link is for.');
  }
  const now = deps.clock.now();
  let expiresAt: number | null = null;
  if (input.expires_at !== undefined && input.expires_at !== null) {
    const value = input.expires_at;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < now + MIN_LINK_LIFETIME_MS) {
      throw invalid('expires_at', 'expires_at is Unix ms at least 60 s from now, or absent for a link that lasts.');
    }
    expiresAt = value;
  }
  if ((await deps.store.listLinks(slug)).length >= MAX_LINKS_PER_DROP) {
    throw new ApiError('invalid_arg', {
      message: `A drop has at most ${MAX_LINKS_PER_DROP} links; this one has them all.`,
      details: { field: 'label', max_links: MAX_LINKS_PER_DROP },
    });
  }
  const secret = randomBase62(32);
  const link = { id: `l_${randomBase62(16)}`, slug, label, createdAt: now, expiresAt };
  await deps.store.createLink({ ...link, secretHash: linkSecretHash(secret) });
  return { link: { ...link, revokedAt: null, views: 0, lastViewedAt: null }, secret };
}

export async function listLinks(deps: RecipientLinkDeps, accountId: string, slug: string): Promise<RecipientLink[]> {
  await getOwnedDrop(deps, accountId, slug);
  return deps.store.listLinks(slug);
}

/** Revokes a link of the owner's drop: it stops opening the drop at once, on every instance. */
export async function revokeLink(deps: RecipientLinkDeps, accountId: string, slug: string, id: string): Promise<void> {
  await getOwnedDrop(deps, accountId, slug);
  if (!(await deps.store.revokeLink(slug, id, deps.clock.now()))) {
    throw new ApiError('not_found', { message: `No link ${id} on this drop.` });
  }
  await deps.listener.dropChanged(slug);
}
