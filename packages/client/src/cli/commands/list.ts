/** Commands that read drops: list, search, show, versions (docs/api.md section 4.3 and "Search"). */
import type { Drop, DropList, SortBy, SortOrder, VersionFile, VersionListItem } from '../../types.js';
import { integer, list, parsePairs, positional, str, usage, type Values } from '../args.js';
import type { Command } from '../context.js';
import { bytes, dropDetails, table, tags, when } from '../format.js';

const SORT_FIELDS: readonly SortBy[] = ['created_at', 'updated_at', 'view_count'];

/** The list query from --meta, --sort and --order, checked. */
function listQuery(values: Values) {
  const metadata = parsePairs(list(values, 'meta'), '--meta');
  const sort = str(values, 'sort');
  if (sort !== undefined && !SORT_FIELDS.includes(sort as SortBy)) {
    throw usage(`--sort is one of ${SORT_FIELDS.join(', ')} (got "${sort}").`);
  }
  const order = str(values, 'order');
  if (order !== undefined && order !== 'asc' && order !== 'desc')
    throw usage(`--order is asc or desc (got "${order}").`);
  return { metadata, sort, order };
}

/** The drops as a table, with the count. */
function dropsTable(data: readonly Drop[], total: number): string {
  if (data.length === 0) return total === 0 ? 'No drops.' : `No drops on this page (${total} in all).`;
  const rows = [['SLUG', 'VER', 'VIEWS', 'UPDATED', 'TITLE']];
  for (const d of data) {
    const extras = [d.locked ? '[passcode]' : '', Object.keys(d.metadata).length > 0 ? `[${tags(d.metadata)}]` : '']
      .filter((s) => s !== '')
      .join(' ');
    rows.push([
      d.slug,
      String(d.latest_version),
      String(d.view_count),
      when(d.updated_at),
      `${d.title}${extras === '' ? '' : ` ${extras}`}`,
    ]);
  }
  return `${table(rows)}\n${data.length} of ${total} drop${total === 1 ? '' : 's'}`;
}

/** `htmldrop list`. */
export const listCommand: Command = {
  usage: 'list [--meta k=v]... [--sort created_at|updated_at|view_count] [--order asc|desc] [--limit n] [--page n]',
  summary: 'List your drops',
  help: `Lists your drops, newest first.

  --meta k=v     keep drops tagged k=v; repeat for AND
  --sort <f>     created_at (default), updated_at or view_count
  --order <o>    desc (default) or asc
  --limit <n>    at most n drops (default 50; pages are fetched as needed)
  --page <n>     one page of --limit drops (at most 200), from 1`,
  options: {
    meta: { type: 'string', multiple: true },
    sort: { type: 'string' },
    order: { type: 'string' },
    limit: { type: 'string' },
    page: { type: 'string' },
  },
  async run(ctx, values) {
    const { metadata, sort, order } = listQuery(values);
    const pages = paging(values);
    const { client } = await ctx.authenticated();
    const query = {
      metadata,
      ...(sort === undefined ? {} : { sortBy: sort as SortBy }),
      ...(order === undefined ? {} : { sortOrder: order as SortOrder }),
    };
    const { data, total } = await pagesOf(pages, (p, pageSize) => client.listDrops({ ...query, page: p, pageSize }));
    ctx.out.result({ data, total_items: total }, () => dropsTable(data, total));
  },
};

/** --limit and --page, checked. */
function paging(values: Values) {
  const limit = integer(str(values, 'limit'), '--limit', 1) ?? 50;
  const page = integer(str(values, 'page'), '--page', 1);
  if (page !== undefined && limit > 200) throw usage('--limit is at most 200 with --page.');
  return { limit, page };
}

/** The drops of --limit and --page (one page of --limit, or pages fetched until --limit), and the total. */
async function pagesOf(
  { limit, page }: ReturnType<typeof paging>,
  fetchPage: (page: number, pageSize: number) => Promise<DropList>,
) {
  const pageSize = Math.min(limit, 200);
  const data: Drop[] = [];
  let total = 0;
  for (let p = page ?? 1; ; p++) {
    const result = await fetchPage(p, pageSize);
    total = result.pagination.total_items;
    data.push(...result.data);
    if (page !== undefined || data.length >= limit || p >= result.pagination.total_pages || result.data.length === 0) {
      break;
    }
  }
  return { data: data.slice(0, limit), total };
}

/** The drops a search found as a table, each followed by its snippet, with the count. */
function foundTable(data: readonly Drop[], total: number): string {
  if (data.length === 0) return total === 0 ? 'Nothing found.' : `Nothing on this page (${total} found in all).`;
  const lines = table([
    ['SLUG', 'UPDATED', 'FOUND IN', 'TITLE'],
    ...data.map((d) => [d.slug, when(d.updated_at), (d.match?.fields ?? []).join(',') || '-', d.title]),
  ]).split('\n');
  const out = [lines[0] as string];
  for (const [i, d] of data.entries()) {
    out.push(lines[i + 1] as string);
    if (d.match !== undefined && d.match.snippet !== '') out.push(`    ${d.match.snippet}`);
  }
  return `${out.join('\n')}\n${data.length} of ${total} found`;
}

/** `htmldrop search`. */
export const search: Command = {
  usage:
    'search <words>... [--meta k=v]... [--sort created_at|updated_at|view_count] [--order asc|desc] [--limit n] [--page n]',
  summary: 'Find your drops by what they say',
  help: `Finds your drops whose title, description, latest text or context hold every word (any case, with or
without accents; the last word may be the beginning of a word), best match first, each with where it matched and
the text around it. Quotes, -, * and OR are plain text. A word beginning with - goes after --.

  --meta k=v     keep drops tagged k=v; repeat for AND
  --sort <f>     created_at, updated_at or view_count instead of the best match first
  --order <o>    with --sort: desc (default) or asc
  --limit <n>    at most n drops (default 50; pages are fetched as needed)
  --page <n>     one page of --limit drops (at most 200), from 1`,
  options: {
    meta: { type: 'string', multiple: true },
    sort: { type: 'string' },
    order: { type: 'string' },
    limit: { type: 'string' },
    page: { type: 'string' },
  },
  async run(ctx, values, args) {
    const words = args.join(' ').trim();
    if (words === '') throw usage('search needs words to look for: htmldrop search <words>');
    if (words.length > 200) throw usage(`search takes at most 200 characters of words (got ${words.length}).`);
    const { metadata, sort, order } = listQuery(values);
    const pages = paging(values);
    const { client } = await ctx.authenticated();
    const query = {
      metadata,
      ...(sort === undefined ? {} : { sortBy: sort as SortBy }),
      ...(order === undefined ? {} : { sortOrder: order as SortOrder }),
    };
    const { data, total } = await pagesOf(pages, (p, pageSize) =>
      client.searchDrops(words, { ...query, page: p, pageSize }),
    );
    ctx.out.result({ data, total_items: total }, () => foundTable(data, total));
  },
};

/** A version's files (docs/api.md, "Many files in one drop"), one per line with its size and type; none: nothing. */
function filesLines(files: readonly VersionFile[], total: number | undefined): string[] {
  if (files.length === 0) return [];
  const width = Math.max(...files.map((f) => f.path.length));
  return [
    `Files    ${files.length}, ${bytes(total ?? 0)} with the HTML`,
    ...files.map((f) => `  ${f.path.padEnd(width)}  ${bytes(f.size_bytes).padStart(10)}  ${f.content_type}`),
  ];
}

/** `htmldrop show`. */
export const show: Command = {
  usage: 'show <slug> [--version n]',
  summary: 'Show a drop (or one version, with its context)',
  help: `Shows a drop's details. With --version n, shows that version's record, context included.`,
  options: { version: { type: 'string' } },
  async run(ctx, values, args) {
    const slug = positional(args, 0, 'slug', 'show');
    const version = integer(str(values, 'version'), '--version', 1);
    const { client } = await ctx.authenticated();
    if (version !== undefined) {
      const record = await client.getVersion(slug, version);
      ctx.out.result(record, () =>
        [
          `Version  ${record.version}${record.is_latest ? ' (latest)' : ''} of ${record.slug}`,
          `Size     ${bytes(record.size_bytes)}`,
          ...filesLines(record.files ?? [], record.total_bytes),
          `Created  ${when(record.created_at)}`,
          `Context  ${record.context === null ? '-' : `\n${record.context}`}`,
        ].join('\n'),
      );
      return;
    }
    const drop = await client.getDrop(slug);
    ctx.out.result(drop, () => dropDetails(drop));
  },
};

/** `htmldrop versions`. */
export const versions: Command = {
  usage: 'versions <slug>',
  summary: "List a drop's versions",
  help: 'Lists the versions of a drop, newest first.',
  options: {},
  async run(ctx, _values, args) {
    const slug = positional(args, 0, 'slug', 'versions');
    const { client } = await ctx.authenticated();
    const items: VersionListItem[] = await client.listVersions(slug);
    ctx.out.result(items, () =>
      table([
        ['VERSION', 'SIZE', 'CONTEXT', 'CREATED'],
        ...items.map((v) => [
          `${v.version}${v.is_latest ? ' (latest)' : ''}`,
          bytes(v.size_bytes),
          v.has_context ? 'yes' : '-',
          when(v.created_at),
        ]),
      ]),
    );
  },
};
