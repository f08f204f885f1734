/** Building what /p/<slug>/raw sends for one version: computed once per version, then cached (raw-cache.ts). */
import { createHash } from 'node:crypto';
import type { DropRecord, VersionContent } from '../domain/types.js';
import { injectDefensiveHead } from './inject.js';
import type { RawEntry } from './raw-cache.js';

/** DECISIONS "Public serving": the sandbox never includes allow-same-origin. */
export const SANDBOX_CSP = 'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads';

/** Headers every raw document response carries. */
export const RAW_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'x-content-type-options': 'nosniff',
  'content-security-policy': SANDBOX_CSP,
  'referrer-policy': 'no-referrer',
});

export function buildRawEntry(drop: DropRecord, content: VersionContent): RawEntry {
  const body = Buffer.from(injectDefensiveHead(content.html), 'utf8');
  const digest = createHash('sha256').update(body).digest('base64url').slice(0, 22);
  return {
    slug: drop.slug,
    version: content.version,
    latestVersion: drop.latestVersion,
    locked: drop.locked,
    passcodeGeneration: drop.passcodeGeneration,
    body,
    etag: `"${content.version}-${digest}"`,
  };
}
