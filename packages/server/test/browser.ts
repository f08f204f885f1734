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

/**
 * The `--disable-features` list Playwright passes to Chromium, copied from playwright-core 1.65.1
 * (`disabledFeatures` in packages/playwright-core/src/server/chromium/chromiumSwitches.ts, bundled into
 * node_modules/playwright-core/lib/coreBundle.js; not exported). own-origin.browser.test.ts checks this copy against
 * the installed bundle, so an upgrade that changes the list fails loudly instead of drifting.
 */
export const PLAYWRIGHT_DISABLED_FEATURES: readonly string[] = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

/**
 * Playwright's list without ThirdPartyStoragePartitioning. With that feature off (Playwright's default), Chromium
 * refuses localStorage in every cross-site iframe, even one with allow-same-origin, which is not what the browsers
 * people use do: they partition third-party storage (keyed by the top-level site), and a drop framed on its own
 * origin keeps its storage. Chromium keeps the last `--disable-features` it is given, and Playwright appends the
 * caller's args after its own, so this flag replaces Playwright's.
 */
export const PARTITIONED_STORAGE_FLAG = `--disable-features=${PLAYWRIGHT_DISABLED_FEATURES.filter(
  (feature) => feature !== 'ThirdPartyStoragePartitioning',
).join(',')}`;

export interface LaunchOptions {
  /** Third-party storage partitioned as in shipping Chrome (see PARTITIONED_STORAGE_FLAG), not refused. */
  readonly partitionedStorage?: boolean;
}

export function launchBrowser(options: LaunchOptions = {}): Promise<Browser> {
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
      ...(options.partitionedStorage === true ? [PARTITIONED_STORAGE_FLAG] : []),
    ],
  });
}

export function screenshotPath(name: string): string {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return path.join(SCREENSHOT_DIR, `${name}.png`);
}
