/**
 * The remote MCP endpoint and OAuth for MCP clients (docs/api.md, "Remote MCP and OAuth"), on both databases: the
 * MCP SDK's own client over Streamable HTTP with a bearer token; discovery (RFC 9728, RFC 8414); registration
 * (RFC 7591); the authorization code with PKCE S256 from authorize to token, with the human's approval played over
 * HTTP (the browser version is mcp-oauth.browser.test.ts); and the refusals: wrong redirect URI, missing or wrong
 * verifier, replayed code, cross-site approval, revoked token on another instance.
 */
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './helpers.js';
import { buildTestApp, page } from './helpers.js';
import { approveOAuthAsHuman, signInAtConsole } from './human.js';
import { serveOnLoopback } from './served.js';

let h: Harness;
let base: string;
let alice: string;

beforeAll(async () => {
  ({ h, base } = await serveOnLoopback({ limits: { maxAuthStartsPerMinute: 1000 } }));
  alice = await h.token('alice', 'cli');
});
afterAll(async () => {
  await h?.close();
});

async function connect(token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'remote-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** A tool call's JSON answer; fails the test on an error result. */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
  expect(result.isError ?? false, text).toBe(false);
  return JSON.parse(text);
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

async function register(metadata: Record<string, unknown>) {
  const response = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(metadata),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const REDIRECT = 'http://127.0.0.1:33333/callback';

function authorizeUrl(clientId: string, challenge: string, extra: Record<string, string> = {}) {
  const url = new URL(`${base}/oauth/authorize`);
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-1',
    resource: `${base}/mcp`,
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
}

async function exchange(fields: Record<string, string>) {
  const response = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', redirect_uri: REDIRECT, ...fields }).toString(),
  });
  return { status: response.status, json: (await response.json()) as Record<string, string> };
}

/** A registered client and an approved code for it. */
async function approvedCode(name = 'Test Agent') {
  const { json: client } = await register({ client_name: name, redirect_uris: [REDIRECT] });
  const { verifier, challenge } = pkce();
  const back = await approveOAuthAsHuman(authorizeUrl(String(client.client_id), challenge), 'alice');
  return { clientId: String(client.client_id), verifier, back, code: back.searchParams.get('code') ?? '' };
}

describe('the remote MCP endpoint with a bearer token', () => {
  it('lists the stdio server tools, with html (no file) as the document', async () => {
    const client = await connect(alice);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'publish',
      'update',
      'list',
      'search',
      'get',
      'delete',
      'diff',
      'restore',
      'get_feedback',
      'resolve_comment',
      'get_stats',
      'get_access',
      'create_link',
    ]);
    const publish = tools.find((t) => t.name === 'publish');
    expect(Object.keys(publish?.inputSchema.properties ?? {})).toContain('html');
    expect(Object.keys(publish?.inputSchema.properties ?? {})).not.toContain('file');
    expect(client.getInstructions()).toMatch(/htmldrop hosts/);
    await client.close();
  });

  it('publishes, updates, lists and reads feedback as the token owner', async () => {
    const client = await connect(alice);
    const created = await call(client, 'publish', {
      title: 'Remote',
      html: page('one'),
      metadata: { project: 'remote' },
    });
    expect(created.action).toBe('created');
    const { slug } = created.drop;
    expect(created.drop.url).toBe(`${base}/p/${slug}`);
    const stored = await h.call('GET', `/api/drops/${slug}`, { token: alice });
    expect(stored.json.title).toBe('Remote');

    const updated = await call(client, 'update', { slug, html: page('two'), if_match: 1 });
    expect(updated.drop.latest_version).toBe(2);
    const stale = (await client.callTool({
      name: 'update',
      arguments: { slug, html: page('x'), if_match: 1 },
    })) as CallToolResult;
    expect(stale.isError).toBe(true);
    expect(JSON.stringify(stale.content)).toContain('version_conflict');

    const upserted = await call(client, 'publish', {
      title: 'Remote',
      html: page('three'),
      upsert_by: { project: 'remote' },
    });
    expect(upserted).toMatchObject({ action: 'updated', drop: { slug, latest_version: 3 } });

    const listed = await call(client, 'list', { metadata: { project: 'remote' } });
    expect(listed.data.map((d: { slug: string }) => d.slug)).toEqual([slug]);

    const comment = await h.call('POST', `/api/drops/${slug}/comments`, {
      token: alice,
      body: { body: 'Make it blue' },
    });
    expect(comment.status, comment.text).toBe(201);
    const feedback = await call(client, 'get_feedback', { slug });
    expect(feedback.data.map((c: { body: string }) => c.body)).toEqual(['Make it blue']);
    await client.close();
  });

  it('refuses a file path: the endpoint never reads the service machine', async () => {
    const client = await connect(alice);
    const result = (await client.callTool({
      name: 'publish',
      arguments: { title: 'x', file: '/etc/passwd' },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('usage');
    await client.close();
  });

  it('publishes and updates html with files given as contents (docs/api.md, "Many files in one drop"); no folder', async () => {
    const client = await connect(alice);
    const files = {
      'style.css': { content: 'p{color:red}' },
      'img/dot.png': { content: Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64'), encoding: 'base64' },
    };
    const created = await call(client, 'publish', { title: 'Remote files', html: page('files'), files });
    expect(created.warnings).toEqual([]);
    const { slug } = created.drop;
    const v1 = await h.call('GET', `/api/drops/${slug}/v/1`, { token: alice });
    expect(v1.json.files.map((f: { path: string }) => f.path)).toEqual(['img/dot.png', 'style.css']);
    await call(client, 'update', { slug, html: page('two'), files: { 'style.css': files['style.css'] } });
    const diff = await h.call('GET', `/api/drops/${slug}/diff`, { token: alice });
    expect(diff.json.files).toEqual({ added: [], removed: ['img/dot.png'], changed: [] });
    const folder = (await client.callTool({
      name: 'publish',
      arguments: { title: 'x', folder: '/etc' },
    })) as CallToolResult;
    expect(folder.isError).toBe(true);
    await client.close();
  });

  it('answers 401 with the resource metadata to missing, malformed and revoked tokens', async () => {
    const bare = await fetch(`${base}/mcp`, { method: 'POST', body: '{}' });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(bare.headers.get('access-control-allow-origin')).toBe('*');
    const malformed = await fetch(`${base}/mcp`, { method: 'POST', headers: { authorization: 'Bearer nope' } });
    expect(malformed.status).toBe(401);
    expect(malformed.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", resource_metadata=/);
    const doomed = await h.token('alice', 'doomed');
    const tokens = await h.call('GET', '/api/tokens', { token: doomed });
    const id = tokens.json.find((t: { label: string }) => t.label === 'doomed').id;
    expect((await h.call('DELETE', `/api/tokens/${id}`, { token: alice })).status).toBe(204);
    await expect(connect(doomed)).rejects.toThrow(/401|invalid_token/i);
  });

  it('keeps no sessions: GET and DELETE are 405; a batch is bounded; preflight is open', async () => {
    const auth = { authorization: `Bearer ${alice}` };
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${base}/mcp`, { method, headers: auth });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
    const batch = Array.from({ length: 11 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'tools/list' }));
    const tooMany = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(batch),
    });
    expect(tooMany.status).toBe(400);
    const preflight = await fetch(`${base}/mcp`, { method: 'OPTIONS', headers: { origin: 'https://app.example' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
  });
});

/** A JSON-RPC initialize request, as a client's first POST. */
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('what /mcp advertises and how it answers', () => {
  it('keeps a feedback wait under the 60 s after which clients give up, and says why', async () => {
    const client = await connect(alice);
    const { tools } = await client.listTools();
    const feedback = tools.find((t) => t.name === 'get_feedback');
    const wait = feedback?.inputSchema.properties?.wait as { maximum: number; description: string };
    expect(wait.maximum).toBe(45);
    expect(wait.description).toMatch(/60 s/);
    expect(feedback?.description).toMatch(/up to 45 s/);
    const tooLong = (await client.callTool({
      name: 'get_feedback',
      arguments: { all: true, wait: 50 },
    })) as CallToolResult;
    expect(tooLong.isError).toBe(true);
    await client.close();
  });

  it('does not advertise tools.listChanged: it has no stream to announce a change on', async () => {
    const client = await connect(alice);
    expect(client.getServerCapabilities()?.tools?.listChanged ?? false).toBe(false);
    await client.close();
  });

  it.each([
    ['application/json', 'application/json'],
    ['*/*', '*/*'],
    ['no Accept', undefined],
  ])('answers a client that accepts %s with one JSON body', async (_name, accept) => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${alice}`,
        'content-type': 'application/json',
        ...(accept === undefined ? {} : { accept }),
      },
      body: INITIALIZE,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const answer = (await response.json()) as { id: number; result: { serverInfo: { name: string } } };
    expect(answer).toMatchObject({ id: 1, result: { serverInfo: { name: 'htmldrop' } } });
  });

  it('still refuses a client that accepts neither JSON nor an event stream', async () => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json', accept: 'text/html' },
      body: INITIALIZE,
    });
    expect(response.status).toBe(406);
  });

  it.each(['application/json, text/event-stream', 'application/json'])(
    'closes the connection after the answer when the client sends Connection: close (Accept: %s)',
    async (accept) => {
      const port = Number(new URL(base).port);
      const { head, closedByServer } = await new Promise<{ head: string; closedByServer: boolean }>((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        let received = '';
        const timer = setTimeout(() => {
          socket.destroy();
          resolve({ head: received, closedByServer: false });
        }, 3000);
        socket.on('data', (data) => {
          received += data.toString('latin1');
        });
        socket.on('end', () => {
          clearTimeout(timer);
          resolve({ head: received, closedByServer: true });
        });
        socket.write(
          `POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice}\r\nContent-Type: application/json\r\n` +
            `Accept: ${accept}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(INITIALIZE)}\r\n\r\n${INITIALIZE}`,
        );
      });
      expect(head).toMatch(/^HTTP\/1\.1 200/);
      expect(head).toMatch(/\r\nconnection: close\r\n/i);
      expect(head).toContain('"serverInfo"');
      expect(closedByServer).toBe(true);
    },
  );
});

describe('OAuth discovery', () => {
  it('publishes the protected-resource and authorization-server metadata', async () => {
    const mcp = (await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()) as object;
    expect(mcp).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base] });
    const service = (await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json()) as object;
    expect(service).toMatchObject({ resource: base, authorization_servers: [base] });
    const server = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as object;
    expect(server).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
    });
  });
});

describe('dynamic client registration', () => {
  it('registers every client as public: no secret, whatever it asked for', async () => {
    const { status, json } = await register({
      client_name: 'Confidential?',
      redirect_uris: [REDIRECT, 'https://agent.example/cb', 'cursor://anysphere.cursor/oauth'],
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(status).toBe(201);
    expect(json.client_id).toMatch(/^hdc_[A-Za-z0-9]{32}$/);
    expect(json.client_secret).toBeUndefined();
    expect(json).toMatchObject({ token_endpoint_auth_method: 'none', client_name: 'Confidential?' });
  });

  it.each([
    ['an http URI off loopback', 'http://agent.example/cb', 'invalid_redirect_uri'],
    ['a javascript: URI', 'javascript:alert(1)', 'invalid_client_metadata'],
    ['a fragment', 'https://agent.example/cb#x', 'invalid_redirect_uri'],
    ['a data: URI', 'data:text/html,hi', 'invalid_client_metadata'],
    ['a host that would end a CSP directive', 'https://x;sandbox/cb', 'invalid_redirect_uri'],
  ])('refuses %s', async (_name, uri, code) => {
    const { status, json } = await register({ client_name: 'Bad', redirect_uris: [uri] });
    expect(status).toBe(400);
    expect([code, 'invalid_redirect_uri']).toContain(json.error);
  });

  it('neither advertises nor echoes a scope: the service has none', async () => {
    const { json } = await register({ client_name: 'Scoped', redirect_uris: [REDIRECT], scope: 'mcp:tools admin' });
    expect(json.scope).toBeUndefined();
    const server = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as object;
    const resource = (await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()) as object;
    expect(server).not.toHaveProperty('scopes_supported');
    expect(resource).not.toHaveProperty('scopes_supported');
  });

  it('keeps no control or format characters of the client name', async () => {
    const { json } = await register({ client_name: 'Good\u202eevil\u200b\u0007', redirect_uris: [REDIRECT] });
    expect(json.client_name).toBe('Good evil');
  });

  it('answers a malformed body in OAuth shape, never a stack trace', async () => {
    const response = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"redirect_uris": [',
    });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ error: 'invalid_request' });
    expect(text).not.toMatch(/at .*\.js/);
  });
});

describe('the authorization code with PKCE', () => {
  it('issues an hd_ token, listed with the client name and usable on /mcp', async () => {
    const { clientId, verifier, back, code } = await approvedCode('Claude Test');
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('iss')).toBe(base);
    const { status, json } = await exchange({ client_id: clientId, code, code_verifier: verifier });
    expect(status, JSON.stringify(json)).toBe(200);
    expect(json.token_type).toBe('Bearer');
    expect(json.access_token).toMatch(/^hd_/);
    const tokens = await h.call('GET', '/api/tokens', { token: json.access_token });
    expect(tokens.json.map((t: { label: string }) => t.label)).toContain('Claude Test');
    const client = await connect(json.access_token ?? '');
    expect((await call(client, 'list', {})).data).toBeInstanceOf(Array);
    await client.close();
  });

  it('refuses a missing or wrong verifier, and a replayed code (revoking its token)', async () => {
    const { clientId, verifier, code } = await approvedCode();
    const missing = await exchange({ client_id: clientId, code });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toBe('invalid_request');
    const wrong = await exchange({ client_id: clientId, code, code_verifier: pkce().verifier });
    expect(wrong.json.error).toBe('invalid_grant');
    const first = await exchange({ client_id: clientId, code, code_verifier: verifier });
    expect(first.status).toBe(200);
    const replay = await exchange({ client_id: clientId, code, code_verifier: verifier });
    expect(replay.json.error).toBe('invalid_grant');
    expect((await h.call('GET', '/api/me', { token: first.json.access_token })).status).toBe(401);
  });

  it('refuses a code for another redirect URI or another client', async () => {
    const { clientId, verifier, code } = await approvedCode();
    const other = await exchange({ client_id: clientId, code, code_verifier: verifier, redirect_uri: `${REDIRECT}2` });
    expect(other.json.error).toBe('invalid_grant');
    const { json: stranger } = await register({ client_name: 'Other', redirect_uris: [REDIRECT] });
    const foreign = await exchange({ client_id: String(stranger.client_id), code, code_verifier: verifier });
    expect(foreign.json.error).toBe('invalid_grant');
  });

  it('refuses an unregistered redirect URI without redirecting', async () => {
    const { json: client } = await register({ client_name: 'Exact', redirect_uris: [REDIRECT] });
    for (const uri of [
      'http://localhost:33333/callback',
      'https://evil.example/cb',
      `${REDIRECT}/more`,
      `${REDIRECT}?x=1`,
    ]) {
      const response = await fetch(authorizeUrl(String(client.client_id), pkce().challenge, { redirect_uri: uri }), {
        redirect: 'manual',
      });
      expect(response.status, uri).toBe(400);
      expect(response.headers.get('location')).toBeNull();
    }
  });

  it('lets a loopback redirect URI differ only in its port, and binds the code to the exact one', async () => {
    const { json: client } = await register({ client_name: 'Native', redirect_uris: [REDIRECT] });
    const clientId = String(client.client_id);
    const other = 'http://127.0.0.1:44444/callback';
    const { verifier, challenge } = pkce();
    const back = await approveOAuthAsHuman(authorizeUrl(clientId, challenge, { redirect_uri: other }), 'alice');
    expect(`${back.origin}${back.pathname}`).toBe(other);
    const code = back.searchParams.get('code') ?? '';
    const registered = await exchange({ client_id: clientId, code, code_verifier: verifier });
    expect(registered.json.error).toBe('invalid_grant');
    const exact = await exchange({ client_id: clientId, code, code_verifier: verifier, redirect_uri: other });
    expect(exact.status, JSON.stringify(exact.json)).toBe(200);
  });

  it('answers every other refusal to the browser, never by a redirect (no open redirector)', async () => {
    const phish = 'https://phish.example/';
    const { json: client } = await register({ client_name: 'Phish', redirect_uris: [phish] });
    const id = String(client.client_id);
    const cases: Array<[string, Record<string, string>, string[], string]> = [
      ['no response_type', {}, ['response_type'], 'unsupported_response_type'],
      ['no challenge', {}, ['code_challenge'], 'invalid_request'],
      ['a plain challenge', { code_challenge_method: 'plain' }, [], 'invalid_request'],
      ['a control character in state', { state: 'a\u0001b' }, [], 'invalid_request'],
      ['a state of 501 characters', { state: 'x'.repeat(501) }, [], 'invalid_request'],
      ['another resource', { resource: 'https://other.example/mcp' }, [], 'invalid_target'],
      ['an unknown client', { client_id: 'hdc_unknown' }, [], 'invalid_client'],
    ];
    for (const [name, extra, without, error] of cases) {
      const url = new URL(authorizeUrl(id, pkce().challenge, { redirect_uri: phish, ...extra }));
      for (const key of without) url.searchParams.delete(key);
      const response = await fetch(url, { redirect: 'manual' });
      expect(response.status, name).toBe(400);
      expect(response.headers.get('location'), name).toBeNull();
      expect(((await response.json()) as { error: string }).error, name).toBe(error);
    }
    const twice = new URL(authorizeUrl(id, pkce().challenge, { redirect_uri: phish }));
    twice.searchParams.append('redirect_uri', 'http://127.0.0.1:6666/cb');
    expect((await fetch(twice, { redirect: 'manual' })).status).toBe(400);
  });

  it('sends a denial back as access_denied, with state and iss', async () => {
    const { json: client } = await register({ client_name: 'Denied', redirect_uris: [REDIRECT] });
    const denied = await approveOAuthAsHuman(authorizeUrl(String(client.client_id), pkce().challenge), 'alice', {
      decision: 'deny',
    });
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe('st-1');
    expect(denied.searchParams.get('iss')).toBe(base);
    expect(denied.searchParams.get('code')).toBeNull();
  });
});

describe('the approval page', () => {
  async function approvalUrl() {
    const { json: client } = await register({ client_name: '<b>Sneaky</b>', redirect_uris: [REDIRECT] });
    const response = await fetch(authorizeUrl(String(client.client_id), pkce().challenge), { redirect: 'manual' });
    return new URL(response.headers.get('location') ?? '', base);
  }

  it('is unframeable, escapes the client name and asks to sign in', async () => {
    const url = await approvalUrl();
    expect(url.pathname).toBe('/verify/oauth');
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await response.text();
    expect(html).toContain('&lt;b&gt;Sneaky&lt;/b&gt;');
    expect(html).toContain('id="sign-in"');
  });

  it('opens signed in for a person who signed in at the console (one session), and approves', async () => {
    const url = await approvalUrl();
    const cookie = await signInAtConsole(base, 'alice');
    const html = await (await fetch(url, { headers: { cookie } })).text();
    expect(html).toContain('Signed in as <strong>alice</strong>');
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const decided = await fetch(`${base}/verify/oauth/decide`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base, cookie },
      body: new URLSearchParams({ request: url.searchParams.get('request') ?? '', csrf, decision: 'approve' }),
    });
    expect(decided.status).toBe(303);
    expect(new URL(decided.headers.get('location') ?? '').searchParams.get('code')).toMatch(/\S/);
  });

  it('refuses a decision without the session CSRF token or from another origin, and a tampered request', async () => {
    const url = await approvalUrl();
    const request = url.searchParams.get('request') ?? '';
    const post = (headers: Record<string, string>, fields: Record<string, string>) =>
      fetch(`${base}/verify/oauth/decide`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
      });
    const noSession = await post({ origin: base }, { request, decision: 'approve', csrf: 'x' });
    expect(noSession.status).toBe(403);
    const foreign = await post({ origin: 'https://evil.example' }, { request, decision: 'approve', csrf: 'x' });
    expect(foreign.status).toBe(403);
    const tampered = await fetch(`${base}/verify/oauth?request=${encodeURIComponent(`${request}x`)}`);
    expect(tampered.status).toBe(410);
  });
});

describe('another instance', () => {
  it('refuses an OAuth token at once after it is revoked on this one', async () => {
    const { clientId, verifier, code } = await approvedCode('Revoked Agent');
    const { json } = await exchange({ client_id: clientId, code, code_verifier: verifier });
    const token = json.access_token ?? '';
    const store = h.openStore();
    const { app: other } = await buildTestApp({ config: h.config, store });
    try {
      const init = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
      const headers = {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      };
      const before = await other.inject({ method: 'POST', url: '/mcp', headers, payload: JSON.stringify(init) });
      expect(before.statusCode).toBe(200);
      const tokens = await h.call('GET', '/api/tokens', { token });
      const id = tokens.json.find((t: { label: string }) => t.label === 'Revoked Agent').id;
      expect((await h.call('DELETE', `/api/tokens/${id}`, { token: alice })).status).toBe(204);
      const after = await other.inject({ method: 'POST', url: '/mcp', headers, payload: JSON.stringify(init) });
      expect(after.statusCode).toBe(401);
      expect(after.json().error.code).toBe('invalid_token');
    } finally {
      await other.close();
      await store.close();
    }
  });
});

describe('the budget of the unauthenticated endpoints', () => {
  it('refuses registrations past the hourly budget of an address with 429 and Retry-After', async () => {
    const tight = await serveOnLoopback({ limits: { maxAuthStartsPerMinute: 2 } });
    try {
      const attempt = () =>
        fetch(`${tight.base}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ client_name: 'Flood', redirect_uris: [REDIRECT] }),
        });
      expect((await attempt()).status).toBe(201);
      expect((await attempt()).status).toBe(201);
      const refused = await attempt();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as { error: string }).error).toBe('too_many_requests');
    } finally {
      await tight.h.close();
    }
  });
});
