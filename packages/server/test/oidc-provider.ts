/**
 * A real OpenID Connect provider on loopback (the `oidc-provider` package, v9) for end-to-end sign-in tests.
 * One confidential client (client_secret_post, authorization code, PKCE S256 required), a fixed set of users, and
 * small interaction pages of our own (login: `#username` + `#provider-login`; consent: `#provider-allow`), so no
 * development-only feature is used. Its notices and errors are kept out of the test output.
 */

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';

export interface OidcTestUser {
  readonly sub: string;
  readonly preferredUsername: string;
  /** The `email` claim (scope `email`), with `email_verified` from `emailVerified` (default true). */
  readonly email?: string;
  readonly emailVerified?: boolean;
}

export interface OidcProviderOptions {
  /** Registered redirect URIs of the client, e.g. `{base}/verify/callback`. */
  readonly redirectUris: readonly string[];
  /** Host name of the issuer: `127.0.0.1` (default) or `localhost` (a different site than 127.0.0.1). */
  readonly host?: '127.0.0.1' | 'localhost';
  readonly users?: readonly OidcTestUser[];
}

export interface OidcTestProvider {
  /** Exactly as the discovery document states it, without a trailing slash. */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Logins completed on the provider's login page, in order. */
  readonly logins: readonly string[];
  /** Successful token requests (authorization codes exchanged). */
  readonly grants: number;
  /** Errors the provider reported (server_error and friends), for diagnosing a failed test. */
  readonly errors: readonly string[];
  /**
   * When set, rewrites the provider's redirects to a registered redirect URI (the authorization response) before
   * they leave, as a party in the middle would; clear it again with undefined.
   */
  tamperWithAnswer: ((answer: URL) => URL) | undefined;
  close(): Promise<void>;
}

export const DEFAULT_OIDC_USER: OidcTestUser = { sub: 'user-123', preferredUsername: 'oidc-alice' };

// The package ships without type declarations: the few parts used here, typed by hand.
interface InteractionDetails {
  readonly uid: string;
  readonly prompt: { readonly name: string; readonly details: Readonly<Record<string, unknown>> };
  readonly params: Readonly<Record<string, unknown>>;
  readonly session?: { readonly accountId?: string } | undefined;
  readonly grantId?: string | undefined;
}
interface Grant {
  addOIDCScope(scope: string): void;
  addOIDCClaims(claims: readonly string[]): void;
  save(): Promise<string>;
}
interface ProviderInstance {
  silent: boolean;
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: Record<string, unknown>,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<void>;
  readonly Grant: {
    new (init: { accountId: string; clientId: string }): Grant;
    find(id: string): Promise<Grant | undefined>;
  };
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}
type ProviderConstructor = new (issuer: string, configuration: Record<string, unknown>) => ProviderInstance;

/** A variable specifier keeps TypeScript from looking for the declarations the package does not have. */
const PACKAGE: string = 'oidc-provider';

/** oidc-provider writes its notices with console.info/warn, prefixed "oidc-provider ": drop those while in use. */
let muted = 0;
let restoreConsole: (() => void) | undefined;
function muteProviderNotices(): () => void {
  if (muted++ === 0) {
    const { info, warn } = console;
    const filter =
      (write: (...args: unknown[]) => void) =>
      (...args: unknown[]) => {
        if (typeof args[0] === 'string' && args[0].includes('oidc-provider ')) return;
        write(...args);
      };
    console.info = filter(info);
    console.warn = filter(warn);
    restoreConsole = () => {
      console.info = info;
      console.warn = warn;
    };
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--muted === 0) restoreConsole?.();
  };
}

/** The smallest adapter oidc-provider accepts: everything in one Map, for the life of the test provider. */
function memoryAdapter() {
  const items = new Map<string, Record<string, unknown>>();
  const index = new Map<string, string>();
  return class Adapter {
    constructor(private readonly model: string) {}
    private key(id: string) {
      return `${this.model}:${id}`;
    }
    async upsert(id: string, payload: Record<string, unknown>) {
      items.set(this.key(id), payload);
      if (typeof payload.uid === 'string') index.set(`${this.model}:uid:${payload.uid}`, id);
      if (typeof payload.userCode === 'string') index.set(`${this.model}:userCode:${payload.userCode}`, id);
    }
    async find(id: string) {
      return items.get(this.key(id));
    }
    async findByUid(uid: string) {
      const id = index.get(`${this.model}:uid:${uid}`);
      return id === undefined ? undefined : items.get(this.key(id));
    }
    async findByUserCode(userCode: string) {
      const id = index.get(`${this.model}:userCode:${userCode}`);
      return id === undefined ? undefined : items.get(this.key(id));
    }
    async consume(id: string) {
      const item = items.get(this.key(id));
      if (item !== undefined) item.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      items.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, value] of items) if (value.grantId === grantId) items.delete(key);
    }
  };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function html(res: ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
      '<style>body{font:16px system-ui;max-width:28rem;margin:3rem auto;padding:0 1rem}' +
      'button,input{font:inherit;padding:.4rem .6rem}.err{color:#b00}</style></head>' +
      `<body><h1>Test identity provider</h1>${body}</body></html>`,
  );
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return new URLSearchParams(body);
}

function loginForm(uid: string, clientId: string, error: string | null): string {
  return `<p>Sign in to continue to <strong id="provider-client">${escapeHtml(clientId)}</strong>.</p>${
    error === null ? '' : `<p class="err" id="provider-error">${escapeHtml(error)}</p>`
  }<form method="post" action="/interaction/${escapeHtml(uid)}/login">
<label for="username">Username</label> <input id="username" name="username" autocomplete="off" required autofocus>
<button type="submit" id="provider-login">Sign in</button></form>`;
}

export async function startOidcProvider(options: OidcProviderOptions): Promise<OidcTestProvider> {
  const release = muteProviderNotices();
  try {
    const { Provider } = (await import(PACKAGE)) as { Provider: ProviderConstructor };
    const users = options.users ?? [DEFAULT_OIDC_USER];
    const clientId = 'htmldrop-test';
    const clientSecret = randomBytes(24).toString('base64url');
    const logins: string[] = [];
    const errors: string[] = [];

    let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
      res.writeHead(503).end();
    };
    const server = http.createServer((req, res) => handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const issuer = `http://${options.host ?? '127.0.0.1'}:${port}`;

    const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    const provider = new Provider(issuer, {
      adapter: memoryAdapter(),
      jwks: { keys: [{ ...signingKey, kid: 'test-rs256', alg: 'RS256', use: 'sig' }] },
      cookies: { keys: [randomBytes(32).toString('base64url')] },
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: [...options.redirectUris],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      pkce: { required: () => true },
      claims: { openid: ['sub'], profile: ['preferred_username'], email: ['email', 'email_verified'] },
      async findAccount(_ctx: unknown, id: string) {
        const user = users.find((u) => u.sub === id);
        if (user === undefined) return undefined;
        return {
          accountId: user.sub,
          async claims() {
            const email =
              user.email === undefined ? {} : { email: user.email, email_verified: user.emailVerified ?? true };
            return { sub: user.sub, preferred_username: user.preferredUsername, ...email };
          },
        };
      },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      clientBasedCORS: () => false,
      renderError(ctx: { type: string; body: string }, out: Record<string, string>) {
        ctx.type = 'html';
        ctx.body = `<!doctype html><title>error</title><pre id="provider-failure">${escapeHtml(JSON.stringify(out))}</pre>`;
      },
      ttl: {
        AccessToken: 600,
        AuthorizationCode: 60,
        Grant: 600,
        IdToken: 600,
        Interaction: 600,
        Session: 600,
      },
    });
    provider.silent = true; // Koa would print every error it answers
    for (const event of ['server_error', 'authorization.error', 'grant.error', 'userinfo.error']) {
      provider.on(event, (...args: unknown[]) => {
        const error = args.find((a): a is Error => a instanceof Error);
        errors.push(`${event}: ${error === undefined ? 'unknown' : `${error.message} ${JSON.stringify(error)}`}`);
      });
    }

    let grants = 0;
    provider.on('grant.success', () => {
      grants++;
    });

    const oidcCallback = provider.callback();
    const interactions = async (req: IncomingMessage, res: ServerResponse, path: string) => {
      const details = await provider.interactionDetails(req, res);
      const client = String(details.params.client_id ?? '');
      if (req.method === 'GET' && path === `/interaction/${details.uid}`) {
        if (details.prompt.name === 'login') return html(res, 200, 'Sign in', loginForm(details.uid, client, null));
        if (details.prompt.name === 'consent') {
          return html(
            res,
            200,
            'Allow access',
            `<p>Allow <strong>${escapeHtml(client)}</strong> to read your username?</p>
<form method="post" action="/interaction/${escapeHtml(details.uid)}/consent"><button type="submit" id="provider-allow">Allow</button></form>`,
          );
        }
        return html(res, 501, 'Unsupported', `<p>Prompt ${escapeHtml(details.prompt.name)} is not supported.</p>`);
      }
      if (req.method === 'POST' && path === `/interaction/${details.uid}/login`) {
        const username = (await readForm(req)).get('username')?.trim() ?? '';
        const user = users.find((u) => u.preferredUsername === username);
        if (user === undefined) {
          return html(res, 200, 'Sign in', loginForm(details.uid, client, `No user named "${username}".`));
        }
        logins.push(user.preferredUsername);
        return provider.interactionFinished(
          req,
          res,
          { login: { accountId: user.sub } },
          {
            mergeWithLastSubmission: false,
          },
        );
      }
      if (req.method === 'POST' && path === `/interaction/${details.uid}/consent`) {
        const accountId = details.session?.accountId;
        if (accountId === undefined) return html(res, 400, 'Error', '<p>Not signed in.</p>');
        const grant =
          (details.grantId === undefined ? undefined : await provider.Grant.find(details.grantId)) ??
          new provider.Grant({ accountId, clientId: client });
        const missingScope = details.prompt.details.missingOIDCScope;
        const missingClaims = details.prompt.details.missingOIDCClaims;
        if (Array.isArray(missingScope)) grant.addOIDCScope(missingScope.join(' '));
        if (Array.isArray(missingClaims)) grant.addOIDCClaims(missingClaims.map(String));
        return provider.interactionFinished(
          req,
          res,
          { consent: { grantId: await grant.save() } },
          {
            mergeWithLastSubmission: true,
          },
        );
      }
      return html(res, 404, 'Not found', '<p>Not found.</p>');
    };
    const isAnswer = (location: unknown): location is string =>
      typeof location === 'string' && options.redirectUris.some((uri) => location.startsWith(`${uri}?`));
    handle = (req, res) => {
      const path = new URL(req.url ?? '/', issuer).pathname;
      if (!path.startsWith('/interaction/')) {
        const tamper = testProvider.tamperWithAnswer;
        if (tamper !== undefined) {
          // Koa sets Location with setHeader and lets end() write the head: adjust it at that last moment.
          const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
          res.writeHead = ((...args: unknown[]) => {
            const location = res.getHeader('location');
            if (isAnswer(location)) res.setHeader('location', tamper(new URL(location)).toString());
            return writeHead(...args);
          }) as typeof res.writeHead;
        }
        return oidcCallback(req, res);
      }
      interactions(req, res, path).catch((error: unknown) => {
        errors.push(`interaction: ${(error as Error).message}`);
        if (!res.headersSent)
          html(res, 400, 'Error', `<p id="provider-failure">${escapeHtml((error as Error).message)}</p>`);
      });
    };

    const testProvider: OidcTestProvider = {
      issuer,
      clientId,
      clientSecret,
      logins,
      errors,
      get grants() {
        return grants;
      },
      tamperWithAnswer: undefined,
      async close() {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        release();
      },
    };
    return testProvider;
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * After the provider's login: its consent when asked (once per provider session and client), then back through the
 * callback page to the service's approval page (`#approve`), or the failure shown with the provider's errors.
 */
export async function consentAndReturn(page: Page, op: OidcTestProvider): Promise<void> {
  const next = page.locator('#provider-allow, #approve, #outcome, #provider-failure').first();
  await next.waitFor({ timeout: 10_000 });
  if (await page.locator('#provider-allow').isVisible()) await page.locator('#provider-allow').click();
  await page.locator('#approve, #outcome').first().waitFor({ timeout: 10_000 });
  if (!(await page.locator('#approve').isVisible())) {
    throw new Error(`no approval page: ${await page.content()}\nprovider errors: ${op.errors.join('\n')}`);
  }
}
