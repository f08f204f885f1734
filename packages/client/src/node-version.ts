/**
 * The oldest Node.js the SDK and CLI run on: the `engines` of every package.json in the repository, the landing page
 * and the onboarding text of the service (through the service's copy, CLI_MIN_NODE_VERSION), and the READMEs all
 * state this one value (checked by the server's node-version test). Below it the CLI stops with one line saying so (bin/htmldrop.js), rather than failing later on
 * a missing API (`AbortSignal.any`, `String.prototype.isWellFormed`).
 */
export const MIN_NODE_VERSION = '20.19';

/** Whether a Node.js version (`process.versions.node`, e.g. `20.19.1`) is at least MIN_NODE_VERSION. */
export function supportsNode(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const [needMajor = 0, needMinor = 0] = MIN_NODE_VERSION.split('.').map(Number);
  return major > needMajor || (major === needMajor && minor >= needMinor);
}
