/**
 * The device-code flow (spec 3.1, 5; docs/api.md 3.1) as one state machine. Stored states are
 * pending, approved, denied and claimed; what a poll reports is derived from them and the clock:
 *
 *   pending  --human approves-->  approved  --first poll (atomic claim, mints the token)-->  claimed
 *   pending  --human denies or 600 s pass-->  expired        unknown or purged poll token -->  not_found
 *
 * Every check runs before the single atomic claim, so exactly one poller ever receives the token. Poll tokens are
 * stored as SHA-256 hashes; the API token does not exist until the claim mints it, so no secret is stored in
 * plaintext at any point.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from './clock.js';
import { newApiToken, type RandomInt, randomBase62, secureRandomInt, sha256Hex, tokenIdFromHash } from './ids.js';
import type { DeviceRequestStore } from './store.js';
import type { DeviceRequest } from './types.js';

/** Spec 3.1: a verification request lives 600 s. */
export const DEVICE_TTL_MS = 600_000;
/** Spec 8: default poll interval. */
export const POLL_INTERVAL_SECONDS = 2;
/** docs/api.md 3.1: an unknown poll token reads not_found, also once purged 24 h after expiry. */
export const DEVICE_RETENTION_MS = 24 * 3_600_000;
export const MAX_LABEL_CHARS = 64;

/** docs/api.md, "Identifiers": 8 characters from this alphabet (no 0/O, 1/I), shown as XXXX-XXXX. */
export const USER_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export type PollStatus = 'pending' | 'verified' | 'claimed' | 'expired' | 'not_found';

export interface DeviceFlowDeps {
  readonly store: DeviceRequestStore;
  readonly clock: Clock;
  readonly random?: RandomInt;
}

export interface StartedFlow {
  readonly code: string;
  readonly pollToken: string;
  readonly expiresIn: number;
  readonly pollInterval: number;
}

/** `ABCD-EFGH` for display. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** Normalises what a human typed (case, dashes, spaces); undefined when it cannot be a user code. */
export function normalizeUserCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]+/g, '');
  if (code.length !== 8) return undefined;
  for (const c of code) if (!USER_CODE_ALPHABET.includes(c)) return undefined;
  return code;
}

function newUserCode(random: RandomInt): string {
  let code = '';
  for (let i = 0; i < 8; i++) code += USER_CODE_ALPHABET[random(USER_CODE_ALPHABET.length)];
  return code;
}

/** Begins a flow. The label is cut to 64 characters. */
export async function startDeviceFlow(deps: DeviceFlowDeps, label: string | undefined): Promise<StartedFlow> {
  const random = deps.random ?? secureRandomInt;
  const now = deps.clock.now();
  const cut = label === undefined ? null : [...label.trim()].slice(0, MAX_LABEL_CHARS).join('') || null;
  // 256 bits of randomness, base64url.
  const pollToken = randomBytes(32).toString('base64url');
  for (let attempt = 0; attempt < 10; attempt++) {
    const userCode = newUserCode(random);
    const stored = await deps.store.createDeviceRequest({
      id: randomBase62(16, random),
      pollHash: sha256Hex(pollToken),
      userCode,
      label: cut,
      now,
      expiresAt: now + DEVICE_TTL_MS,
    });
    if (stored) {
      return {
        code: formatUserCode(userCode),
        pollToken,
        expiresIn: DEVICE_TTL_MS / 1000,
        pollInterval: POLL_INTERVAL_SECONDS,
      };
    }
  }
  throw new Error('could not allocate a unique user code');
}

/** The status a request shows at `now`, before any claim. */
export function statusOf(
  request: DeviceRequest | undefined,
  now: number,
): Exclude<PollStatus, 'verified'> | 'approved' {
  if (request === undefined) return 'not_found';
  switch (request.state) {
    case 'claimed':
      return 'claimed';
    case 'denied':
      return 'expired';
    case 'approved':
      return 'approved';
    case 'pending':
      return now >= request.expiresAt ? 'expired' : 'pending';
  }
}

export type PollResult =
  | { readonly status: Exclude<PollStatus, 'verified'> }
  | { readonly status: 'verified'; readonly apiToken: string; readonly userId: string };

/** One poll. The first poll after approval claims the request and receives the new token; later ones read claimed. */
export async function pollDeviceFlow(deps: DeviceFlowDeps, pollToken: string): Promise<PollResult> {
  const pollHash = sha256Hex(pollToken);
  const status = statusOf(await deps.store.findDeviceRequestByPollHash(pollHash), deps.clock.now());
  if (status !== 'approved') return { status };
  const apiToken = newApiToken(deps.random);
  const hash = sha256Hex(apiToken);
  const claimed = await deps.store.claimDeviceRequest(pollHash, { id: tokenIdFromHash(hash), hash }, deps.clock.now());
  if (claimed === undefined) return { status: 'claimed' };
  return { status: 'verified', apiToken, userId: claimed.accountId };
}

export type Lookup =
  | { readonly kind: 'invalid' }
  | { readonly kind: 'expired'; readonly request: DeviceRequest }
  | { readonly kind: 'done'; readonly request: DeviceRequest }
  | { readonly kind: 'pending'; readonly request: DeviceRequest };

/** What the verification page should show for a typed code. */
export async function lookupUserCode(deps: DeviceFlowDeps, input: string): Promise<Lookup> {
  const code = normalizeUserCode(input);
  if (code === undefined) return { kind: 'invalid' };
  const request = await deps.store.findDeviceRequestByCode(code);
  const status = statusOf(request, deps.clock.now());
  if (request === undefined || status === 'not_found') return { kind: 'invalid' };
  if (status === 'expired') return { kind: 'expired', request };
  if (status === 'pending') return { kind: 'pending', request };
  return { kind: 'done', request };
}

/** Approves a pending request for an account, or denies it. False when it was no longer pending. */
export function decideDeviceFlow(
  deps: DeviceFlowDeps,
  userCode: string,
  decision: { approve: string } | 'deny',
): Promise<boolean> {
  return deps.store.decideDeviceRequest(userCode, decision, deps.clock.now());
}
