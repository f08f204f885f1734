/**
 * Who a viewer is, for read receipts (docs/api.md, "Read receipts"), without storing who they are: a keyed hash of the
 * client address (grouped as per-address limits group it: IPv4, or the IPv6 /64; client-address.ts) and the
 * User-Agent, under a key that changes every UTC day. The same person on two days is two viewers, and nobody holding
 * the database (or the hashes) can test an address against them without the service's secret.
 */
import { createHmac } from 'node:crypto';
import { clientGroup } from './client-address.js';

/** Bytes of HMAC-SHA256 kept: 128 bits, 32 hex characters. */
const VIEWER_BYTES = 16;

/**
 * The viewer hash of a render at `at` (Unix ms) from `address` with `userAgent` ("" when the header is absent):
 * 32 lowercase hex characters. Every instance given the same key computes the same hash.
 */
export type ViewerHasher = (address: string, userAgent: string, at: number) => string;

/** The UTC day of `at`, `YYYY-MM-DD`. */
function utcDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/**
 * A hasher over `key` (keys/signing-keys.ts: the `viewer-day` key derived from the signing secret). The day's key is
 * HMAC-SHA256(key, `YYYY-MM-DD`), the same on every instance sharing the secret; the current day's is kept.
 */
export function createViewerHasher(key: Buffer): ViewerHasher {
  let day = '';
  let dayKey = Buffer.alloc(0);
  return (address, userAgent, at) => {
    const today = utcDay(at);
    if (today !== day) {
      day = today;
      dayKey = createHmac('sha256', key).update(today).digest();
    }
    return createHmac('sha256', dayKey)
      .update(`${clientGroup(address)}\n${userAgent}`)
      .digest()
      .subarray(0, VIEWER_BYTES)
      .toString('hex');
  };
}
