/**
 * Who can see a drop from the command line (docs/api.md, "Who can see a drop"): publish with --visibility and
 * --allow, `link` for one person, and `access` telling Dana's view through her link from Eve's refusal; the SDK's
 * link and access methods. Spawned as a user runs them against the real service.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { AccessEntry, Drop, RecipientLink } from '../src/types.js';
import { PAGE, run, runJson, type Sandbox, write } from './run.js';
import { useService } from './service.js';

const service = useService({ HTMLDROP_MAX_WRITES_PER_MINUTE: '1000' });

let box: Sandbox & { token: string };
beforeAll(async () => {
  box = await service.signedIn('olga');
});

const cookieOf = (response: Response, name: string) =>
  (response.headers.getSetCookie().find((c) => c.startsWith(`${name}=`)) ?? '').split(';')[0] ?? '';

/** Signs `login` in through the service's local provider, as a browser would; the session cookie. */
async function signIn(login: string): Promise<string> {
  const begin = await fetch(`${service.baseUrl}/console/login?next=/console`, { redirect: 'manual' });
  const state = new URL(begin.headers.get('location') ?? '', service.baseUrl).searchParams.get('state') ?? '';
  const done = await fetch(`${service.baseUrl}/verify/callback`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: cookieOf(begin, 'hd_signin'),
      origin: service.baseUrl,
    },
    body: new URLSearchParams({ state, username: login }).toString(),
  });
  expect(done.status).toBe(303);
  return cookieOf(done, 'hd_web');
}

describe('htmldrop publish --visibility, link and access', () => {
  it("tells Dana's view through her link from Eve's refusal", async () => {
    const file = write(box.cwd, 'report.html', PAGE('Figures for the client', 'Client report'));
    const published = await runJson<{ drop: Drop }>(box, [
      'publish',
      file,
      '--visibility',
      'people',
      '--allow',
      'dana@client.example',
    ]);
    expect(published.code, published.stderr).toBe(0);
    const { drop } = published.json;
    expect(drop).toMatchObject({ visibility: 'people', allow: ['dana@client.example'] });
    const human = await run(box, ['show', drop.slug]);
    expect(human.code, human.stderr).toBe(0);

    const made = await runJson<RecipientLink & { url: string }>(box, ['link', drop.slug, 'Dana']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.json.url).toMatch(new RegExp(`/p/${drop.slug}\\?k=[A-Za-z0-9]{32}$`));

    // Anonymous: refused. Dana with her link: shown. Eve, signed in but not on the list: refused.
    expect((await fetch(drop.url)).status).toBe(401);
    const dana = await fetch(made.json.url);
    expect(dana.status).toBe(200);
    expect(await dana.text()).toContain('Client report');
    const eve = await fetch(drop.url, { headers: { cookie: await signIn('eve') } });
    expect(eve.status).toBe(403);

    const access = await runJson<{ links: RecipientLink[]; access: AccessEntry[] }>(box, ['access', drop.slug]);
    expect(access.code, access.stderr).toBe(0);
    expect(access.json.links).toEqual([expect.objectContaining({ label: 'Dana', views: 1 })]);
    expect(access.json.access.slice(0, 2)).toEqual([
      expect.objectContaining({ outcome: 'refused', reason: 'not_on_list', who: { kind: 'person', name: 'eve' } }),
      expect.objectContaining({ outcome: 'viewed', reason: null, who: { kind: 'link', name: 'Dana' }, version: 1 }),
    ]);
    const text = await run(box, ['access', drop.slug, '--human']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('refused (not_on_list)');
    expect(text.stdout).toContain('eve');
    expect(text.stdout).toContain('link "Dana"');

    const revoked = await run(box, ['link', drop.slug, '--revoke', made.json.id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await fetch(made.json.url)).status).toBe(401);
  });

  it('refuses a bad --visibility before reading the file', async () => {
    const result = await run(box, ['publish', 'missing.html', '--visibility', 'friends']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--visibility');
  });
});
