/**
 * Optimistic concurrency over HTTP (docs/api.md, "Optimistic concurrency"): a single drop's `ETag` is its latest
 * version number, and `If-Match` names the version a writer last saw. The domain and the store make the check
 * atomic with the write; this module only reads and writes the headers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IfLatest } from '../domain/drops.js';
import { parseVersionNumber } from '../domain/ids.js';
import type { DropRecord } from '../domain/types.js';
import { ApiError } from '../errors.js';

/** The strong entity tag of a drop: its latest version, quoted. */
export const dropEtag = (latestVersion: number): string => `"${latestVersion}"`;

/** Sets `ETag` on a single-drop answer and returns the drop, for `return present(withEtag(reply, drop))`. */
export function withEtag<T extends Pick<DropRecord, 'latestVersion'>>(reply: FastifyReply, drop: T): T {
  reply.header('etag', dropEtag(drop.latestVersion));
  return drop;
}

const STRONG_VERSION_TAG = /^"([0-9]{1,10})"$/;

/**
 * The precondition of `If-Match`: absent or `*` asks nothing beyond the drop existing (undefined); `"<n>"` asks
 * that the latest version is n. Anything else (a weak tag, a list, another tag's syntax) is 400 invalid_arg: our
 * tags are only ever `"<n>"`, and a weak tag never matches under If-Match's strong comparison (RFC 9110 13.1.1).
 */
export function ifLatestOf(request: FastifyRequest): IfLatest {
  const header = request.headers['if-match'];
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '*') return undefined;
  const digits = STRONG_VERSION_TAG.exec(value)?.[1];
  const version = digits === undefined ? undefined : parseVersionNumber(digits);
  if (version === undefined) {
    throw new ApiError('invalid_arg', {
      message: `If-Match must be * or one version tag such as "3" (the drop's ETag), got ${JSON.stringify(value.slice(0, 80))}.`,
      details: { field: 'If-Match' },
    });
  }
  return version;
}
