/**
 * The shared auth suite: every owner route (collected from the app itself, so a new route cannot escape it) is
 * called with no header, a non-Bearer header, a malformed token, a token with a bad checksum, an unknown token, a
 * revoked token and, for routes under a drop, another account's drop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newApiToken } from '../src/domain/ids.js';
import { createHarness, type Harness, page } from './helpers.js';

let h: Harness;
let owner: string;
let stranger: string;
let revoked: string;
let slug: string;
let ownerTokenId: string;

beforeAll(async () => {
  h = await createHarness({ limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 } });
  owner = await h.token('owner');
  stranger = await h.token('stranger');
  revoked = await h.token('owner', 'to revoke');
  const created = await h.call('POST', '/api/drops', { token: owner, body: { title: 't', html: page() } });
  slug = created.json.slug;
  await h.call('PUT', `/api/drops/${slug}`, { token: owner, body: { html: page('2') } });
  ownerTokenId = (await h.call('GET', '/api/me', { token: owner })).json.token.id;
  const revokedId = (await h.call('GET', '/api/me', { token: revoked })).json.token.id;
  expect((await h.call('DELETE', `/api/tokens/${revokedId}`, { token: owner })).status).toBe(204);
});
afterAll(() => h.close());

function concrete(url: string): string {
  return url.replace(':slug', slug).replace(':n', '1').replace(':id', ownerTokenId);
}

const BODIES: Record<string, unknown> = {
  POST: { title: 't', html: page(), passcode: 'abcd', password: 'abcd', body: 'a comment', label: 'Dana' },
  PUT: { html: page() },
  PATCH: { title: 'x' },
};

describe('every owner route', () => {
  it('is covered: the app registers the expected owner routes', () => {
    const routes = h.app.ownerRoutes.map((r) => `${r.method} ${r.url}`);
    expect(routes).toEqual(
      expect.arrayContaining([
        'POST /api/drops',
        'GET /api/drops',
        'GET /api/drops/:slug',
        'PUT /api/drops/:slug',
        'PATCH /api/drops/:slug',
        'DELETE /api/drops/:slug',
        'GET /api/drops/:slug/versions',
        'GET /api/drops/:slug/v/:n',
        'DELETE /api/drops/:slug/v/:n',
        'POST /api/drops/:slug/v/:n/restore',
        'GET /api/drops/:slug/diff',
        'POST /api/drops/:slug/passcode',
        'GET /api/drops/:slug/stats',
        'POST /api/drops/:slug/links',
        'GET /api/drops/:slug/links',
        'DELETE /api/drops/:slug/links/:id',
        'GET /api/drops/:slug/access',
        'GET /api/me',
        'GET /api/tokens',
        'DELETE /api/tokens/:id',
        'GET /api/prototypes',
        'POST /api/prototypes',
        'GET /api/prototypes/:slug',
        'PUT /api/prototypes/:slug',
        'DELETE /api/prototypes/:slug',
        'POST /api/prototypes/:slug/password',
      ]),
    );
  });

  const cases: Array<[string, (() => Record<string, string>) | undefined, string]> = [
    ['no Authorization header', undefined, 'unauthorized'],
    ['a Basic header', () => ({ authorization: 'Basic YWxpY2U6c2VjcmV0' }), 'unauthorized'],
    ['"Bearer" without a token', () => ({ authorization: 'Bearer' }), 'unauthorized'],
    ['a malformed token', () => ({ authorization: 'Bearer not-a-token' }), 'invalid_token'],
    [
      'a token with a bad checksum',
      () => ({ authorization: `Bearer ${owner.slice(0, -1)}${owner.endsWith('A') ? 'B' : 'A'}` }),
      'invalid_token',
    ],
    ['an unknown token', () => ({ authorization: `Bearer ${newApiToken()}` }), 'invalid_token'],
    ['a revoked token', () => ({ authorization: `Bearer ${revoked}` }), 'invalid_token'],
  ];

  for (const [name, headers, code] of cases) {
    it(`answers 401 ${code} to ${name}, and changes nothing`, async () => {
      const before = await h.call('GET', `/api/drops/${slug}`, { token: owner });
      for (const route of h.app.ownerRoutes) {
        const reply = await h.call(route.method, concrete(route.url), {
          headers: headers?.() ?? {},
          ...(BODIES[route.method] === undefined ? {} : { body: BODIES[route.method] }),
        });
        expect(reply.status, `${route.method} ${route.url}`).toBe(401);
        expect(reply.json.error.code, `${route.method} ${route.url}`).toBe(code);
        expect(reply.headers['www-authenticate']).toMatch(/^Bearer/);
      }
      const after = await h.call('GET', `/api/drops/${slug}`, { token: owner });
      expect(after.json).toEqual(before.json);
    });
  }

  it("answers 403 forbidden on another account's drop, and changes nothing", async () => {
    const before = await h.call('GET', `/api/drops/${slug}`, { token: owner });
    const dropRoutes = h.app.ownerRoutes.filter((r) => r.url.includes(':slug'));
    expect(dropRoutes.length).toBe(23);
    for (const route of dropRoutes) {
      const reply = await h.call(route.method, concrete(route.url), {
        token: stranger,
        ...(BODIES[route.method] === undefined ? {} : { body: BODIES[route.method] }),
      });
      expect(reply.status, `${route.method} ${route.url}`).toBe(403);
      expect(reply.json.error.code).toBe('forbidden');
    }
    const after = await h.call('GET', `/api/drops/${slug}`, { token: owner });
    expect(after.json).toEqual(before.json);
    expect((await h.call('GET', `/api/drops/${slug}/versions`, { token: owner })).json).toHaveLength(2);
  });

  it("does not list or reveal another account's drops or tokens", async () => {
    expect((await h.call('GET', '/api/drops', { token: stranger })).json.data).toEqual([]);
    expect((await h.call('GET', '/api/prototypes', { token: stranger })).json).toEqual([]);
    const tokens = await h.call('GET', '/api/tokens', { token: stranger });
    expect(tokens.json.map((t: { id: string }) => t.id)).not.toContain(ownerTokenId);
    expect((await h.call('DELETE', `/api/tokens/${ownerTokenId}`, { token: stranger })).status).toBe(404);
  });

  it('stores tokens only as SHA-256 hashes', async () => {
    const rows = await h.store.listActiveTokens((await h.call('GET', '/api/me', { token: owner })).json.user_id);
    expect(JSON.stringify(rows)).not.toContain(owner);
  });
});
