/**
 * Request bodies are JSON whatever their declared type (docs/decisions/0011-json-bodies-regardless-of-content-type.md),
 * parsed exactly: what is acknowledged is what is stored and served (docs/api.md 1).
 */
import { isUtf8 } from 'node:buffer';
import type { Limits } from '../config.js';
import { ApiError } from '../errors.js';

/** JSON around one file at most: its path (255 bytes), its key and its object (`{"content":"","encoding":"base64"}`). */
const PER_FILE_BYTES = 320;

/**
 * The body cap of the routes that carry a version (POST and PUT /api/drops, /mcp; docs/api.md 8): HTMLDROP_MAX_BODY_BYTES
 * for the HTML and the rest of the body, plus room for a full version's files in base64 (4/3 of
 * HTMLDROP_MAX_VERSION_BYTES) and their JSON. Those routes authenticate before reading a byte, so only an
 * authenticated writer's body can be this large; every other body stays within its small cap.
 */
export function documentBodyLimit(limits: Pick<Limits, 'maxBodyBytes' | 'maxVersionBytes' | 'maxFilesPerVersion'>) {
  if (limits.maxFilesPerVersion === 0) return limits.maxBodyBytes;
  return limits.maxBodyBytes + Math.ceil((limits.maxVersionBytes * 4) / 3) + limits.maxFilesPerVersion * PER_FILE_BYTES;
}

/** A string no database stores exactly: U+0000, or a lone surrogate. */
function refusedText(text: string, field: string): RefusedBody | undefined {
  if (text.includes('\u0000')) return { field, message: `${field} contains a NUL character (U+0000).` };
  if (!text.isWellFormed()) {
    return { field, message: `${field} contains a lone surrogate (a \\uD800-\\uDFFF escape without its pair).` };
  }
  return undefined;
}

/** Why a parsed body is refused before validation: the field it names and a message. */
interface RefusedBody {
  readonly field: string;
  readonly key?: string;
  readonly message: string;
}

/**
 * What JSON can carry but the service will not take: U+0000 in a string or key (no text column stores it the same
 * on both databases), a lone surrogate (`"\ud800"`: UTF-8 cannot encode it, so the database would store U+FFFD
 * instead, and what is served would differ from what was acknowledged), and a `__proto__` key anywhere (an object
 * merge elsewhere would read it as the prototype). Iterative: a deeply nested body must not overflow the stack.
 */
function refusedIn(root: unknown): RefusedBody | undefined {
  const pending: Array<[unknown, string]> = [[root, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, path] = next;
    if (typeof value === 'string') {
      const refused = refusedText(value, path || 'body');
      if (refused !== undefined) return refused;
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        const at = path === '' ? key : `${path}.${key}`;
        const refusedKey = refusedText(key, at);
        if (refusedKey !== undefined) return refusedKey;
        if (key === '__proto__') {
          const inMetadata = path === 'metadata';
          return {
            field: inMetadata ? 'metadata' : at,
            ...(inMetadata ? { key } : {}),
            message: `The key "__proto__" is not accepted${inMetadata ? ' as a metadata key' : ''}.`,
          };
        }
        pending.push([inner, at]);
      }
    }
  }
  return undefined;
}

export function parseJsonBody(bytes: Buffer): unknown {
  // Invalid UTF-8 would be decoded to U+FFFD: refused instead, so what is stored is exactly what was sent.
  if (!isUtf8(bytes)) throw new ApiError('invalid_json', { message: 'The request body is not valid UTF-8.' });
  const body = bytes.toString('utf8');
  if (body.trim() === '') return undefined;
  let parsed: unknown;
  try {
    // JSON.parse defines every key as an own property (a `__proto__` key sets no prototype); refusedIn then
    // refuses such keys before anything merges the body into another object.
    parsed = JSON.parse(body);
  } catch {
    throw new ApiError('invalid_json', { message: 'The request body is not valid JSON.' });
  }
  const refused = refusedIn(parsed);
  if (refused !== undefined) {
    const { message, ...details } = refused;
    throw new ApiError('invalid_arg', { message, details });
  }
  return parsed;
}
