/** Commands of the account on this machine: login (device flow), logout, whoami (docs/api.md section 5.4). */
import os from 'node:os';
import type { HtmlDropClient } from '../../client.js';
import { type DeviceCodePrompt, type DeviceLoginResult, deviceLogin, waitForDeviceToken } from '../../device-flow.js';
import { HtmlDropError } from '../../errors.js';
import {
  projectTokenPath,
  readTokenFile,
  removeTokenFile,
  TOKEN_ENV,
  userTokenPath,
  writeProjectToken,
  writeTokenFile,
} from '../../token-store.js';
import { bool, str, type Values } from '../args.js';
import type { Command, Context } from '../context.js';
import { startCountdown } from '../output.js';
import { maybeOpen } from './open.js';

/**
 * Waits for the human to approve: a new device flow (its URL and code on stderr, then a countdown), or the one
 * started with --no-wait (--poll-token). SIGINT and SIGTERM abort the wait.
 */
async function approval(ctx: Context, client: HtmlDropClient, values: Values, label: string) {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let stopCountdown = () => {};
  let result: DeviceLoginResult;
  try {
    const onCode = async (prompt: DeviceCodePrompt) => {
      ctx.out.note(
        [
          '',
          'To sign in, open this URL in a browser:',
          '',
          `    ${prompt.verificationUrl}`,
          '',
          `check that the page shows the code ${prompt.code}, and press Approve.`,
          '',
        ].join('\n'),
      );
      if (bool(values, 'open')) await maybeOpen(ctx, prompt.verificationUrl);
      stopCountdown = startCountdown(ctx.io.stderr, prompt.expiresAt);
    };
    const pollToken = str(values, 'poll-token');
    result =
      pollToken === undefined
        ? await deviceLogin(client, { label, onCode, signal: controller.signal })
        : await waitForDeviceToken(client, {
            pollToken,
            signal: controller.signal,
            expiresAt: Date.now() + 600_000,
          });
  } finally {
    stopCountdown();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  return result;
}

/** `htmldrop login`. */
export const login: Command = {
  usage: 'login [--label <text>] [--project] [--open] [--no-wait | --poll-token <token>]',
  summary: 'Sign in with the device flow and store the token (0600)',
  help: `Starts the device-code flow: prints a URL and a code for a human to approve in a browser, waits (with a
countdown) until they do, then stores the token in ~/.config/htmldrop/token (or ./.htmldrop/token with --project),
mode 0600 in a 0700 directory.

  --label <text>        name of the token (default "htmldrop CLI on <host>")
  --project             store in ./.htmldrop/token (project-local, with a .gitignore) instead
  --open                also try to open the URL in a browser
  --no-wait             print the URL, code and poll token, and exit; finish later with --poll-token
  --poll-token <token>  resume waiting for a flow started with --no-wait`,
  options: {
    label: { type: 'string' },
    project: { type: 'boolean' },
    open: { type: 'boolean' },
    'no-wait': { type: 'boolean' },
    'poll-token': { type: 'string' },
  },
  async run(ctx, values) {
    const client = ctx.anonymous();
    const label = str(values, 'label') ?? `htmldrop CLI on ${os.hostname()}`;
    if (bool(values, 'no-wait')) {
      const start = await client.startDeviceFlow(label);
      ctx.out.result(start, () =>
        [
          `Open ${start.verification_url}`,
          `and approve the code ${start.code} (valid ${Math.round(start.expires_in / 60)} minutes). Then run:`,
          `  htmldrop login --poll-token=${start.poll_token}${bool(values, 'project') ? ' --project' : ''}`,
        ].join('\n'),
      );
      return;
    }
    const result = await approval(ctx, client, values, label);
    const project = bool(values, 'project');
    const file = project ? await writeProjectToken(ctx.io.cwd, result.apiToken) : userTokenPath(ctx.io.home);
    if (!project) await writeTokenFile(file, result.apiToken);
    const me = await client.withToken(result.apiToken).me();
    if (!project && (await readTokenFile(projectTokenPath(ctx.io.cwd)).catch(() => 'broken')) !== undefined) {
      ctx.out.warn(`${projectTokenPath(ctx.io.cwd)} exists and takes precedence over ${file} in this directory.`);
    }
    if (!project && (ctx.io.env[TOKEN_ENV] ?? '') !== '') {
      ctx.out.warn(`${TOKEN_ENV} is set and takes precedence over ${file}.`);
    }
    ctx.out.result(
      {
        user_id: me.user_id,
        login: me.login,
        provider: me.provider,
        token_id: me.token.id,
        token_path: file,
        server: ctx.server,
      },
      () =>
        `Signed in as ${me.login} (${me.provider}, ${me.user_id}). Token ${me.token.id} saved to ${file} (mode 0600).`,
    );
  },
};

/** The token file in effect (the first that holds a token or is broken) among the candidates, and its token. */
async function storedToken(candidates: readonly string[]): Promise<{ file?: string; token?: string }> {
  for (const candidate of candidates) {
    let token: string | undefined;
    try {
      token = await readTokenFile(candidate);
    } catch {
      // Garbage or too-open permissions: nothing to revoke, but still remove the file.
      return { file: candidate };
    }
    if (token !== undefined) return { file: candidate, token };
  }
  return {};
}

/** Revokes the token on the service; the token id, or null when that failed (warned about unless already dead). */
async function revokeStored(ctx: Context, token: string): Promise<string | null> {
  const client = ctx.anonymous().withToken(token);
  try {
    const me = await client.me();
    await client.revokeToken(me.token.id);
    return me.token.id;
  } catch (error) {
    if (!(error instanceof HtmlDropError && (error.code === 'invalid_token' || error.code === 'unauthorized'))) {
      ctx.out.warn(
        `could not revoke the token on the service (${error instanceof Error ? error.message : String(error)}); it keeps working until revoked.`,
      );
    }
    return null;
  }
}

/** `htmldrop logout`. */
export const logout: Command = {
  usage: 'logout [--project] [--local-only]',
  summary: 'Revoke the stored token and delete its file',
  help: `Revokes the stored token on the service (it stops working everywhere) and deletes the file. Without
--project it acts on the token file in effect here: ./.htmldrop/token if it exists, else ~/.config/htmldrop/token.
A token given with --token or HTMLDROP_TOKEN is not touched (use: htmldrop revoke <id>).

  --project      act on ./.htmldrop/token
  --local-only   only delete the file; the token keeps working until revoked`,
  options: { project: { type: 'boolean' }, 'local-only': { type: 'boolean' } },
  async run(ctx, values) {
    const projectFile = projectTokenPath(ctx.io.cwd);
    const userFile = userTokenPath(ctx.io.home);
    const { file, token } = await storedToken(bool(values, 'project') ? [projectFile] : [projectFile, userFile]);
    if (file === undefined) {
      ctx.out.result({ removed: null, revoked: null }, () => 'No stored token to remove.');
      return;
    }
    const revoked = token !== undefined && !bool(values, 'local-only') ? await revokeStored(ctx, token) : null;
    await removeTokenFile(file);
    ctx.out.result({ removed: file, revoked }, () =>
      revoked === null ? `Removed ${file}.` : `Revoked token ${revoked} and removed ${file}.`,
    );
  },
};

/** `htmldrop whoami`. */
export const whoami: Command = {
  usage: 'whoami',
  summary: 'Show the account and token in use',
  help: 'Shows the account, the token in use and where it was found.',
  options: {},
  async run(ctx) {
    const { client, token } = await ctx.authenticated();
    const me = await client.me();
    ctx.out.result({ ...me, server: ctx.server, token_source: token.origin }, () =>
      [
        `${me.login} (${me.provider}, ${me.user_id})`,
        `Server   ${ctx.server}`,
        `Token    ${me.token.id}${me.token.label === null ? '' : ` "${me.token.label}"`} from ${token.origin}`,
        `Drops    ${me.drop_count}`,
      ].join('\n'),
    );
  },
};
