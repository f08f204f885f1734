/**
 * Finding drops again from the command line and the SDK (docs/api.md, "Search"): `htmldrop search <words>` as a table
 * and as JSON, and `searchDrops()`, against the real service on loopback.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/client.js';
import type { Drop } from '../src/types.js';
import { PAGE, run, runJson, type Sandbox, write } from './run.js';
import { useService } from './service.js';

const service = useService();

describe('htmldrop search', () => {
  let box: Sandbox & { token: string };
  let slug: string;
  beforeAll(async () => {
    box = await service.signedIn('searcher');
    const report = write(
      box.cwd,
      'report.html',
      PAGE('<h1>Quarterly review</h1><p>The Zürich office doubled its heron sightings this spring.</p>'),
    );
    const other = write(box.cwd, 'other.html', PAGE('<p>Nothing about birds here.</p>'));
    const published = await runJson<{ drop: Drop }>(box, ['publish', report, '--title', 'Q2', '--meta', 'team=ops']);
    expect(published.code, published.stderr).toBe(0);
    slug = published.json.drop.slug;
    expect((await run(box, ['publish', other, '--title', 'Other'])).code).toBe(0);
  });

  it('finds a drop by a phrase from its body, as JSON with its match', async () => {
    const out = await runJson<{ data: Drop[]; total_items: number }>(box, ['search', 'zurich', 'heron', 'sight']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json.total_items).toBe(1);
    expect(out.json.data.map((d) => d.slug)).toEqual([slug]);
    expect(out.json.data[0]?.match).toEqual({
      fields: ['content'],
      snippet: 'Quarterly review The Zürich office doubled its heron sightings this spring.',
    });
  });

  it('prints a table with where it matched and the snippet under each drop', async () => {
    const out = await run(box, ['search', 'heron', '--meta', 'team=ops', '--human']);
    expect(out.code, out.stderr).toBe(0);
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SLUG\s+UPDATED\s+FOUND IN\s+TITLE$/);
    expect(lines[1]).toMatch(new RegExp(`^${slug}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\dZ\\s+content\\s+Q2$`));
    expect(lines[2]).toBe('    Quarterly review The Zürich office doubled its heron sightings this spring.');
    expect(lines[3]).toBe('1 of 1 found');
    const none = await run(box, ['search', 'penguin', '--human']);
    expect(none.stdout).toBe('Nothing found.\n');
  });

  it('refuses no words and more than 200 characters as usage errors', async () => {
    const empty = await run(box, ['search']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('search needs words');
    const long = await run(box, ['search', 'x'.repeat(201)]);
    expect(long.code).toBe(2);
    expect(long.stderr).toContain('at most 200 characters');
  });

  it('searchDrops() in the SDK: the page, best match first, with match', async () => {
    const client = createClient({ server: service.baseUrl, token: box.token });
    const page = await client.searchDrops('birds');
    expect(page.data.map((d) => d.title)).toEqual(['Other']);
    expect(page.pagination).toMatchObject({ total_items: 1, sort_by: 'relevance' });
    expect(page.data[0]?.match?.fields).toEqual(['content']);
    const listed = await client.listDrops({ q: 'heron', metadata: { team: 'nobody' } });
    expect(listed.data).toEqual([]);
  });
});
