/**
 * The CLI's version history and concurrency, spawned as a user runs it against the real service: diff, restore,
 * --if-match, --expires end to end, and upserts raced from two "machines" (two processes with their own HOME, so
 * their own lock directory) held at the same point by a preloaded barrier.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { diffText } from '../src/cli/commands/history.js';
import type { Drop, DropDiff, DropList } from '../src/types.js';
import type { UpsertConflict } from '../src/upsert.js';
import { PAGE, run, runJson, type Sandbox, tempDir, write } from './run.js';
import { expectOneLine, useService } from './service.js';

const service = useService({ HTMLDROP_MAX_WRITES_PER_MINUTE: '1000' });
const BARRIER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/lookup-barrier.mjs');

interface Published {
  readonly action: string;
  readonly drop: Drop;
  readonly conflicts?: UpsertConflict[];
}

let box: Sandbox & { token: string };
/** A drop published with an expiry about a minute ahead at the start; the last test sees it expire. */
let expiring: { drop: Drop; at: number };
beforeAll(async () => {
  box = await service.signedIn('historian');
  const at = Date.now() + 63_000;
  const file = write(box.cwd, 'soon.html', PAGE('gone soon'));
  const out = await runJson<Published>(box, ['publish', file, '--expires', new Date(at).toISOString()]);
  expect(out.code, out.stderr).toBe(0);
  // Served until its expiry: checked here, right after the publish, since under load the tests between here and the
  // one that waits for the expiry can take longer than the 63 s it has left.
  expect((await fetch(out.json.drop.url)).status).toBe(200);
  expiring = { drop: out.json.drop, at };
});

/** The HTML of version n of a drop, as served. */
async function rawOf(drop: Drop, version: number): Promise<string> {
  return (await fetch(`${drop.raw_url}?v=${version}`)).text();
}

/** Two CLI processes as two machines: their own HOME (lock directory), the same account, held after the lookup. */
async function race(args: (n: number) => string[]): Promise<Awaited<ReturnType<typeof runJson<Published>>>[]> {
  const machines = [await service.signedIn('historian'), await service.signedIn('historian')];
  const barrier = tempDir('htmldrop-barrier-');
  const env = {
    NODE_OPTIONS: `--import ${pathToFileURL(BARRIER).href}`,
    HTMLDROP_TEST_BARRIER_DIR: barrier,
    HTMLDROP_TEST_BARRIER_COUNT: '2',
  };
  const results = await Promise.all(
    machines.map(async (machine, n) => {
      const result = await run(machine, args(n), { env });
      return { ...result, json: JSON.parse(result.stdout || 'null') as Published };
    }),
  );
  expect(fs.readdirSync(barrier)).toHaveLength(2);
  return results;
}

describe('upserts from two machines at once', () => {
  it('both create at once: one drop, both documents kept as versions 1 and 2, the second says so', async () => {
    const results = await race((n) => {
      return [
        'publish',
        write(tempDir(), 'race.html', PAGE(`machine ${n}`)),
        '--title',
        'Race',
        '--upsert',
        'race=create',
      ];
    });
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expect(results.map((r) => r.json.action).sort()).toEqual(['created', 'updated']);
    const listed = await runJson<DropList>(box, ['list', '--meta', 'race=create']);
    expect(listed.json.data).toHaveLength(1);
    const drop = listed.json.data[0] as Drop;
    expect(drop.latest_version).toBe(2);
    const second = results.find((r) => r.json.action === 'updated');
    const first = results.find((r) => r.json.action === 'created');
    expect(second?.json.conflicts).toEqual([expect.objectContaining({ kind: 'created', slug: drop.slug, version: 1 })]);
    expect(second?.stderr).toContain(`htmldrop: warning: another writer created ${drop.slug} meanwhile (version 1)`);
    expect(first?.json.conflicts).toBeUndefined();
    const [one, two] = [await rawOf(drop, 1), await rawOf(drop, 2)];
    expect([one, two].map((html) => /machine (\d)/.exec(html)?.[1]).sort()).toEqual(['0', '1']);
  });

  it('both update at once: the PUT with If-Match loses for one, which publishes on top and says so', async () => {
    const file = write(box.cwd, 'base.html', PAGE('base'));
    const created = await runJson<Published>(box, ['publish', file, '--upsert', 'race=update']);
    expect(created.json.action).toBe('created');
    const results = await race((n) => [
      'publish',
      write(tempDir(), 'r.html', PAGE(`machine ${n}`)),
      '--upsert',
      'race=update',
    ]);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expect(results.map((r) => r.json.action)).toEqual(['updated', 'updated']);
    expect(results.map((r) => r.json.drop.latest_version).sort()).toEqual([2, 3]);
    const loser = results.find((r) => r.json.drop.latest_version === 3);
    const slug = created.json.drop.slug;
    expect(loser?.json.conflicts).toEqual([
      {
        kind: 'version',
        slug,
        version: 2,
        message: `another writer published version 2 of ${slug} meanwhile; publishing this document on top of it.`,
      },
    ]);
    expect(loser?.stderr).toContain(`htmldrop: warning: another writer published version 2 of ${slug} meanwhile`);
    const versions = [await rawOf(created.json.drop, 2), await rawOf(created.json.drop, 3)];
    expect(versions.map((html) => /machine (\d)/.exec(html)?.[1]).sort()).toEqual(['0', '1']);
  });
});

describe('diff and restore', () => {
  let slug: string;
  beforeAll(async () => {
    const file = write(box.cwd, 'doc.html', PAGE('first line'));
    slug = (await runJson<Published>(box, ['publish', file])).json.drop.slug;
    write(box.cwd, 'doc.html', PAGE('second line'));
    expect((await run(box, ['update', slug, file])).code).toBe(0);
  });

  it('diff prints the JSON of the service, and for people the unified diff and a summary, uncoloured off a terminal', async () => {
    const json = await runJson<DropDiff>(box, ['diff', slug]);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json).toMatchObject({ from: 1, to: 2, added: 1, removed: 1 });
    expect(json.json.unified).toMatch(/^-.*first line/m);
    expect(json.json.unified).toMatch(/^\+.*second line/m);
    const human = await run(box, ['diff', slug, '--from', '1', '--to', '2', '--human']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).not.toContain('\x1b[');
    expect(human.stdout).toMatch(/^\+.*second line/m);
    expect(human.stdout.trimEnd().split('\n').at(-1)).toBe('+1 -1 lines, version 1 to version 2');
    const same = await run(box, ['diff', slug, '--from', '2', '--to', '2', '--human']);
    expect(same.stdout).toBe(
      `No changes between version 2 and version 2 of ${slug}.\n+0 -0 lines, version 2 to version 2\n`,
    );
    const missing = await run(box, ['diff', slug, '--from', '9']);
    expect(missing.code).toBe(4);
    expectOneLine(missing.stderr, /\[version_not_found\]/);
    expect((await run(box, ['diff', slug, '--from', 'one'])).code).toBe(2);
  });

  it('restore makes an old version the newest; --if-match guards it (exit 7, nothing changes)', async () => {
    const restored = await runJson<{ action: string; restored_version: number; drop: Drop }>(box, [
      'restore',
      slug,
      '1',
    ]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.json).toMatchObject({ action: 'restored', restored_version: 1, drop: { slug, latest_version: 3 } });
    expect(await rawOf(restored.json.drop, 3)).toContain('first line');
    const human = await run(box, ['restore', slug, '2', '--if-match', '3', '--human']);
    expect(human.stdout).toMatch(new RegExp(`^Restored version 2 of ${slug} as version 4\\nhttp://\\S+/p/${slug}\\n$`));
    const stale = await runJson<{ error: { code: string; details: { latest_version: number } } }>(box, [
      'restore',
      slug,
      '1',
      '--if-match',
      '3',
    ]);
    expect(stale.code).toBe(7);
    expect(stale.json.error).toMatchObject({ code: 'version_conflict', details: { latest_version: 4 } });
    expectOneLine(stale.stderr, /\[version_conflict\]/);
    expect((await run(box, ['restore', slug, '9'])).code).toBe(4);
    expect((await run(box, ['restore', slug])).code).toBe(2);
  });
});

describe('--if-match on update and rm', () => {
  it('uploads or deletes only while the version named is the latest', async () => {
    const file = write(box.cwd, 'guarded.html', PAGE('v1'));
    const slug = (await runJson<Published>(box, ['publish', file])).json.drop.slug;
    const ok = await runJson<Published>(box, ['update', slug, file, '--if-match', '1']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json.drop.latest_version).toBe(2);
    const stale = await run(box, ['update', slug, file, '--if-match', '1']);
    expect(stale.code).toBe(7);
    expectOneLine(stale.stderr, /\[version_conflict\]/);
    expect((await runJson<Drop>(box, ['show', slug])).json.latest_version).toBe(2);
    expect((await run(box, ['update', slug, file, '--if-match', 'latest'])).code).toBe(2);
    expect((await run(box, ['rm', slug, '--if-match', '1'])).code).toBe(7);
    expect((await run(box, ['rm', slug, '--version', '1', '--if-match', '2'])).code).toBe(2);
    expect((await run(box, ['rm', slug, '--if-match', '2'])).code).toBe(0);
    expect((await run(box, ['show', slug])).code).toBe(4);
  });
});

describe('--expires', () => {
  it('sets an expiry on publish, changes and clears it on update and upsert; refuses bad values before sending', async () => {
    const file = write(box.cwd, 'exp.html', PAGE('expiring'));
    const before = Date.now();
    const published = await runJson<Published>(box, ['publish', file, '--expires', '2h']);
    expect(published.code, published.stderr).toBe(0);
    const at = published.json.drop.expires_at ?? 0;
    expect(at).toBeGreaterThanOrEqual(before + 2 * 3_600_000);
    expect(at).toBeLessThanOrEqual(Date.now() + 2 * 3_600_000);
    const slug = published.json.drop.slug;
    const human = await run(box, ['show', slug, '--human']);
    expect(human.stdout).toMatch(/\nExpires {5}\d{4}-\d\d-\d\d \d\d:\d\dZ, in 2 hours\n/);
    const changed = await runJson<Published>(box, ['update', slug, file, '--expires', '30d']);
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.json.drop.expires_at).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    const cleared = await runJson<Published>(box, ['update', slug, file, '--expires', 'never']);
    expect(cleared.json.drop).toMatchObject({ latest_version: 3, expires_at: null });

    const tagged = await runJson<Published>(box, ['publish', file, '--upsert', 'exp=1', '--expires', '7d']);
    expect(tagged.json.drop.expires_at).toBeGreaterThan(Date.now() + 6 * 86_400_000);
    const untagged = await runJson<Published>(box, ['publish', file, '--upsert', 'exp=1', '--expires', 'never']);
    expect(untagged.json).toMatchObject({ action: 'updated', drop: { latest_version: 2, expires_at: null } });

    for (const bad of ['soon', '30s', '400d', '2001-01-01']) {
      const refused = await run(box, ['publish', file, '--expires', bad]);
      expect(refused.code, bad).toBe(2);
      expectOneLine(refused.stderr, /--expires .*\[usage\]/);
    }
    expect((await runJson<DropList>(box, ['list', '--meta', 'exp=1'])).json.data).toHaveLength(1);
  });

  it('an expired drop answers 410 on its pages and not_found (exit 4) to its owner', { timeout: 90_000 }, async () => {
    const { drop, at } = expiring;
    expect(drop.expires_at).toBe(at);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now() + 500)));
    expect((await fetch(drop.url)).status).toBe(410);
    expect((await fetch(drop.raw_url)).status).toBe(410);
    const shown = await run(box, ['show', drop.slug]);
    expect(shown.code).toBe(4);
    expectOneLine(shown.stderr, /\[not_found\]/);
  });
});

describe('diffText', () => {
  const diff = { from: 1, to: 2, unified: '--- a v1\n+++ a v2\n@@ -1 +1 @@\n-old\n+new\n', added: 1, removed: 1 };

  it('colours added, removed, hunk and header lines only when asked', () => {
    expect(diffText('a', diff, false)).toBe(
      '--- a v1\n+++ a v2\n@@ -1 +1 @@\n-old\n+new\n+1 -1 lines, version 1 to version 2',
    );
    const coloured = diffText('a', diff, true).split('\n');
    expect(coloured.slice(0, 5)).toEqual([
      '\x1b[1m--- a v1\x1b[0m',
      '\x1b[1m+++ a v2\x1b[0m',
      '\x1b[36m@@ -1 +1 @@\x1b[0m',
      '\x1b[31m-old\x1b[0m',
      '\x1b[32m+new\x1b[0m',
    ]);
    expect(coloured[5]).toBe('+1 -1 lines, version 1 to version 2');
    expect(diffText('a', { ...diff, exact: false }, false)).toMatch(/\(approximate: the documents are large\)$/);
  });
});
