/**
 * The lifetime of OAuth tokens (docs/api.md, "Remote MCP and OAuth"), on both databases, with the MCP SDK's own client
 * (`auth()` and the Streamable HTTP transport, as mcp-remote and the MCP Inspector use them) and an injected clock:
 * an access token expires after an hour and the SDK renews it with its refresh token and goes on; a refresh token
 * works once, and a second use ends the grant; RFC 7009 revocation; one live token per client and account after a
 * new sign-in; a new sign-in when the refresh token expired. Device-flow and operator tokens do not expire.
 */
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFRESH_REUSE_GRACE_MS } from '../src/domain/oauth-tokens.js';
import { createTestClock, type Harness } from './helpers.js';
import { approveOAuthAsHuman } from './human.js';
import { serveOnLoopback } from './served.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const REDIRECT = 'http://127.0.0.1:33333/callback';

let h: Harness;
let base: string;
let serverUrl: string;
const clock = createTestClock(Date.now());

beforeAll(async () => {
  ({ h, base } = await serveOnLoopback({ clock, limits: { maxAuthStartsPerMinute: 1000 } }));
  serverUrl = `${base}/mcp`;
});
afterAll(async () => {
  await h?.close();
});

/** An MCP client's OAuth state in memory, as the SDK keeps it; its human (alice) approves over HTTP. */
function sdkClient(name: string) {
  let information: OAuthClientInformationMixed | undefined;
  let tokens: OAuthTokens | undefined;
  let verifier = '';
  let code = '';
  let approvals = 0;
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return REDIRECT;
    },
    get clientMetadata() {
      return {
        client_name: name,
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
    },
    clientInformation: () => information,
    saveClientInformation: (saved) => {
      information = saved;
    },
    tokens: () => tokens,
    saveTokens: (saved) => {
      tokens = saved;
    },
    async redirectToAuthorization(url) {
      approvals += 1;
      code = (await approveOAuthAsHuman(url.href, 'alice')).searchParams.get('code') ?? '';
    },
    saveCodeVerifier: (saved) => {
      verifier = saved;
    },
    codeVerifier: () => verifier,
    invalidateCredentials(scope) {
      if (scope === 'all' || scope === 'tokens') tokens = undefined;
      if (scope === 'all' || scope === 'client') information = undefined;
    },
  };
  return {
    provider,
    clientId: () => (information as { client_id: string } | undefined)?.client_id ?? '',
    tokens: () => {
      if (tokens === undefined) throw new Error('no tokens');
      return tokens;
    },
    /** The code the human's approval sent back last. */
    code: () => code,
    /** How many times the client sent its human to approve it. */
    approvals: () => approvals,
    /** Signs in from scratch (or again): discovery, registration once, the human's approval, the exchange. */
    async signIn() {
      tokens = undefined;
      expect(await auth(provider, { serverUrl })).toBe('REDIRECT');
      expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED');
      return provider.tokens() as OAuthTokens;
    },
  };
}

async function connect(client: ReturnType<typeof sdkClient>) {
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: client.provider });
  const mcp = new Client({ name: 'token-test', version: '1.0.0' });
  await mcp.connect(transport);
  return { mcp, transport };
}

async function listDrops(mcp: Client) {
  const result = (await mcp.callTool({ name: 'list', arguments: {} })) as CallToolResult;
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
}

const me = async (token: string) => (await h.call('GET', '/api/me', { token })).status;

async function form(path: string, fields: Record<string, string>) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const refresh = (clientId: string, refreshToken: string) =>
  form('/oauth/token', { grant_type: 'refresh_token', client_id: clientId, refresh_token: refreshToken });
const revoke = (clientId: string, token: string) => form('/oauth/revoke', { client_id: clientId, token });

async function tokensOf(token: string) {
  const listed = await h.call('GET', '/api/tokens', { token });
  expect(listed.status).toBe(200);
  return listed.json as Array<{
    id: string;
    label: string;
    current: boolean;
    expires_at: number | null;
    renewable_until: number | null;
    oauth_client: { id: string; name: string } | null;
  }>;
}

describe('an access token from OAuth', () => {
  it('expires after an hour; the SDK renews it with its refresh token and goes on', async () => {
    const agent = sdkClient('Expiring Agent');
    const first = await agent.signIn();
    expect(first.token_type).toMatch(/^bearer$/i);
    expect(first.expires_in).toBe(3600);
    expect(first.access_token).toMatch(/^hd_/);
    expect(first.refresh_token).toMatch(/^hdr_[A-Za-z0-9]{43}$/);
    expect(first).not.toHaveProperty('scope');
    const { mcp } = await connect(agent);
    await listDrops(mcp);

    clock.advance(HOUR + 1000);
    expect(await me(first.access_token)).toBe(401);
    const expired = await h.call('GET', '/api/me', { token: first.access_token });
    expect(expired.json.error.code).toBe('invalid_token');
    expect(expired.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    await listDrops(mcp);
    const second = agent.tokens();
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(await me(second.access_token)).toBe(200);
    await mcp.close();
  });

  it('is listed with its client and its expiry, and an expired one still while its client may renew it', async () => {
    const agent = sdkClient('Listed Agent');
    const tokens = await agent.signIn();
    const cli = await h.token('alice', 'cli');
    const listed = (await tokensOf(cli)).find((t) => t.oauth_client?.id === agent.clientId());
    expect(listed).toMatchObject({
      label: 'Listed Agent',
      oauth_client: { id: agent.clientId(), name: 'Listed Agent' },
      expires_at: clock.now() + HOUR,
      renewable_until: clock.now() + 30 * DAY,
    });
    const own = (await tokensOf(cli)).find((t) => t.current);
    expect(own).toMatchObject({ expires_at: null, oauth_client: null, renewable_until: null });
    clock.advance(2 * HOUR);
    expect((await tokensOf(cli)).some((t) => t.id === listed?.id)).toBe(true);
    expect(await me(tokens.access_token)).toBe(401);
  });
});

describe('a refresh token', () => {
  it('works once: the old pair stops working, and a second use ends the grant', async () => {
    const agent = sdkClient('Rotating Agent');
    const first = await agent.signIn();
    const renewed = await refresh(agent.clientId(), first.refresh_token ?? '');
    expect(renewed.status, JSON.stringify(renewed.json)).toBe(200);
    expect(renewed.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const next = { access: String(renewed.json.access_token), refresh: String(renewed.json.refresh_token) };
    expect(await me(first.access_token)).toBe(401);
    expect(await me(next.access)).toBe(200);

    // Past the few seconds in which a second use is the same client's parallel renewal (the next test).
    clock.advance(REFRESH_REUSE_GRACE_MS);
    const replayed = await refresh(agent.clientId(), first.refresh_token ?? '');
    expect(replayed.status).toBe(400);
    expect(replayed.json.error).toBe('invalid_grant');
    // Someone used a spent refresh token: the whole grant is revoked, the legitimate holder's new pair included.
    expect(await me(next.access)).toBe(401);
    expect((await refresh(agent.clientId(), next.refresh)).json.error).toBe('invalid_grant');
  });

  it('presented again at once by its client (parallel requests after the hour) renews again; the grant lives', async () => {
    const agent = sdkClient('Parallel Agent');
    await agent.signIn();
    const approvals = agent.approvals();
    const { mcp } = await connect(agent);
    await listDrops(mcp);
    clock.advance(HOUR + 1000);
    // Four tool calls at once: each is refused, and the SDK renews once per refused request with the one refresh
    // token it holds. Each renewal gets a pair, none ends the grant, no human is asked.
    await Promise.all([listDrops(mcp), listDrops(mcp), listDrops(mcp), listDrops(mcp)]);
    expect(agent.approvals()).toBe(approvals);
    expect(await me(agent.tokens().access_token)).toBe(200);
    await listDrops(mcp);
    // The next renewal leaves one live token for the client again.
    clock.advance(HOUR + 1000);
    await listDrops(mcp);
    const mine = (await tokensOf(agent.tokens().access_token)).filter(
      (t) => t.oauth_client?.id === agent.clientId() && t.expires_at !== null && t.expires_at > clock.now(),
    );
    expect(mine).toHaveLength(1);
    await mcp.close();
  });

  it('is refused to another client, and after it expired (30 days after its issue)', async () => {
    const agent = sdkClient('Expiring Refresh');
    const other = sdkClient('Other Client');
    const tokens = await agent.signIn();
    await other.signIn();
    expect((await refresh(other.clientId(), tokens.refresh_token ?? '')).json.error).toBe('invalid_grant');
    clock.advance(30 * DAY + 1000);
    expect((await refresh(agent.clientId(), tokens.refresh_token ?? '')).json.error).toBe('invalid_grant');
  });

  it('once expired, the SDK client signs in again (the human approves) and goes on', async () => {
    const agent = sdkClient('Returning Agent');
    await agent.signIn();
    const { mcp, transport } = await connect(agent);
    await listDrops(mcp);
    clock.advance(31 * DAY);
    await expect(listDrops(mcp)).rejects.toThrow(/unauthorized/i);
    await transport.finishAuth(agent.code());
    await listDrops(mcp);
    await mcp.close();
  });
});

describe('RFC 7009 revocation', () => {
  it('answers 200 and the token stops working, with its refresh token', async () => {
    const agent = sdkClient('Revoked Agent');
    const tokens = await agent.signIn();
    const answer = await revoke(agent.clientId(), tokens.access_token);
    expect(answer).toEqual({ status: 200, json: {} });
    expect(await me(tokens.access_token)).toBe(401);
    expect((await refresh(agent.clientId(), tokens.refresh_token ?? '')).json.error).toBe('invalid_grant');
  });

  it('revoking the refresh token ends the access token too; an unknown token is not an error', async () => {
    const agent = sdkClient('Refresh Revoked');
    const tokens = await agent.signIn();
    expect((await revoke(agent.clientId(), tokens.refresh_token ?? '')).status).toBe(200);
    expect(await me(tokens.access_token)).toBe(401);
    expect(await revoke(agent.clientId(), 'hd_unknown')).toEqual({ status: 200, json: {} });
    expect(await revoke(agent.clientId(), tokens.access_token)).toEqual({ status: 200, json: {} });
  });

  it("refuses another client's token and a device-flow token, and leaves them working", async () => {
    const agent = sdkClient('Polite Agent');
    const other = sdkClient('Victim Agent');
    await agent.signIn();
    const victim = await other.signIn();
    const refused = await revoke(agent.clientId(), victim.access_token);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toBe('unauthorized_client');
    expect(await me(victim.access_token)).toBe(200);
    const cli = await h.token('alice', 'cli');
    expect((await revoke(agent.clientId(), cli)).json.error).toBe('unauthorized_client');
    expect(await me(cli)).toBe(200);
  });

  it('is advertised in the metadata', async () => {
    const metadata = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as object;
    expect(metadata).toMatchObject({
      revocation_endpoint: `${base}/oauth/revoke`,
      revocation_endpoint_auth_methods_supported: ['none'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
    });
  });
});

describe('signing in again', () => {
  it('leaves one live token per client and account: the earlier ones are revoked', async () => {
    const agent = sdkClient('MCP Inspector');
    const bystander = sdkClient('Bystander');
    const kept = await bystander.signIn();
    const cli = await h.token('alice', 'cli');
    const rounds = [await agent.signIn(), await agent.signIn(), await agent.signIn()];
    const mine = (await tokensOf(cli)).filter((t) => t.oauth_client?.id === agent.clientId());
    expect(mine).toHaveLength(1);
    const [first, second, third] = rounds;
    for (const earlier of [first, second]) {
      expect(await me(earlier?.access_token ?? '')).toBe(401);
      expect((await refresh(agent.clientId(), earlier?.refresh_token ?? '')).json.error).toBe('invalid_grant');
    }
    expect(await me(third?.access_token ?? '')).toBe(200);
    // Another client's token, and the CLI's, are not the same client's.
    expect(await me(kept.access_token)).toBe(200);
    expect(await me(cli)).toBe(200);
  });

  it('a token id a renewal replaced still revokes its grant (a page listed before the renewal)', async () => {
    const agent = sdkClient('Stale Page');
    const tokens = await agent.signIn();
    const cli = await h.token('alice', 'cli');
    const listedId = (await tokensOf(cli)).find((t) => t.oauth_client?.id === agent.clientId())?.id ?? '';
    const renewed = await refresh(agent.clientId(), tokens.refresh_token ?? '');
    expect((await h.call('DELETE', `/api/tokens/${listedId}`, { token: cli })).status).toBe(204);
    expect(await me(String(renewed.json.access_token))).toBe(401);
  });
});

describe('tokens that are not OAuth tokens', () => {
  it('do not expire: device-flow and operator tokens still work a year on', async () => {
    const cli = await h.token('alice', 'operator');
    clock.advance(366 * DAY);
    expect(await me(cli)).toBe(200);
    expect((await tokensOf(cli)).find((t) => t.current)).toMatchObject({ expires_at: null, renewable_until: null });
  });
});
