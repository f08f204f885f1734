/** The data directory holds the database and the key file: only the service's user may read it. */
import fs from 'node:fs';

/** Makes the data directory private (0700), creating it when needed. */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    fs.chmodSync(dir, 0o700);
  } catch {
    // Not ours to change (a mounted volume, another owner): the files inside are 0600 regardless.
  }
}
