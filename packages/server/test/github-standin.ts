/**
 * A loopback stand-in for the three GitHub endpoints the `github` identity provider uses: the authorize page
 * (answers at once with a redirect, as GitHub does for an app the user already authorized), the code exchange
 * and GET /user. Every request is recorded for assertions.
 */
import { randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHubUser {
  readonly id: number;
  readonly login: string;
}

export interface AuthorizeRequest {
  readonly clientId: string | null;
  readonly redirectUri: string | null;
  readonly scope: string | null;
  readonly state: string | null;
  /** The code handed back on the redirect. */
  readonly code: string;
}

export interface ExchangeRequest {
  readonly contentType: string | undefined;
  readonly accept: string | undefined;
  readonly body: Readonly<Record<string, unknown>>;
  /** What the stand-in answered. */
  readonly answer: Readonly<Record<string, unknown>>;
}

export interface UserRequest {
  readonly authorization: string | undefined;
  readonly status: number;
}

export interface GitHubStandIn {
  /** For HTMLDROP_GITHUB_URL and HTMLDROP_GITHUB_API_URL (one server plays both). */
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly user: GitHubUser;
  readonly authorizations: readonly AuthorizeRequest[];
  readonly exchanges: readonly ExchangeRequest[];
  readonly userRequests: readonly UserRequest[];
  close(): Promise<void>;
}

export interface GitHubStandInOptions {
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly user?: GitHubUser;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}

export async function startGitHubStandIn(options: GitHubStandInOptions = {}): Promise<GitHubStandIn> {
  const clientId = options.clientId ?? 'Iv1.standin';
  const clientSecret = options.clientSecret ?? randomBytes(20).toString('hex');
  const user = options.user ?? { id: 4242, login: 'octo-alice' };
  const authorizations: AuthorizeRequest[] = [];
  const exchanges: ExchangeRequest[] = [];
  const userRequests: UserRequest[] = [];
  /** Codes not yet exchanged (GitHub's codes are single use), and the redirect_uri each was issued for. */
  const codes = new Map<string, string | null>();
  const accessTokens = new Set<string>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://standin.invalid');
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const query = url.searchParams;
      const code = randomBytes(10).toString('hex');
      authorizations.push({
        clientId: query.get('client_id'),
        redirectUri: query.get('redirect_uri'),
        scope: query.get('scope'),
        state: query.get('state'),
        code,
      });
      const redirectUri = query.get('redirect_uri');
      if (query.get('client_id') !== clientId || redirectUri === null) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('unknown application');
      }
      codes.set(code, redirectUri);
      const target = new URL(redirectUri);
      target.searchParams.set('code', code);
      const state = query.get('state');
      if (state !== null) target.searchParams.set('state', state);
      res.writeHead(302, { location: target.toString() });
      return res.end();
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const raw = await readBody(req);
      let body: Record<string, unknown> = {};
      try {
        const parsed: unknown = JSON.parse(raw);
        if (typeof parsed === 'object' && parsed !== null) body = parsed as Record<string, unknown>;
      } catch {
        body = Object.fromEntries(new URLSearchParams(raw));
      }
      let answer: Record<string, unknown>;
      const code = typeof body.code === 'string' ? body.code : '';
      if (body.client_id !== clientId || body.client_secret !== clientSecret) {
        answer = { error: 'incorrect_client_credentials' };
      } else if (!codes.has(code)) {
        answer = { error: 'bad_verification_code' };
      } else if (body.redirect_uri !== undefined && body.redirect_uri !== codes.get(code)) {
        answer = { error: 'redirect_uri_mismatch' };
      } else {
        codes.delete(code);
        const accessToken = `gho_${randomBytes(18).toString('hex')}`;
        accessTokens.add(accessToken);
        answer = { access_token: accessToken, token_type: 'bearer', scope: 'read:user' };
      }
      exchanges.push({ contentType: req.headers['content-type'], accept: req.headers.accept, body, answer });
      // GitHub answers 200 with an error member for a bad code.
      return json(res, 200, answer);
    }
    if (req.method === 'GET' && url.pathname === '/user') {
      const authorization = req.headers.authorization;
      const token = /^Bearer (.+)$/i.exec(authorization ?? '')?.[1];
      const known = token !== undefined && accessTokens.has(token);
      userRequests.push({ authorization, status: known ? 200 : 401 });
      if (!known) return json(res, 401, { message: 'Bad credentials' });
      return json(res, 200, { id: user.id, login: user.login, type: 'User', name: null });
    }
    return json(res, 404, { message: 'Not Found' });
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) json(res, 500, { message: 'stand-in failure' });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    clientId,
    clientSecret,
    user,
    authorizations,
    exchanges,
    userRequests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
