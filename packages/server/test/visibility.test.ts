/**
 * Who can see a drop (docs/api.md, "Who can see a drop"): visibility and allow on the API, every path to a drop's
 * bytes for anonymous, signed-in-not-listed, listed, owner and link visitors, recipient links, the access log, and
 * caches that never answer a visitor who would be refused. Runs on both databases.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, page } from './helpers.js';

let h: Harness;
let owner: string;

beforeEach(async () => {
  h = await createHarness();
  owner = await h.token('olga');
});
afterEach(async () => {
  await h.close();
});

const publish = async (fields: Record<string, unknown> = {}) => {
  const created = await h.call('POST', '/api/drops', {
    token: owner,
    body: { title: 'Quarterly report', html: page('secret numbers'), ...fields },
  });
  expect(created.status).toBe(201);
  return created.json as { slug: string; visibility: string; allow: string[] };
};

describe('visibility and allow on the API', () => {
  it('defaults to public with an empty list, and is set by POST, PUT and PATCH', async () => {
    const plain = await publish();
    expect(plain).toMatchObject({ visibility: 'public', allow: [] });
    const people = await publish({ visibility: 'people', allow: ['Dana@Client.Example', 'eve', '@corp.example'] });
    expect(people).toMatchObject({ visibility: 'people', allow: ['dana@client.example', 'eve', '@corp.example'] });
    const put = await h.call('PUT', `/api/drops/${plain.slug}`, {
      token: owner,
      body: { html: page('v2'), visibility: 'signed_in' },
    });
    expect(put.json).toMatchObject({ visibility: 'signed_in', latest_version: 2, allow: [] });
    const patched = await h.call('PATCH', `/api/drops/${plain.slug}`, {
      token: owner,
      body: { visibility: 'people', allow: ['dana'] },
    });
    expect(patched.json).toMatchObject({ visibility: 'people', allow: ['dana'] });
    const got = await h.call('GET', `/api/drops/${plain.slug}`, { token: owner });
    expect(got.json).toMatchObject({ visibility: 'people', allow: ['dana'] });
    // A PATCH that does not name them keeps them.
    const kept = await h.call('PATCH', `/api/drops/${plain.slug}`, { token: owner, body: { title: 'Renamed' } });
    expect(kept.json).toMatchObject({ visibility: 'people', allow: ['dana'] });
  });

  it.each([
    [{ visibility: 'friends' }, 'visibility'],
    [{ visibility: 'people', allow: 'dana' }, 'allow'],
    [{ visibility: 'people', allow: ['not an entry'] }, 'allow'],
    [{ visibility: 'people', allow: ['@nodot'] }, 'allow'],
    [{ visibility: 'people', allow: ['a@b@c.example'] }, 'allow'],
    [{ visibility: 'people', allow: [''] }, 'allow'],
    [{ visibility: 'people', allow: Array.from({ length: 101 }, (_, i) => `user${i}`) }, 'allow'],
  ])('refuses %j with 400 invalid_arg', async (fields, field) => {
    const created = await h.call('POST', '/api/drops', { token: owner, body: { title: 't', html: page(), ...fields } });
    expect(created.status).toBe(400);
    expect(created.json.error.code).toBe('invalid_arg');
    expect(JSON.stringify(created.json.error)).toContain(field);
    const drop = await publish();
    const patched = await h.call('PATCH', `/api/drops/${drop.slug}`, { token: owner, body: fields });
    expect(patched.status).toBe(400);
    expect(patched.json.error.code).toBe('invalid_arg');
  });
});
