/**
 * The secret rules secretlint's recommended preset lacks (docs/decisions/0034-a-look-before-publishing.md): keys of
 * services it has no rule for (Stripe, Google, Azure storage, PyPI, Twilio, Telegram, DigitalOcean), any private key
 * block, JSON Web Tokens, connection URLs of any scheme that carry a password, and this service's own `hd_` tokens
 * with a valid checksum. Each rule is one linear regular expression, and a check of what it matched where the format
 * has one (a JWT's header is JSON naming an algorithm; an `hd_` token's checksum).
 */
import { isWellFormedToken } from '../domain/ids.js';
import { literalFinder } from './literals.js';
import type { Match } from './mask.js';

interface SecretRule {
  readonly rule: string;
  /** Literals of which every match holds one: the pattern runs only on a text that holds one of them. */
  readonly anchors: readonly string[];
  readonly pattern: RegExp;
  /** Which capture group is the secret (0: the whole match). */
  readonly group?: number;
  /** A check of the matched text beyond its shape. */
  readonly valid?: (secret: string) => boolean;
}

/** Passwords in connection URLs that are placeholders, not secrets (documentation, templates). */
const PLACEHOLDER_PASSWORD =
  /^(?:pass(?:word)?|passwd|pwd|secret|changeme|change_me|example|test|xxx+|\*+|\.\.\.|<[^>]*>|&lt;.*&gt;|\$?\{[^}]*\}|\$[A-Z_]+|%[A-Z_]+%|\{\{[^}]*\}\}|your[-_]?password|mypassword|p@ssw0rd|none|null)$/i;

/** True when the password of a `scheme://user:password@host` URL is a real one (not a placeholder). */
export function hasRealPassword(url: string): boolean {
  const match = /^[^:]+:\/\/[^:@/\s]*:([^@/\s]*)@/.exec(url);
  if (match === null) return true;
  const password = decodeURIComponentSafe(match[1] ?? '');
  return password.length >= 3 && !PLACEHOLDER_PASSWORD.test(password);
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A JWT's header is base64url JSON naming its algorithm. */
function isJwt(token: string): boolean {
  const header = token.slice(0, token.indexOf('.'));
  try {
    const decoded: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    return typeof decoded === 'object' && decoded !== null && typeof (decoded as { alg?: unknown }).alg === 'string';
  } catch {
    return false;
  }
}

/** A key drawn from letters and digits mixes both (a run of one letter, or a word, is no key). */
const mixed = (secret: string) => /[0-9]/.test(secret) && /[A-Za-z]/.test(secret);

/** A random key uses many different characters; `sk_live_xxxx…` or `…000000` is a placeholder in documentation. */
const random = (secret: string) => new Set(secret).size >= 12;

/** The documentation's example key id (AKIAIOSFODNN7EXAMPLE), as secretlint's own AWS rule leaves it out. */
const notAwsExample = (id: string) => !id.endsWith('EXAMPLE');

const RULES: readonly SecretRule[] = [
  // secretlint's AWS access key id pattern (the preset runs it only with an option that also reports account ids).
  {
    rule: 'aws-access-key-id',
    anchors: ['A3T', 'AKIA', 'AGPA', 'AIDA', 'AROA', 'AIPA', 'ANPA', 'ANVA', 'ASIA'],
    pattern: /\b(?:A3T[A-Z0-9]|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA)[A-Z0-9]{16}\b/g,
    valid: notAwsExample,
  },
  {
    rule: 'jwt',
    anchors: ['eyJ'],
    pattern:
      /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{16,1000}(?![A-Za-z0-9_-])/g,
    valid: isJwt,
  },
  {
    rule: 'htmldrop-token',
    anchors: ['hd_'],
    pattern: /(?<![A-Za-z0-9_])hd_[0-9A-Za-z]{38,64}(?![A-Za-z0-9_])/g,
    valid: isWellFormedToken,
  },
  {
    rule: 'stripe-key',
    anchors: ['k_live_', 'k_test_'],
    pattern: /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,99}(?![A-Za-z0-9_])/g,
    valid: random,
  },
  // secretlint's SendGrid rule misses keys whose first part holds a `-` (base64url, as real keys do).
  {
    rule: 'sendgrid-key',
    anchors: ['SG.'],
    pattern: /(?<![A-Za-z0-9_.-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g,
    valid: random,
  },
  {
    rule: 'google-api-key',
    anchors: ['AIza'],
    pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g,
    valid: mixed,
  },
  {
    rule: 'azure-storage-key',
    anchors: ['AccountKey='],
    pattern: /AccountKey=([A-Za-z0-9+/]{86}==)/g,
    group: 1,
  },
  {
    rule: 'pypi-token',
    anchors: ['pypi-'],
    pattern: /(?<![A-Za-z0-9_-])pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,400}(?![A-Za-z0-9_-])/g,
  },
  {
    rule: 'twilio-api-key',
    anchors: ['SK'],
    pattern: /(?<![A-Za-z0-9_])SK[0-9a-f]{32}(?![A-Za-z0-9_])/g,
    valid: mixed,
  },
  {
    rule: 'telegram-bot-token',
    anchors: [':AA'],
    pattern: /(?<![A-Za-z0-9_:])[0-9]{8,10}:AA[0-9A-Za-z_-]{33}(?![A-Za-z0-9_-])/g,
  },
  {
    rule: 'digitalocean-token',
    anchors: ['_v1_'],
    pattern: /(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])/g,
  },
];

const PEM_KINDS = '(?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----';
const PEM_BEGIN = new RegExp(`-----BEGIN ${PEM_KINDS}`, 'g');
const PEM_END = new RegExp(`-----END ${PEM_KINDS}`, 'g');
const PEM_BODY = /^[A-Za-z0-9+/=\s:,\-\\]{40,}$/;
/** The longest private key block looked at: a 16384-bit RSA key in PEM is under 13 000 characters. */
const MAX_PEM_CHARS = 16_000;

/**
 * Private key blocks of every PEM kind: a BEGIN line, a body of base64 (and header lines), and the END line after
 * it. The END lines are found once, and each BEGIN takes the first one after it, so the time stays linear in the
 * text whatever it repeats (a regular expression spanning the block backtracked over every BEGIN line).
 */
function findPrivateKeys(text: string, found: Match[]): void {
  if (!text.includes('PRIVATE KEY')) return;
  const ends = [...text.matchAll(PEM_END)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  let next = 0;
  let reach = 0;
  for (const begin of text.matchAll(PEM_BEGIN)) {
    if (begin.index < reach) continue;
    const bodyStart = begin.index + begin[0].length;
    while (next < ends.length && (ends[next] as { start: number }).start < bodyStart) next++;
    const end = ends[next];
    if (end === undefined) return;
    if (end.end - begin.index > MAX_PEM_CHARS || !PEM_BODY.test(text.slice(bodyStart, end.start))) continue;
    found.push({ start: begin.index, end: end.end, rule: 'htmldrop/private-key', kind: 'secret' });
    reach = end.end;
  }
}

/** After `scheme:`: `//user:password@host`, matched at the `//` (sticky). */
const AUTHORITY = /\/\/[^\s:/@"'<>`]{1,100}:[^\s/@"'<>`]{1,200}@[A-Za-z0-9.-]{1,253}[A-Za-z0-9]/y;
const SCHEME_CHAR = /[a-z0-9+.-]/i;

/**
 * Connection URLs of any scheme that carry a password (`redis://:pw@host`, `amqps://user:pw@host`, …), found from each
 * `://` (a pattern starting at the scheme was tried at every letter of the text), placeholders left out.
 */
function findConnectionUrls(text: string, found: Match[]): void {
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', at + 3)) {
    let start = at;
    while (start > 0 && at - start < 31 && SCHEME_CHAR.test(text[start - 1] as string)) start--;
    if (at - start < 2 || !/[a-z]/i.test(text[start] as string)) continue;
    AUTHORITY.lastIndex = at + 1;
    const authority = AUTHORITY.exec(text);
    if (authority === null) continue;
    const end = at + 1 + authority[0].length;
    if (hasRealPassword(text.slice(start, end))) {
      found.push({ start, end, rule: 'htmldrop/connection-url', kind: 'secret' });
    }
  }
}

/** Every rule's anchors, looked for in one go (literals.ts). */
const ANCHORS = literalFinder(RULES.flatMap((rule) => rule.anchors));

/** Every match of the rules above in `text`. */
export function findSecrets(text: string): Match[] {
  const found: Match[] = [];
  findPrivateKeys(text, found);
  if (text.includes('://')) findConnectionUrls(text, found);
  const present = ANCHORS(text);
  for (const { rule, anchors, pattern, group = 0, valid } of RULES) {
    // A pass of a pattern over the text costs more than looking for its literals (docs/decisions/0034).
    if (!anchors.some((anchor) => present.has(anchor))) continue;
    pattern.lastIndex = 0;
    for (const match of text.matchAll(pattern)) {
      const secret = match[group];
      if (secret === undefined || (valid !== undefined && !valid(secret))) continue;
      const start = match.index + (group === 0 ? 0 : match[0].indexOf(secret));
      found.push({ start, end: start + secret.length, rule: `htmldrop/${rule}`, kind: 'secret' });
    }
  }
  return found;
}
