/**
 * The service's signing keys (passcode capabilities, /verify sessions and OAuth state, the daily viewer keys of read
 * receipts), kept out of the database so that a copy of it (a backup, a dump) cannot forge a capability or a sign-in
 * session, nor test an address against the viewer hashes (docs/decisions/0019-signing-keys-outside-the-database.md).
 *
 * One secret, from `HTMLDROP_SECRET`, or else from `<data dir>/secret.key` (mode 0600 in a 0700 directory, created
 * on first start). Each purpose gets its own key, derived from the secret with HKDF. Rotation: a second secret
 * (`HTMLDROP_SECRET_PREVIOUS`, or the key file's second line) is accepted when verifying and never used to sign, so
 * values signed before a rotation keep working for the grace period; `htmldrop-server secret rotate` rotates the file.
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { ensurePrivateDir } from '../private-dir.js';

export const SECRET_FILE_NAME = 'secret.key';

/** Keys for signing (the first) and verifying (every one), per purpose. */
export interface SigningKeys {
  readonly capability: readonly Buffer[];
  readonly session: readonly Buffer[];
  /**
   * The key daily viewer keys derive from (read receipts, domain/viewer-id.ts): from the current secret only, so a
   * rotation starts new viewer hashes (a viewer seen before it counts again after it, as on a new UTC day).
   */
  readonly viewerDay: Buffer;
  /** Keys that seal webhook secrets (keys/sealed-box.ts): the current one seals, every one opens. */
  readonly webhookSecret: readonly Buffer[];
  /** Where the secret came from: `HTMLDROP_SECRET`, or the key file's path. */
  readonly source: string;
}

/** A new secret: 32 random bytes, base64url. */
function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

function derive(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'htmldrop', `htmldrop ${purpose} key v1`, 32));
}

function keysOf(secrets: readonly string[], source: string): SigningKeys {
  const [current] = secrets;
  if (current === undefined) throw new Error('no signing secret');
  return Object.freeze({
    capability: Object.freeze(secrets.map((s) => derive(s, 'capability'))),
    session: Object.freeze(secrets.map((s) => derive(s, 'session'))),
    viewerDay: derive(current, 'viewer-day'),
    webhookSecret: Object.freeze(secrets.map((s) => derive(s, 'webhook-secret'))),
    source,
  });
}

/** The secrets in a key file: the current one first, then the previous one if present. */
function readSecretFile(file: string): string[] {
  const secrets = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (secrets.length === 0 || secrets.some((s) => s.length < 32)) {
    throw new Error(`${file} does not hold a secret of at least 32 characters per line`);
  }
  return secrets.slice(0, 2);
}

/** Writes a key file atomically (a temporary file, then a rename), mode 0600. */
function writeSecretFile(file: string, secrets: readonly string[]): void {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(temporary, `${secrets.join('\n')}\n`, { mode: 0o600, flag: 'wx' });
  fs.renameSync(temporary, file);
}

/**
 * The key file's secrets, creating the file when it does not exist. Several instances starting together on one
 * data directory agree: the file is created by a hard link, which fails if another instance got there first.
 */
function ensureSecretFile(dir: string): { file: string; secrets: string[] } {
  ensurePrivateDir(dir);
  const file = path.join(dir, SECRET_FILE_NAME);
  if (!fs.existsSync(file)) {
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    fs.writeFileSync(temporary, `${newSecret()}\n`, { mode: 0o600, flag: 'wx' });
    try {
      fs.linkSync(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      fs.rmSync(temporary, { force: true });
    }
  }
  fs.chmodSync(file, 0o600);
  return { file, secrets: readSecretFile(file) };
}

/** The signing keys the configuration names: the environment's secret, else the data directory's key file. */
export function loadSigningKeys(config: Config): SigningKeys {
  if (config.secret !== undefined) {
    const secrets = [config.secret, ...(config.previousSecret === undefined ? [] : [config.previousSecret])];
    return keysOf(secrets, 'HTMLDROP_SECRET');
  }
  const { file, secrets } = ensureSecretFile(config.dataDir);
  return keysOf(secrets, file);
}

/**
 * Rotates the key file: a new current secret, the old current one kept as the previous (accepted for
 * verification only), the one before dropped. Returns the file's path.
 */
export function rotateSecretFile(dataDir: string): string {
  const { file, secrets } = ensureSecretFile(dataDir);
  writeSecretFile(file, [newSecret(), secrets[0] ?? newSecret()]);
  return file;
}

/** Keys for tests and tools: derived from a given secret. */
export function signingKeysFromSecret(secret: string, previous?: string): SigningKeys {
  return keysOf(previous === undefined ? [secret] : [secret, previous], 'given');
}
