/**
 * The feedback loop from the command line (docs/api.md, "Comments" and "Read receipts"): `feedback` (with `--wait`
 * woken by a new comment), `resolve`, `update --resolves`, `publish --upsert --resolves`, `--comments` and `stats`,
 * spawned as a user runs them against the real service.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Comment, Drop, DropStats } from '../src/types.js';
import { PAGE, run, runJson, type Sandbox, spawnCli, write } from './run.js';
import { expectOneLine, useService } from './service.js';

const service = useService({ HTMLDROP_MAX_WRITES_PER_MINUTE: '1000', HTMLDROP_FLUSH_INTERVAL_MS: '100' });

let box: Sandbox & { token: string };
beforeAll(async () => {
  box = await service.signedIn('reviewer');
});

/** A new drop of the signed-in account, published with the CLI. */
async function publish(extra: string[] = []): Promise<Drop> {
  const file = write(box.cwd, 'page.html', PAGE('draft'));
  const out = await runJson<{ drop: Drop }>(box, ['publish', file, '--title', 'Draft', ...extra]);
  expect(out.code, out.stderr).toBe(0);
  return out.json.drop;
}

/** The owner's comment, posted through the API (as the viewer's Comments panel or another client would). */
async function comment(slug: string, body: string, quote?: string): Promise<Comment> {
  const reply = await fetch(`${service.baseUrl}/api/drops/${slug}/comments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${box.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ body, ...(quote === undefined ? {} : { quote }) }),
  });
  expect(reply.status).toBe(201);
  return (await reply.json()) as Comment;
}

type Feedback = { data: Comment[] };

describe('feedback', () => {
  it('prints every comment as the API answers it (JSON), and only the newer ones with --since', async () => {
    const drop = await publish();
    const empty = await runJson<Feedback>(box, ['feedback', drop.slug]);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.json).toEqual({ data: [] });
    const first = await comment(drop.slug, 'Check the totals', 'Revenue up 12%');
    const second = await comment(drop.slug, 'Typo in the title');
    const all = await runJson<Feedback>(box, ['feedback', drop.slug]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stderr).toBe('');
    expect(all.json).toEqual({ data: [first, second] });
    const newer = await runJson<Feedback>(box, ['feedback', drop.slug, '--since', String(first.created_at)]);
    expect(newer.json.data.map((c) => c.id)).toEqual([second.id]);
  });

  it('prints one block per comment for humans: id, version, author, time, state, quote, body', async () => {
    const drop = await publish();
    const made = await comment(drop.slug, 'Line one\nline two', 'Revenue up 12%');
    const out = await run(box, ['feedback', drop.slug, '--human']);
    expect(out.code, out.stderr).toBe(0);
    const [header, quote, body, two, blank, footer] = out.stdout.trimEnd().split('\n');
    expect(header).toMatch(
      new RegExp(`^${made.id}  version 1  reviewer \\(owner\\)  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\dZ  open$`),
    );
    expect([quote, body, two, blank]).toEqual(['  > Revenue up 12%', '  Line one', '  line two', '']);
    expect(footer).toBe(`1 comment; next call: --since ${made.created_at}`);
    const none = await run(box, ['feedback', drop.slug, '--human', '--since', String(made.created_at)]);
    expect(none.stdout).toMatch(/^No feedback after \d{4}-.*Z\.\n$/);
  });

  it('--all lists the comments of every drop, each naming its drop', async () => {
    const since = Date.now();
    const a = await publish();
    const b = await publish();
    await comment(a.slug, 'on a');
    await comment(b.slug, 'on b');
    const out = await runJson<Feedback>(box, ['feedback', '--all', '--since', String(since)]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json.data.map((c) => [c.slug, c.body])).toEqual([
      [a.slug, 'on a'],
      [b.slug, 'on b'],
    ]);
    const human = await run(box, ['feedback', '--all', '--since', String(since), '--human']);
    expect(human.stdout).toContain(` on ${a.slug}  version 1  `);
  });

  it('--wait holds until a comment is posted, and prints it within moments', async () => {
    const drop = await publish();
    const since = (await comment(drop.slug, 'before')).created_at;
    const started = Date.now();
    const child = spawnCli(box, ['feedback', drop.slug, '--since', String(since), '--wait', '30', '--json']);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    let finished = false;
    const exited = new Promise<number | null>((resolve) =>
      child.once('close', (code) => {
        finished = true;
        resolve(code);
      }),
    );
    child.stdin.end();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(finished, stderr).toBe(false);
    const posted = Date.now();
    const made = await comment(drop.slug, 'while you waited');
    const code = await exited;
    expect(code, stderr).toBe(0);
    expect(Date.now() - posted).toBeLessThan(2000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect((JSON.parse(stdout) as Feedback).data).toEqual([made]);
  });

  it('--wait ends with nothing after the wait, exit 0', async () => {
    const drop = await publish();
    const started = Date.now();
    const out = await runJson<Feedback>(box, ['feedback', drop.slug, '--wait', '1']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json).toEqual({ data: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const human = await run(box, ['feedback', drop.slug, '--wait', '1', '--human']);
    expect(human.stdout).toBe('No feedback within 1 s.\n');
    expect(human.stderr).toContain('Waiting up to 1 s for feedback');
  });

  it('refuses bad usage (exit 2) and an unknown drop (exit 4)', async () => {
    const missing = await run(box, ['feedback', '--human']);
    expect(missing.code).toBe(2);
    expectOneLine(missing.stderr, /feedback: missing <slug> \(or --all/);
    const both = await run(box, ['feedback', 'abc', '--all', '--human']);
    expect(both.code).toBe(2);
    expectOneLine(both.stderr, /not both/);
    const wait = await run(box, ['feedback', 'abc', '--wait', 'soon', '--human']);
    expect(wait.code).toBe(2);
    expectOneLine(wait.stderr, /--wait expects a whole number/);
    const unknown = await run(box, ['feedback', 'nosuchdrop', '--human']);
    expect(unknown.code).toBe(4);
    expectOneLine(unknown.stderr, /\[not_found\]\n$/);
  });
});

describe('resolve and --resolves', () => {
  it('resolve marks one comment resolved in the latest version', async () => {
    const drop = await publish();
    const made = await comment(drop.slug, 'fix it');
    const out = await runJson<Comment>(box, ['resolve', drop.slug, made.id]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json).toMatchObject({ id: made.id, resolved_in_version: 1, resolved_at: expect.any(Number) });
    const human = await run(box, ['resolve', drop.slug, made.id, '--human']);
    expect(human.stdout).toBe(`Resolved ${made.id} on ${drop.slug} in version 1.\n`);
    const listed = await run(box, ['feedback', drop.slug, '--human']);
    expect(listed.stdout).toMatch(/ {2}resolved in version 1 \d{4}-/);
    const unknown = await run(box, ['resolve', drop.slug, 'c_nosuchcomment000', '--human']);
    expect(unknown.code).toBe(4);
  });

  it('update --resolves marks the comments resolved in the new version; an unknown id uploads nothing (exit 2)', async () => {
    const drop = await publish();
    const one = await comment(drop.slug, 'one');
    const two = await comment(drop.slug, 'two');
    const three = await comment(drop.slug, 'three');
    const file = write(box.cwd, 'v2.html', PAGE('v2'));
    const refused = await run(box, [
      'update',
      drop.slug,
      file,
      '--resolves',
      `${one.id},c_nosuchcomment000`,
      '--human',
    ]);
    expect(refused.code).toBe(2);
    expectOneLine(refused.stderr, /\[invalid_arg\]\n$/);
    const out = await runJson<{ drop: Drop; resolved: string[] }>(box, [
      'update',
      drop.slug,
      file,
      '--resolves',
      `${one.id}, ${two.id}`,
    ]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json.drop.latest_version).toBe(2);
    expect(out.json.resolved).toEqual([one.id, two.id]);
    const listed = await runJson<Feedback>(box, ['feedback', drop.slug]);
    expect(listed.json.data.map((c) => [c.id, c.resolved_in_version])).toEqual([
      [one.id, 2],
      [two.id, 2],
      [three.id, null],
    ]);
    const human = await run(box, ['update', drop.slug, file, '--resolves', three.id, '--human']);
    expect(human.stdout).toContain(`\nResolved in version 3: ${three.id}\n`);
  });

  it('publish --upsert --resolves resolves in the matched drop; with no match or without --upsert nothing is published', async () => {
    const tags = ['--upsert', `loop=${Date.now()}`];
    const file = write(box.cwd, 'loop.html', PAGE('loop'));
    const none = await run(box, ['publish', file, ...tags, '--resolves', 'c_x', '--human']);
    expect(none.code).toBe(2);
    expectOneLine(none.stderr, /No drop matches .*nothing was published/);
    const first = await runJson<{ action: string; drop: Drop }>(box, ['publish', file, ...tags]);
    expect(first.json.action).toBe('created');
    const made = await comment(first.json.drop.slug, 'needs work');
    const second = await runJson<{ action: string; drop: Drop }>(box, [
      'publish',
      file,
      ...tags,
      '--resolves',
      made.id,
    ]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json).toMatchObject({ action: 'updated', drop: { latest_version: 2 } });
    const listed = await runJson<Feedback>(box, ['feedback', first.json.drop.slug]);
    expect(listed.json.data[0]?.resolved_in_version).toBe(2);
    const plain = await run(box, ['publish', file, '--resolves', made.id, '--human']);
    expect(plain.code).toBe(2);
    expectOneLine(plain.stderr, /--resolves .* use it with --upsert/);
  });
});

describe('--comments', () => {
  it('sets who may comment on publish, update and upsert; refuses other values (exit 2)', async () => {
    const drop = await publish(['--comments', 'open']);
    expect(drop.comments).toBe('open');
    const file = write(box.cwd, 'c.html', PAGE('c'));
    const off = await runJson<{ drop: Drop }>(box, ['update', drop.slug, file, '--comments', 'off']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.json.drop).toMatchObject({ comments: 'off', latest_version: 2 });
    const tags = ['--upsert', `comments=${Date.now()}`];
    const created = await runJson<{ drop: Drop }>(box, ['publish', file, ...tags, '--comments', 'off']);
    expect(created.json.drop.comments).toBe('off');
    const updated = await runJson<{ drop: Drop }>(box, ['publish', file, ...tags, '--comments', 'signed_in']);
    expect(updated.json.drop).toMatchObject({ comments: 'signed_in', latest_version: 2 });
    const shown = await run(box, ['show', drop.slug, '--human']);
    expect(shown.stdout).toMatch(/^Comments {4}off$/m);
    const bad = await run(box, ['publish', file, '--comments', 'everyone', '--human']);
    expect(bad.code).toBe(2);
    expectOneLine(bad.stderr, /--comments is one of off, signed_in, open/);
  });
});

describe('stats', () => {
  it('prints the read receipts, overall and per version', async () => {
    const drop = await publish();
    const before = await runJson<DropStats>(box, ['stats', drop.slug]);
    expect(before.code, before.stderr).toBe(0);
    expect(before.json).toEqual({
      links: [],
      views: 0,
      unique_viewers: 0,
      first_viewed_at: null,
      last_viewed_at: null,
      versions: [{ version: 1, views: 0, unique_viewers: 0, last_viewed_at: null }],
    });
    const viewer = await fetch(drop.url, {
      headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' },
    });
    expect(viewer.status).toBe(200);
    let after = before;
    for (let i = 0; i < 50 && after.json.views === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await runJson<DropStats>(box, ['stats', drop.slug]);
    }
    expect(after.json).toMatchObject({ views: 1, unique_viewers: 1, versions: [{ version: 1, views: 1 }] });
    const human = await run(box, ['stats', drop.slug, '--human']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^Views {9}1 \(1 viewer\)$/m);
    expect(human.stdout).toMatch(/^VERSION {2}VIEWS {2}VIEWERS {2}LAST VIEWED\n1 {8}1 {6}1 {8}\d{4}-/m);
    const unknown = await run(box, ['stats', 'nosuchdrop', '--human']);
    expect(unknown.code).toBe(4);
  });
});
