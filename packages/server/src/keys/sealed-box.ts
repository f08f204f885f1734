/**
 * Sealing small secrets kept in the database (webhook signing secrets, docs/decisions/0036-live-pages-and-webhooks.md)
 * with AES-256-GCM under a key derived from the service's secret, which never enters the database: the database alone
 * cannot sign as the service. The current key seals; after a rotation the previous one still opens.
 * Sealed form: `v1.<iv>.<ciphertext>.<tag>`, base64url.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface SealedBox {
  seal(plain: string): string;
  /** The plain text, or undefined when no key opens it (a secret rotated away, or a tampered value). */
  open(sealed: string): string | undefined;
}

export function createSealedBox(keys: readonly Buffer[]): SealedBox {
  const [current] = keys;
  if (current === undefined) throw new Error('no sealing key');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv, data, cipher.getAuthTag()]
        .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const [version, iv, data, tag] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || data === undefined || tag === undefined) return undefined;
      for (const key of keys) {
        try {
          const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
          decipher.setAuthTag(Buffer.from(tag, 'base64url'));
          return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
        } catch {
          // Not this key: try the next.
        }
      }
      return undefined;
    },
  };
}
