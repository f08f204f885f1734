/** Real headless Chromium (Debian's package) through playwright-core. Never downloads a browser. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.HTMLDROP_CHROMIUM ?? '/usr/bin/chromium';

/** Screenshots for reviewers, in a git-ignored folder at the repository root. */
export const SCREENSHOT_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../.artifacts/screenshots',
);

export function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install chromium (.ci/run does this)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // The machine has no internet: keep Chromium from trying to reach Google's services.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
}

export function screenshotPath(name: string): string {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return path.join(SCREENSHOT_DIR, `${name}.png`);
}
