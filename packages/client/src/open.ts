/** Opening a URL in the user's browser: $BROWSER, else open (macOS), start (Windows), xdg-open (others). */
import { spawn } from 'node:child_process';

export interface OpenOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly platform?: NodeJS.Platform;
  /** Give up waiting for the opener after this long (it keeps running detached). Default 5000 ms. */
  readonly timeoutMs?: number;
}

function opener(url: string, options: OpenOptions): { command: string; args: string[] } {
  const browser = (options.env ?? process.env).BROWSER;
  if (browser !== undefined && browser.trim() !== '') return { command: browser.trim(), args: [url] };
  switch (options.platform ?? process.platform) {
    case 'darwin':
      return { command: 'open', args: [url] };
    case 'win32':
      // `start` is a cmd built-in; the empty string is the window title.
      return { command: 'cmd', args: ['/c', 'start', '""', url.replace(/&/g, '^&')] };
    default:
      return { command: 'xdg-open', args: [url] };
  }
}

/**
 * Tries to open `url`; resolves true when an opener ran and succeeded, false when none is available or it failed
 * (the caller then prints the URL for the human). Never throws.
 */
export function openUrl(url: string, options: OpenOptions = {}): Promise<boolean> {
  const { command, args } = opener(url, options);
  return new Promise((resolve) => {
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(ok);
    };
    const timer = setTimeout(() => done(true), options.timeoutMs ?? 5000);
    try {
      const child = spawn(command, args, { stdio: 'ignore', detached: true, env: { ...process.env, ...options.env } });
      child.once('error', () => done(false));
      child.once('exit', (code) => done(code === 0));
      child.unref();
    } catch {
      done(false);
    }
  });
}
