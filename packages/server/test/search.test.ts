/**
 * Finding drops again (docs/api.md, "Search"): `q` on `GET /api/drops`, on the suite's database (SQLite's FTS5, and
 * PostgreSQL's tsvector in the postgres project). Every expectation names exact sets, so both databases give the same
 * answers for this corpus.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tagTerm } from '../src/storage/kysely/search.js';
import { migrationProvider } from '../src/storage/migrations/index.js';
import { openAtMigration } from './databases.js';
import { createHarness, createTestClock, type Harness } from './helpers.js';

let h: Harness;
let alice: string;
let bob: string;

beforeAll(async () => {
  h = await createHarness({ limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 } });
  alice = await h.token('alice');
  bob = await h.token('bob');
});
afterAll(() => h.close());

const doc = (body: string, head = '') =>
  `<!doctype html><html><head><title>ignored head title</title>${head}</head><body>${body}</body></html>`;

async function create(body: Record<string, unknown>, token = alice): Promise<string> {
  const reply = await h.call('POST', '/api/drops', {
    token,
    body: { title: 'Untitled', html: doc('<p>x</p>'), ...body },
  });
  expect(reply.status, reply.text).toBe(201);
  return (reply.json as { slug: string }).slug;
}

interface Found {
  slug: string;
  title: string;
  match: { snippet: string; fields: string[] };
}

async function search(q: string, extra = '', token = alice) {
  const reply = await h.call('GET', `/api/drops?q=${encodeURIComponent(q)}${extra}`, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply.json as { data: Found[]; pagination: { total_items: number; sort_by: string; sort_order: string } };
}

const slugsOf = async (q: string, extra = '', token = alice) =>
  (await search(q, extra, token)).data.map((d) => d.slug).sort();

describe('q on GET /api/drops', () => {
  let inTitle: string;
  let inDescription: string;
  let inContent: string;
  let inContext: string;

  beforeAll(async () => {
    inTitle = await create({ title: 'Walrus migration plan' });
    inDescription = await create({ description: 'Notes about the narwhal survey' });
    inContent = await create({ html: doc('<h1>Field log</h1><p>We counted 41 pelicans near the <b>harbour</b>.</p>') });
    inContext = await create({ context: 'Made from the flamingo census of March.' });
  });

  it('finds a word in each field, and says which field matched with a snippet', async () => {
    for (const [q, slug, field] of [
      ['walrus', inTitle, 'title'],
      ['narwhal', inDescription, 'description'],
      ['pelicans', inContent, 'content'],
      ['flamingo', inContext, 'context'],
    ] as const) {
      const { data } = await search(q);
      expect(
        data.map((d) => d.slug),
        q,
      ).toEqual([slug]);
      expect(data[0]?.match.fields).toEqual([field]);
      expect(data[0]?.match.snippet.toLowerCase()).toContain(q);
    }
    const { data } = await search('pelicans');
    expect(data[0]?.match.snippet).toBe('Field log\nWe counted 41 pelicans near the harbour.'.replace('\n', ' '));
  });

  it('needs every word, each in any field', async () => {
    const both = await create({ title: 'Otter report', html: doc('<p>The otters like kelp forests.</p>') });
    await create({ title: 'Kelp only', html: doc('<p>Nothing else.</p>') });
    expect(await slugsOf('otter kelp')).toEqual([both]);
    const [found] = (await search('otter kelp')).data;
    expect(found?.match.fields).toEqual(['title', 'content']);
    expect(await slugsOf('otter walrus')).toEqual([]);
  });

  it('folds case and accents, both ways', async () => {
    const accented = await create({ html: doc('<p>Une tarte à la Crème Brûlée, au Café.</p>') });
    const plain = await create({ html: doc('<p>CREME brulee recipe from the cafe</p>') });
    expect(await slugsOf('creme brulee')).toEqual([accented, plain].sort());
    expect(await slugsOf('CRÈME BRÛLÉE')).toEqual([accented, plain].sort());
    expect(await slugsOf('café')).toEqual([accented, plain].sort());
    expect(await slugsOf('tarte')).toEqual([accented]);
  });

  it('finds words of other scripts alike on both databases', async () => {
    const slug = await create({
      html: doc(
        '<p>Ελληνικά κείμενα, привет мир, 日本語テキスト, ٣٤ items, ﬁnance, ŁÓDŹ, e-mail ann@example.com, v1.5</p>',
      ),
    });
    for (const q of [
      'ελληνικα',
      'ΚΕΙΜΕΝΑ',
      'ПРИВЕТ мир',
      '日本語テキスト',
      '日本',
      '٣٤',
      'finance',
      'łodz',
      'example com',
      'ann',
      'v1 5',
      'mail',
    ]) {
      expect(await slugsOf(q), q).toEqual([slug]);
    }
    for (const q of ['lodz', 'テキスト', '1.5x', 'annexample']) expect(await slugsOf(q), q).toEqual([]);
  });

  it('takes the last word as a prefix, and only the last', async () => {
    const slug = await create({ html: doc('<p>Quarterly summary of the hedgehog programme</p>') });
    expect(await slugsOf('quarter')).toEqual([slug]);
    expect(await slugsOf('hedgehog prog')).toEqual([slug]);
    expect(await slugsOf('quarter hedgehog')).toEqual([]);
  });

  it('does not match inside scripts, styles, tag names or attributes', async () => {
    await create({
      html: doc(
        '<script>const scriptonlyword = 1;</script><style>.styleonlyword{color:red}</style>' +
          '<section data-attronlyword="x" class="classonlyword"><p>visible prose</p></section>',
        '<meta name="description" content="metaonlyword">',
      ),
    });
    for (const q of ['scriptonlyword', 'styleonlyword', 'attronlyword', 'classonlyword', 'metaonlyword', 'section']) {
      expect(await slugsOf(q), q).toEqual([]);
    }
    expect((await slugsOf('visible prose')).length).toBe(1);
  });

  it('follows every write at once: PUT, PATCH, restore, deleting the latest version, delete', async () => {
    const slug = await create({ title: 'Gazelle', html: doc('<p>first aardvark text</p>'), context: 'ctx iguana' });
    expect(await slugsOf('aardvark')).toEqual([slug]);

    let reply = await h.call('PUT', `/api/drops/${slug}`, {
      token: alice,
      body: { html: doc('<p>second bonobo text</p>'), context: 'ctx jackal' },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(await slugsOf('aardvark')).toEqual([]);
    expect(await slugsOf('iguana')).toEqual([]);
    expect(await slugsOf('bonobo jackal')).toEqual([slug]);

    reply = await h.call('PATCH', `/api/drops/${slug}`, {
      token: alice,
      body: { title: 'Hyena', description: 'dingo' },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(await slugsOf('gazelle')).toEqual([]);
    expect(await slugsOf('hyena dingo bonobo')).toEqual([slug]);

    reply = await h.call('POST', `/api/drops/${slug}/v/1/restore`, { token: alice });
    expect(reply.status, reply.text).toBe(200);
    expect(await slugsOf('aardvark hyena')).toEqual([slug]);
    expect(await slugsOf('bonobo')).toEqual([]);

    reply = await h.call('DELETE', `/api/drops/${slug}/v/3`, { token: alice });
    expect(reply.status, reply.text).toBe(200);
    expect(await slugsOf('bonobo jackal')).toEqual([slug]);
    expect(await slugsOf('aardvark')).toEqual([]);

    reply = await h.call('DELETE', `/api/drops/${slug}`, { token: alice });
    expect(reply.status, reply.text).toBe(204);
    expect(await slugsOf('bonobo')).toEqual([]);
    expect(await slugsOf('hyena')).toEqual([]);
  });

  it("never shows another account's drops", async () => {
    const mine = await create({ title: 'Shared keyword lemur' });
    const theirs = await create({ title: 'Shared keyword lemur' }, bob);
    expect(await slugsOf('lemur')).toEqual([mine]);
    expect(await slugsOf('lemur', '', bob)).toEqual([theirs]);
  });

  it('combines with metadata filters, sorting and pagination', async () => {
    const a = await create({ title: 'Mongoose one', metadata: { project: 'zoo' } });
    const b = await create({ title: 'Mongoose two', metadata: { project: 'zoo' } });
    await create({ title: 'Mongoose three', metadata: { project: 'farm' } });
    expect(await slugsOf('mongoose', '&metadata.project=zoo')).toEqual([a, b].sort());
    const sorted = await search('mongoose', '&metadata.project=zoo&sortBy=created_at&sortOrder=asc');
    expect(sorted.data.map((d) => d.slug)).toEqual([a, b]);
    expect(sorted.pagination).toMatchObject({ sort_by: 'created_at', sort_order: 'asc', total_items: 2 });
    const first = await search('mongoose', '&pageSize=2&sortBy=created_at&sortOrder=asc');
    const second = await search('mongoose', '&pageSize=2&page=2&sortBy=created_at&sortOrder=asc');
    expect(first.pagination.total_items).toBe(3);
    expect([...first.data, ...second.data].map((d) => d.title)).toEqual([
      'Mongoose one',
      'Mongoose two',
      'Mongoose three',
    ]);
    // Two tags at once; a tag's value is matched whole, and a key with another's value matches nothing.
    const c = await create({ title: 'Mongoose four', metadata: { project: 'zoo', stage: 'final' } });
    expect(await slugsOf('mongoose', '&metadata.project=zoo&metadata.stage=final')).toEqual([c]);
    expect(await slugsOf('mongoose', '&metadata.project=zo')).toEqual([]);
    expect(await slugsOf('mongoose', '&metadata.stage=zoo')).toEqual([]);
    // A word spelled like a tag's term in the index matches no tag (SQLite keeps tags as terms of their own column).
    expect(await slugsOf(tagTerm('stage', 'final'))).toEqual([]);
    expect(await slugsOf(`mongoose ${tagTerm('project', 'zoo')}`)).toEqual([]);
    // New tags are searched at once, the old ones no more; the words stay.
    const reply = await h.call('PATCH', `/api/drops/${a}`, { token: alice, body: { metadata: { project: 'farm' } } });
    expect(reply.status, reply.text).toBe(200);
    expect(await slugsOf('mongoose', '&metadata.project=zoo')).toEqual([b, c].sort());
    expect((await slugsOf('mongoose one', '&metadata.project=farm')).includes(a)).toBe(true);
  });

  it('orders by relevance unless a sort is given: a title match before a match in the text', async () => {
    const inText = await create({ title: 'Misc', html: doc('<p>A note on the axolotl tank.</p>') });
    const titled = await create({ title: 'Axolotl care', html: doc('<p>Water and food.</p>') });
    const found = await search('axolotl');
    expect(found.data.map((d) => d.slug)).toEqual([titled, inText]);
    expect(found.pagination).toMatchObject({ sort_by: 'relevance', sort_order: 'desc' });
  });

  it('reads query syntax and SQL as plain text: no error, no injection', async () => {
    const slug = await create({ title: 'Syntax test', html: doc('<p>tapir and or not near</p>') });
    const cases: Array<[string, string[]]> = [
      ['"tapir"', [slug]],
      ['-tapir', [slug]],
      ['tapir*', [slug]],
      ['tapir OR zzzz', []],
      ['tapir AND or', [slug]],
      ['NEAR(tapir not)', [slug]],
      ['title:tapir', []],
      ['content:tapir', []],
      ["tapir'; DROP TABLE drops; --", []],
      ["tapir' OR '1'='1", []],
      ['tapir & !zzzz | (x)', []],
      ['tapir:*', [slug]],
      ['^tapir', [slug]],
      ['{title} tapir', []],
      ['\\', []],
      ['"', []],
      ["'", []],
      ['***', []],
    ];
    for (const [q, expected] of cases) expect(await slugsOf(q), q).toEqual(expected);
    expect((await h.call('GET', '/api/drops', { token: alice })).status).toBe(200);
  });

  it('ignores a blank q, and refuses one over 200 characters with 400 invalid_arg', async () => {
    const all = (await h.call('GET', '/api/drops?pageSize=1', { token: alice })).json.pagination.total_items;
    const blank = await search('   ', '&pageSize=1');
    expect(blank.pagination.total_items).toBe(all);
    expect(blank.pagination.sort_by).toBe('created_at');
    expect((await search('a'.repeat(200))).data).toEqual([]);
    const reply = await h.call('GET', `/api/drops?q=${'a'.repeat(201)}`, { token: alice });
    expect(reply.status).toBe(400);
    expect(reply.json.error).toMatchObject({ code: 'invalid_arg', details: { field: 'q' } });
  });

  it('asks for the owner: no token, a malformed or revoked one is 401', async () => {
    expect((await h.call('GET', '/api/drops?q=walrus')).status).toBe(401);
    expect((await h.call('GET', '/api/drops?q=walrus', { token: 'hd_malformed' })).status).toBe(401);
    const revoked = await h.token('alice', 'soon revoked');
    const id = (await h.call('GET', '/api/me', { token: revoked })).json.token.id;
    expect((await h.call('DELETE', `/api/tokens/${id}`, { token: alice })).status).toBe(204);
    expect((await h.call('GET', '/api/drops?q=walrus', { token: revoked })).status).toBe(401);
  });

  it('finds drops made before the index existed: the migration indexes them', async () => {
    const before = await slugsOf('walrus');
    // Back to the migration before 0017 (which drops the index), then forward again: 0021 indexes them.
    const names = Object.keys(await migrationProvider.getMigrations()).sort();
    const previous = names[names.indexOf('0017-search-index') - 1] as string;
    const raw = await openAtMigration(h.database, previous);
    try {
      await h.store.migrate();
    } finally {
      await raw.destroy();
    }
    expect(await slugsOf('walrus')).toEqual(before);
    expect(await slugsOf('bonobo')).toEqual([]);
    expect((await search('pelicans')).data[0]?.match.fields).toEqual(['content']);
  });
  it("converts 0020's index and back (SQLite: prefixes of 2 and 3, the text packed with its words), keeping every match", async () => {
    const slug = await create({
      title: 'Okapi',
      description: 'quokka',
      html: doc('<p>narwhal prose</p>'),
      context: 'ctx wombat',
      metadata: { habitat: 'forest' },
    });
    const queries = ['okapi', 'quokka', 'narwhal', 'wombat', 'walrus', 'pelicans', 'p', 'qu', 'oka', 'narw'];
    const everything = async () =>
      Promise.all([
        ...queries.map(async (q) => (await search(q)).data),
        ...queries.map(async (q) => (await search(q, '&metadata.habitat=forest')).data),
      ]);
    const before = await everything();
    expect(before[0]?.map((d) => d.slug)).toEqual([slug]);
    const raw = await openAtMigration(h.database, '0020-search-owner');
    try {
      await h.store.migrate();
    } finally {
      await raw.destroy();
    }
    expect(await everything()).toEqual(before);
    // The one write that makes the words of the text and the context again: a new title.
    const reply = await h.call('PATCH', `/api/drops/${slug}`, { token: alice, body: { title: 'Serval' } });
    expect(reply.status, reply.text).toBe(200);
    expect(await slugsOf('serval quokka narwhal wombat')).toEqual([slug]);
    expect(await slugsOf('serval', '&metadata.habitat=forest')).toEqual([slug]);
    expect(await slugsOf('okapi')).toEqual([]);
  });
});

describe('q and expiry', () => {
  // The index keeps each drop's expiry (migration 0020): set on create, changed by PATCH through a trigger.
  const clock = createTestClock();
  let x: Harness;
  let carol: string;

  beforeAll(async () => {
    x = await createHarness({ clock, limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 } });
    carol = await x.token('carol');
  });
  afterAll(() => x.close());

  const post = async (expiresAt: number | null) => {
    const reply = await x.call('POST', '/api/drops', {
      token: carol,
      body: { title: 'Okapi sightings', html: doc('<p>okapi</p>'), expires_at: expiresAt },
    });
    expect(reply.status, reply.text).toBe(201);
    return (reply.json as { slug: string }).slug;
  };
  const found = async () => {
    const reply = await x.call('GET', '/api/drops?q=okapi', { token: carol });
    expect(reply.status, reply.text).toBe(200);
    return (reply.json as { data: { slug: string }[] }).data.map((d) => d.slug).sort();
  };
  const patch = async (slug: string, expiresAt: number | null) => {
    const reply = await x.call('PATCH', `/api/drops/${slug}`, { token: carol, body: { expires_at: expiresAt } });
    expect(reply.status, reply.text).toBe(200);
  };

  it('finds a drop until it expires, with the expiry PATCH last set', async () => {
    const hour = 3_600_000;
    const lasting = await post(clock.now() + hour);
    const shortened = await post(clock.now() + hour);
    const never = await post(null);
    expect(await found()).toEqual([lasting, shortened, never].sort());
    await patch(lasting, null);
    await patch(shortened, clock.now() + 120_000);
    clock.advance(5 * 60_000);
    expect(await found()).toEqual([lasting, never].sort());
    clock.advance(2 * hour);
    expect(await found()).toEqual([lasting, never].sort());
  });

  it('sorts by the dates the index keeps: created, and changed by any write (a PATCH, a PUT)', async () => {
    // The entry keeps its drop's dates (migration 0021), the time of the last change through a trigger.
    const sorted = async (by: string) => {
      const reply = await x.call('GET', `/api/drops?q=okapi&sortBy=${by}&sortOrder=desc&pageSize=100`, {
        token: carol,
      });
      expect(reply.status, reply.text).toBe(200);
      return (reply.json as { data: { slug: string }[] }).data.map((d) => d.slug);
    };
    clock.advance(60_000);
    const first = await post(null);
    clock.advance(60_000);
    const second = await post(null);
    clock.advance(60_000);
    expect((await sorted('created_at')).slice(0, 2)).toEqual([second, first]);
    expect((await sorted('updated_at')).slice(0, 2)).toEqual([second, first]);
    await x.call('PATCH', `/api/drops/${first}`, { token: carol, body: { description: 'seen again' } });
    expect((await sorted('updated_at')).slice(0, 2)).toEqual([first, second]);
    expect((await sorted('created_at')).slice(0, 2)).toEqual([second, first]);
    clock.advance(60_000);
    const put = await x.call('PUT', `/api/drops/${second}`, {
      token: carol,
      body: { html: doc('<p>okapi again</p>') },
    });
    expect(put.status, put.text).toBe(200);
    expect((await sorted('updated_at')).slice(0, 2)).toEqual([second, first]);
    // A PATCH that writes no entry (the expiry only) moves the date too.
    clock.advance(60_000);
    await patch(first, null);
    expect((await sorted('updated_at')).slice(0, 2)).toEqual([first, second]);
  });
});

describe('q when more drops match than relevance ranks', () => {
  // The window shrunk from RANK_WINDOW to 4 (docs/decisions/0040): the newest 4 matches are ranked, the older follow.
  let w: Harness;
  let dave: string;
  const created: string[] = [];

  beforeAll(async () => {
    w = await createHarness({
      store: { rankWindow: 4 },
      limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 },
    });
    dave = await w.token('dave');
    for (let i = 0; i < 10; i++) {
      // The oldest and the ninth have the word in their title: a relevance over all would put the oldest first.
      const title = i === 0 || i === 8 ? `Quokka census ${i}` : `Census ${i}`;
      const reply = await w.call('POST', '/api/drops', {
        token: dave,
        body: { title, html: doc('<p>Counted one quokka near the river.</p>') },
      });
      expect(reply.status, reply.text).toBe(201);
      created.push((reply.json as { slug: string }).slug);
    }
  });
  afterAll(() => w.close());

  const page = async (extra: string) => {
    const reply = await w.call('GET', `/api/drops?q=quokka${extra}`, { token: dave });
    expect(reply.status, reply.text).toBe(200);
    return reply.json as { data: { slug: string }[]; pagination: { total_items: number } };
  };

  it('ranks the newest matches, then lists the older ones newest first, over every page', async () => {
    const all = await page('&pageSize=20');
    expect(all.pagination.total_items).toBe(10);
    const order = all.data.map((d) => d.slug);
    expect(order[0]).toBe(created[8]);
    expect(order.slice(0, 4).sort()).toEqual(created.slice(6).sort());
    expect(order.slice(4)).toEqual(created.slice(0, 6).reverse());
    // Pages of 3 cross the window's edge (after 4) and give the same order, each drop once.
    const paged: string[] = [];
    for (let n = 1; n <= 4; n++) {
      const { data, pagination } = await page(`&pageSize=3&page=${n}`);
      expect(pagination.total_items).toBe(10);
      paged.push(...data.map((d) => d.slug));
    }
    expect(paged).toEqual(order);
  });

  it('a sort asked for covers every match', async () => {
    const { data } = await page('&pageSize=20&sortBy=created_at&sortOrder=asc');
    // Sorted by a time two creates may share: the set, not the order.
    expect(data.map((d) => d.slug).sort()).toEqual([...created].sort());
  });
});
