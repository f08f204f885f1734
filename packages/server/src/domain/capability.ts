/**
 * Passcode capabilities: after a correct passcode the viewer hands out a signed, expiring grant for one drop and
 * one passcode generation (HMAC-SHA256 over slug, generation and expiry). Changing or removing the passcode bumps
 * the generation, so every older grant stops working. Format: `<expiry ms, base36>.<signature, base64url>`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from './clock.js';

export interface Capabilities {
  issue(slug: string, generation: number): { token: string; expiresAt: number };
  verify(token: string | undefined, slug: string, generation: number): boolean;
  /**
   * A frame ticket: the grant the viewer puts in the URL of a locked drop's frame on its own origin (docs/api.md,
   * "Each drop on its own origin"). Signed for another purpose, so it opens that frame and nothing else (neither
   * the viewer, which would hand out a new one, nor the raw path), and short-lived (FRAME_TICKET_TTL_MS).
   */
  issueTicket(slug: string, generation: number): { token: string; expiresAt: number };
  verifyTicket(token: string | undefined, slug: string, generation: number): boolean;
  /**
   * A view grant (docs/api.md, "Who can see a drop"): what the viewer puts in a frame's URL once it has decided that
   * the visitor may see a drop that is not public, naming who was let in (`who`: a person or a link, see
   * public-view.ts). Short-lived like a ticket; whoever checks it decides again for that `who`, so a revoked link or a
   * person taken off the list stops at once. Format: `v.<expiry ms, base36>.<who, base64url>.<signature>`.
   */
  issueView(slug: string, generation: number, who: string): string;
  /** The `who` of a genuine, unexpired view grant for this drop and passcode generation; else undefined. */
  verifyView(token: string | undefined, slug: string, generation: number): string | undefined;
  readonly ttlMs: number;
}

/**
 * How long a frame ticket works: the frame loads at once, and a copied frame address stops opening the drop soon
 * after. When a reload inside the frame finds it lapsed, the viewer fetches a new one (http/pages/content-host.ts).
 */
export const FRAME_TICKET_TTL_MS = 5 * 60_000;

/** Issues and verifies grants of one purpose; the purpose is part of what is signed. */
function grants(keys: readonly Buffer[], clock: Clock, purpose: string, ttlMs: number) {
  const sign = (key: Buffer, slug: string, generation: number, expiry: string) =>
    createHmac('sha256', key).update(`${purpose}\n${slug}\n${generation}\n${expiry}`).digest();
  const [signingKey] = keys;
  if (signingKey === undefined) throw new Error('createCapabilities needs at least one key');
  return {
    issue(slug: string, generation: number) {
      const expiresAt = clock.now() + ttlMs;
      const expiry = expiresAt.toString(36);
      return { token: `${expiry}.${sign(signingKey, slug, generation, expiry).toString('base64url')}`, expiresAt };
    },
    verify(token: string | undefined, slug: string, generation: number) {
      if (token === undefined || token.length > 600) return false;
      const dot = token.indexOf('.');
      if (dot <= 0) return false;
      const expiry = token.slice(0, dot);
      const expiresAt = Number.parseInt(expiry, 36);
      if (!Number.isSafeInteger(expiresAt) || expiresAt <= clock.now()) return false;
      const given = Buffer.from(token.slice(dot + 1), 'base64url');
      return keys.some((key) => {
        const expected = sign(key, slug, generation, expiry);
        return given.length === expected.length && timingSafeEqual(given, expected);
      });
    },
  };
}

/**
 * `keys[0]` signs; every key verifies (the others are previous keys kept through a rotation's grace period).
 */
export function createCapabilities(keys: readonly Buffer[], clock: Clock, ttlMs: number): Capabilities {
  const capabilities = grants(keys, clock, 'cap1', ttlMs);
  // Never longer than the capability the visitor holds (HTMLDROP_CAPABILITY_TTL_SECONDS may be shorter).
  const tickets = grants(keys, clock, 'ticket1', Math.min(FRAME_TICKET_TTL_MS, ttlMs));
  const views = grants(keys, clock, 'view1', Math.min(FRAME_TICKET_TTL_MS, ttlMs));
  return {
    ttlMs,
    issueView(slug, generation, who) {
      const encoded = Buffer.from(who).toString('base64url');
      const { token } = views.issue(`${slug}\n${encoded}`, generation);
      return `v.${token.slice(0, token.indexOf('.'))}.${encoded}${token.slice(token.indexOf('.'))}`;
    },
    verifyView(token, slug, generation) {
      if (token === undefined || token.length > 600 || !token.startsWith('v.')) return undefined;
      const [expiry, encoded, signature, extra] = token.slice(2).split('.');
      if (expiry === undefined || encoded === undefined || signature === undefined || extra !== undefined) {
        return undefined;
      }
      return views.verify(`${expiry}.${signature}`, `${slug}\n${encoded}`, generation)
        ? Buffer.from(encoded, 'base64url').toString('utf8')
        : undefined;
    },
    issue: capabilities.issue,
    verify: capabilities.verify,
    issueTicket: tickets.issue,
    verifyTicket: tickets.verify,
  };
}
