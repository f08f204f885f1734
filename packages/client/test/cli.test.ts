/** The `htmldrop` CLI, spawned as a user runs it, against the real service on loopback. */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Drop, DropList, TokenListItem, VersionListItem } from '../src/types.js';
import { PAGE, run, runJson, type Sandbox, write } from './run.js';
import { expectOneLine, useService } from './service.js';

const service = useService();

describe('publish, upsert, update', () => {
  let box: Sandbox & { token: string };
  beforeAll(async () => {
    box = await service.signedIn('publisher');
  });

  it('publishes a file and prints the drop; the public raw URL serves it', async () => {
    const file = write(box.cwd, 'report.html', PAGE('hello world'));
    const out = await runJson<{ action: string; drop: Drop; warnings: unknown[] }>(box, [
      'publish',
      file,
      '--title',
      'Report',
      '--description',
      'Weekly',
      '--meta',
      'project=acme',
    ]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toBe('');
    expect(out.json).toMatchObject({
      action: 'created',
      warnings: [],
      drop: { title: 'Report', description: 'Weekly', latest_version: 1, metadata: { project: 'acme' } },
    });
    const raw = await fetch(out.json.drop.raw_url);
    expect(await raw.text()).toContain('<p>hello world</p>');
    const human = await run(box, ['publish', file, '--human']);
    expect(human.code).toBe(0);
    // On loopback the service gives each drop its own origin, {label}.localhost (docs/api.md, "Each drop on its own origin").
    expect(human.stdout).toMatch(
      /^Published "Test page" \(version 1\)\nhttp:\/\/127\.0\.0\.1:\d+\/p\/\w+\nOwn origin: http:\/\/[a-z0-9]+\.localhost:\d+\/\n$/,
    );
  });

  it('reads stdin with "-", takes the title from <title>, and warns about what breaks in a standalone document', async () => {
    const html =
      '<html><head><title>Fragile</title><link rel="stylesheet" href="style.css"></head><body><img src="img/logo.png"><a href="https://example.com">ok</a><a href="#top">top</a></body></html>';
    const out = await runJson<{ drop: Drop; warnings: { code: string }[] }>(box, ['publish', '-'], html);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json.drop.title).toBe('Fragile');
    expect(out.json.warnings.map((w) => w.code)).toEqual(['missing_doctype', 'relative_reference']);
    expect(out.stderr).toContain('htmldrop: warning: stdin: The document does not start with <!doctype html>');
    expect(out.stderr).toContain('style.css, img/logo.png');
    expect(out.stderr).not.toContain('example.com');
  });

  it('upserts twice with the same tags: one drop, two versions; the second run updates', async () => {
    const file = write(box.cwd, 'weekly.html', PAGE('week 1'));
    const args = ['publish', file, '--title', 'Weekly', '--upsert', 'project=up', '--upsert', 'kind=weekly'];
    const first = await runJson<{ action: string; drop: Drop }>(box, args);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json.action).toBe('created');
    expect(first.json.drop.metadata).toEqual({ project: 'up', kind: 'weekly' });
    write(box.cwd, 'weekly.html', PAGE('week 2'));
    const second = await runJson<{ action: string; drop: Drop }>(box, [...args, '--meta', 'week=2']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json).toMatchObject({ action: 'updated', drop: { slug: first.json.drop.slug, latest_version: 2 } });
    expect(second.json.drop.metadata).toEqual({ project: 'up', kind: 'weekly', week: '2' });
    const listed = await runJson<DropList>(box, ['list', '--meta', 'project=up', '--meta', 'kind=weekly']);
    expect(listed.json.data.map((d) => d.slug)).toEqual([first.json.drop.slug]);
    expect(await (await fetch(first.json.drop.raw_url)).text()).toContain('week 2');
  });

  it('serializes concurrent upserts from two processes: still one drop', async () => {
    const file = write(box.cwd, 'race.html', PAGE('race'));
    const args = ['publish', file, '--title', 'Race', '--upsert', 'race=1'];
    const results = await Promise.all([
      runJson<{ action: string; drop: Drop }>(box, args),
      runJson<{ action: string; drop: Drop }>(box, args),
    ]);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expect(results.map((r) => r.json.action).sort()).toEqual(['created', 'updated']);
    expect(new Set(results.map((r) => r.json.drop.slug)).size).toBe(1);
    const listed = await runJson<DropList>(box, ['list', '--meta', 'race=1']);
    expect(listed.json.data).toHaveLength(1);
    expect(listed.json.data[0]?.latest_version).toBe(2);
    expect(fs.readdirSync(path.join(box.home, '.config', 'htmldrop', 'locks'))).toEqual([]);
  });

  it('refuses an upsert whose tags match several drops (exit 7) and changes nothing', async () => {
    const file = write(box.cwd, 'twin.html', PAGE('twin'));
    const a = await runJson<{ drop: Drop }>(box, ['publish', file, '--meta', 'twin=yes']);
    const b = await runJson<{ drop: Drop }>(box, ['publish', file, '--meta', 'twin=yes']);
    const out = await run(box, ['publish', file, '--upsert', 'twin=yes']);
    expect(out.code).toBe(7);
    expectOneLine(out.stderr, /2 drops match twin=yes: .*Refusing to guess.*\[upsert_ambiguous\]/);
    expect(out.stderr).toContain(a.json.drop.slug);
    expect(out.stderr).toContain(b.json.drop.slug);
    expect(JSON.parse(out.stdout)).toMatchObject({ error: { code: 'upsert_ambiguous' }, exit_code: 7 });
    for (const slug of [a.json.drop.slug, b.json.drop.slug]) {
      expect((await runJson<Drop>(box, ['show', slug])).json.latest_version).toBe(1);
    }
  });

  it('update uploads a new version, merges --meta, and records the context', async () => {
    const file = write(box.cwd, 'u.html', PAGE('v1'));
    const created = await runJson<{ drop: Drop }>(box, ['publish', file, '--meta', 'a=1', '--meta', 'b=2']);
    const slug = created.json.drop.slug;
    const context = write(box.cwd, 'why.txt', 'because the numbers changed');
    write(box.cwd, 'u.html', PAGE('v2'));
    const out = await runJson<{ action: string; drop: Drop }>(box, [
      'update',
      slug,
      file,
      '--title',
      'Renamed',
      '--context-file',
      context,
      '--meta',
      'b=3',
    ]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json.drop).toMatchObject({ title: 'Renamed', latest_version: 2, metadata: { a: '1', b: '3' } });
    const version = await runJson<{ context: string }>(box, ['show', slug, '--version', '2']);
    expect(version.json.context).toBe('because the numbers changed');
  });

  it('--network sets the policy on publish, update and upsert; the own origin is shown; a malformed one is refused', async () => {
    const file = write(box.cwd, 'sealed.html', PAGE('sealed'));
    const sealed = await runJson<{ drop: Drop }>(box, ['publish', file, '--network', 'none']);
    expect(sealed.code, sealed.stderr).toBe(0);
    expect(sealed.json.drop.network).toBe('none');
    expect(sealed.json.drop.content_url).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+\/$/);
    const slug = sealed.json.drop.slug;

    const human = await run(box, ['publish', file, '--network', 'none', '--human']);
    expect(human.stdout).toMatch(
      /\nOwn origin: http:\/\/[a-z0-9]+\.localhost:\d+\/\nNetwork: none \(no network access\)\n$/,
    );
    const shown = await run(box, ['show', slug, '--human']);
    expect(shown.stdout).toContain(`\nOwn origin  ${sealed.json.drop.content_url}\n`);
    expect(shown.stdout).toContain('\nNetwork     none (no network access)\n');

    const cdns = 'https://cdn.jsdelivr.net,https://unpkg.com';
    const listed = await runJson<{ drop: Drop }>(box, ['update', slug, file, '--network', cdns]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json.drop).toMatchObject({ latest_version: 2, network: cdns.split(',') });
    const unchanged = await runJson<{ drop: Drop }>(box, ['update', slug, file, '--title', 'Same policy']);
    expect(unchanged.json.drop).toMatchObject({ latest_version: 3, network: cdns.split(',') });
    const opened = await runJson<{ drop: Drop }>(box, ['update', slug, file, '--network', 'open']);
    expect(opened.json.drop).toMatchObject({ latest_version: 4, network: 'open' });

    const upserted = await runJson<{ action: string; drop: Drop }>(box, [
      'publish',
      file,
      '--upsert',
      'net=cli',
      '--network',
      'https://cdn.jsdelivr.net',
    ]);
    expect(upserted.json).toMatchObject({ action: 'created', drop: { network: ['https://cdn.jsdelivr.net'] } });
    const reupserted = await runJson<{ action: string; drop: Drop }>(box, [
      'publish',
      file,
      '--upsert',
      'net=cli',
      '--network',
      'none',
    ]);
    expect(reupserted.json).toMatchObject({ action: 'updated', drop: { latest_version: 2, network: 'none' } });

    for (const [bad, why] of [
      ['https://unpkg.com/react', /has no path \(\/react\); write https:\/\/unpkg\.com/],
      ['https://unpkg.com/', /no trailing slash/],
      ['none,https://unpkg.com', /open and none stand alone/],
      ['everything', /starts with http:\/\/ or https:\/\//],
    ] as const) {
      const refused = await run(box, ['publish', file, '--upsert', 'net=bad', '--network', bad]);
      expect(refused.code, bad).toBe(2);
      expectOneLine(refused.stderr, why);
      expect(refused.stderr.startsWith(`htmldrop: --network "${bad}": `), refused.stderr).toBe(true);
      expect(refused.stderr).toMatch(/\[usage\]\n$/);
    }
    expect((await run(box, ['update', slug, file, '--network', 'ftp://x.example'])).code).toBe(2);
    expect((await runJson<DropList>(box, ['list', '--meta', 'net=bad'])).json.data).toEqual([]);
    expect((await runJson<Drop>(box, ['show', slug])).json.latest_version).toBe(4);
  });
});

describe('list, versions, rm, passcode, tokens, revoke, open', () => {
  let box: Sandbox & { token: string };
  beforeAll(async () => {
    box = await service.signedIn('lister');
  });

  it('lists with metadata filters (AND), sort and limit', async () => {
    const file = write(box.cwd, 'p.html', PAGE('p'));
    for (const [team, env] of [
      ['red', 'prod'],
      ['red', 'dev'],
      ['blue', 'prod'],
    ]) {
      expect(
        (
          await run(box, [
            'publish',
            file,
            '--title',
            `${team}-${env}`,
            '--meta',
            `team=${team}`,
            '--meta',
            `env=${env}`,
          ])
        ).code,
      ).toBe(0);
    }
    const red = await runJson<DropList & { total_items: number }>(box, ['list', '--meta', 'team=red']);
    expect(red.json.data.map((d) => d.title)).toEqual(['red-dev', 'red-prod']);
    const both = await runJson<{ data: Drop[] }>(box, ['list', '--meta', 'team=red', '--meta', 'env=prod']);
    expect(both.json.data.map((d) => d.title)).toEqual(['red-prod']);
    const asc = await runJson<{ data: Drop[]; total_items: number }>(box, [
      'list',
      '--sort',
      'created_at',
      '--order',
      'asc',
      '--limit',
      '2',
    ]);
    expect(asc.json.data.map((d) => d.title)).toEqual(['red-prod', 'red-dev']);
    expect(asc.json.total_items).toBe(3);
    const human = await run(box, ['list', '--human', '--meta', 'team=blue']);
    expect(human.stdout).toMatch(
      /^SLUG\s+VER\s+VIEWS\s+UPDATED\s+TITLE\n\w+\s+1\s+0\s+.*blue-prod \[env=prod team=blue\]\n1 of 1 drop\n$/,
    );
    const bad = await run(box, ['list', '--sort', 'title']);
    expect(bad.code).toBe(2);
  });

  it('lists versions, deletes one, and refuses to delete the only one (exit 7)', async () => {
    const file = write(box.cwd, 'v.html', PAGE('v'));
    const slug = (await runJson<{ drop: Drop }>(box, ['publish', file])).json.drop.slug;
    await run(box, ['update', slug, file]);
    await run(box, ['update', slug, file]);
    const listed = await runJson<VersionListItem[]>(box, ['versions', slug]);
    expect(listed.json.map((v) => v.version)).toEqual([3, 2, 1]);
    const removed = await runJson<{ drop: Drop }>(box, ['rm', slug, '--version', '3']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.json.drop.latest_version).toBe(2);
    expect((await run(box, ['rm', slug, '--version', '1'])).code).toBe(0);
    const last = await run(box, ['rm', slug, '--version', '2']);
    expect(last.code).toBe(7);
    expectOneLine(last.stderr, /\[last_version_cannot_be_deleted\]/);
    const missing = await run(box, ['show', slug, '--version', '9']);
    expect(missing.code).toBe(4);
    expectOneLine(missing.stderr, /\[version_not_found\]/);
    expect((await run(box, ['rm', slug])).code).toBe(0);
    const gone = await run(box, ['show', slug]);
    expect(gone.code).toBe(4);
    expectOneLine(gone.stderr, /\[not_found\]/);
  });

  it('sets, reads from stdin, and removes a passcode', async () => {
    const file = write(box.cwd, 'secret.html', PAGE('secret'));
    const created = await runJson<{ drop: Drop }>(box, ['publish', file, '--passcode', 'open sesame']);
    expect(created.json.drop.locked).toBe(true);
    const slug = created.json.drop.slug;
    expect((await fetch(created.json.drop.raw_url)).status).toBe(401);
    const removed = await runJson<Drop>(box, ['passcode', slug, '--remove']);
    expect(removed.json.locked).toBe(false);
    expect((await fetch(created.json.drop.raw_url)).status).toBe(200);
    const fromStdin = await runJson<Drop>(box, ['passcode', slug, '-'], 'hunter22\n');
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(fromStdin.json.locked).toBe(true);
    const short = await run(box, ['passcode', slug, 'abc']);
    expect(short.code).toBe(2);
    expectOneLine(short.stderr, /\[passcode_too_short\]/);
    const neither = await run(box, ['passcode', slug]);
    expect(neither.code).toBe(2);
  });

  it('lists tokens and revokes one; a revoked token in use gives exit 3', async () => {
    const other = await service.signedIn('lister');
    const listed = await runJson<TokenListItem[]>(box, ['tokens']);
    expect(listed.json.length).toBeGreaterThanOrEqual(2);
    const mine = listed.json.find((t) => t.current);
    const theirs = listed.json.find((t) => !t.current);
    expect(mine).toBeDefined();
    // A device-flow token never expires and belongs to no OAuth client.
    expect(mine).toMatchObject({ expires_at: null, oauth_client: null, renewable_until: null });
    const human = await run(box, ['tokens', '--human']);
    expect(human.stdout.split('\n')[0]).toMatch(/^ID\s+CREATED\s+LAST USED\s+EXPIRES\s+RENEWS UNTIL\s+CLIENT\s+LABEL$/);
    expect(human.stdout).toMatch(/ \*\s.*\bnever\s+-\s+-\s/);
    const revoked = await runJson<{ revoked: string; current: boolean }>(box, ['revoke', theirs?.id ?? '']);
    expect(revoked.json).toEqual({ revoked: theirs?.id, current: false });
    const denied = await run(other, ['whoami']);
    expect(denied.code).toBe(3);
    expectOneLine(denied.stderr, /\[invalid_token\]/);
    const unknown = await run(box, ['revoke', '000000000000']);
    expect(unknown.code).toBe(4);
    expect((await run(box, ['revoke', 'nope'])).code).toBe(2);
  });

  it('opens the viewer through $BROWSER, and prints the URL when no opener works', async () => {
    const file = write(box.cwd, 'o.html', PAGE('o'));
    const drop = (await runJson<{ drop: Drop }>(box, ['publish', file])).json.drop;
    const seen = path.join(box.cwd, 'opened.txt');
    const browser = write(box.cwd, 'browser.sh', `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`);
    fs.chmodSync(browser, 0o755);
    const opened = await run(box, ['open', drop.slug, '--version', '1'], { env: { BROWSER: browser } });
    expect(JSON.parse(opened.stdout)).toEqual({ url: `${drop.url}?v=1`, opened: true });
    expect(fs.readFileSync(seen, 'utf8')).toBe(`${drop.url}?v=1`);
    const none = await run(box, ['open', drop.slug, '--raw', '--human'], { env: { BROWSER: '/nonexistent/browser' } });
    expect(none.code).toBe(0);
    expect(none.stdout).toBe(`${drop.raw_url}\n`);
  });
});
