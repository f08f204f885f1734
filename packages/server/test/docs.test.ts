/**
 * The documentation cannot drift silently from the code. Each check reads the repository's files and fails with a
 * readable line per problem:
 *
 * - every source file of the server is named in the row of its own folder in docs/architecture.md's rooms table (a
 *   top-level file: in a row that names it), and every file a row names exists;
 * - every decision record under docs/decisions is linked from docs/README.md;
 * - the configuration table of docs/operating.md lists exactly the variables config.ts reads;
 * - the README stays short and carries no benchmark figures (they belong in bench/README.md);
 * - no README or doc shows a machine-specific absolute path (a home, workspace or scratch directory);
 * - every relative link in those documents reaches an existing file, and an existing heading when it names one.
 *
 * Each checker is a pure function over text, and a test feeds each one a bad input to see it fail.
 * `npm run check` runs this file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SRC = path.join(ROOT, 'packages/server/src');
const read = (relative: string) => fs.readFileSync(path.join(ROOT, relative), 'utf8');

/** The most lines the README may have: what it is, how to start, and links to the rest. */
const README_MAX_LINES = 250;

/** Server source files (tests excepted), relative to SRC with `/` separators. */
function sourceFiles(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) return [];
    return [path.relative(SRC, full).split(path.sep).join('/')];
  });
}

/** Markdown without fenced code blocks (their `#` lines are not headings, their text not links). */
const withoutCodeBlocks = (markdown: string) => markdown.replace(/^ *(```|~~~)[^\n]*\n[\s\S]*?^ *\1[^\n]*$/gm, '');

/** The text under a heading (any level) up to the next heading of the same or a higher level. */
function section(markdown: string, title: string): string {
  const lines = withoutCodeBlocks(markdown).split('\n');
  const start = lines.findIndex((line) => /^#{1,6} /.test(line) && line.replace(/^#+ /, '').trim() === title);
  if (start === -1) return '';
  const level = (lines[start] as string).indexOf(' ');
  const end = lines.findIndex((line, i) => i > start && /^#{1,6} /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/** The cells of a table row, splitting on `|` outside code spans. */
function cells(row: string): string[] {
  const found: string[] = [];
  let current = '';
  let inCode = false;
  for (const char of row.trim().replace(/^\|/, '').replace(/\|$/, '')) {
    if (char === '`') inCode = !inCode;
    if (char === '|' && !inCode) {
      found.push(current.trim());
      current = '';
    } else current += char;
  }
  found.push(current.trim());
  return found;
}

/** The body rows of the first table in `markdown` (header and separator left out), as cells. */
function firstTable(markdown: string): string[][] {
  const rows: string[][] = [];
  for (const line of markdown.split('\n')) {
    if (line.startsWith('|')) rows.push(cells(line));
    else if (rows.length > 0) break;
  }
  return rows.slice(2);
}

const codeSpans = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `name` as a whole file name in `text`: not part of a longer name, and not after a folder (`kysely/drops.ts`). */
const namesFile = (text: string, name: string) => new RegExp(`(?<![\\w./-])${escapeRegExp(name)}(?![\\w-])`).test(text);

/**
 * (a) The rooms table against the source tree. A row whose first cell names a folder (`storage/kysely/`) must name
 * every file of that folder; a top-level file must be named in the first cell of some row. Every `*.ts` a row names
 * must exist: a bare name in the row's folder (or at the top level), a path relative to the folder or to src/.
 */
function roomsProblems(files: readonly string[], table: readonly string[][], exists: (relative: string) => boolean) {
  const problems: string[] = [];
  const rows = table.map((row) => {
    const spans = codeSpans(row[0] ?? '');
    const folder = spans.find((span) => span.endsWith('/'));
    return {
      folder: folder?.replace(/\/$/, ''),
      topLevel: spans.filter((span) => span.endsWith('.ts')),
      text: row.slice(1).join(' | '),
    };
  });
  for (const file of files) {
    const slash = file.lastIndexOf('/');
    if (slash === -1) {
      if (!rows.some((row) => row.folder === undefined && row.topLevel.includes(file))) {
        problems.push(`${file} has no row of its own`);
      }
      continue;
    }
    const folder = file.slice(0, slash);
    const row = rows.find((candidate) => candidate.folder === folder);
    if (row === undefined) problems.push(`${folder}/ has no row (it holds ${file})`);
    else if (!namesFile(row.text, file.slice(slash + 1)))
      problems.push(`${file} is not named in the row of ${folder}/`);
  }
  for (const row of rows) {
    if (row.folder !== undefined && !exists(`${row.folder}/`))
      problems.push(`the row of ${row.folder}/ names no folder`);
    for (const name of row.topLevel) if (!exists(name)) problems.push(`a row names ${name}, which does not exist`);
    for (const match of row.text.matchAll(/(?<![\w./-])((?:[\w.-]+\/)*[\w.-]+\.ts)(?![\w-])/g)) {
      const named = match[1] as string;
      const candidates = [path.posix.normalize(`${row.folder ?? '.'}/${named}`), path.posix.normalize(named)];
      if (!candidates.some(exists)) {
        problems.push(
          `the row of ${row.folder === undefined ? row.topLevel.join(', ') : `${row.folder}/`} names ${named}, which does not exist`,
        );
      }
    }
  }
  return problems;
}

/** (b) Decision records that docs/README.md does not link to, and links there to records that do not exist. */
function decisionIndexProblems(records: readonly string[], index: string): string[] {
  const linked = new Set([...index.matchAll(/\]\(decisions\/([^)#\s]+)\)/g)].map((match) => match[1] as string));
  return [
    ...records.filter((record) => !linked.has(record)).map((record) => `docs/README.md does not link ${record}`),
    ...[...linked]
      .filter((record) => !records.includes(record))
      .map((record) => `docs/README.md links ${record}, which does not exist`),
  ];
}

const SETTING = /\b(?:PORT|HOST|HTMLDROP_[A-Z0-9_]+)\b/g;

/** (c) The configuration table against config.ts: the `PORT`, `HOST` and `HTMLDROP_*` names of each, both ways. */
function configProblems(configSource: string, table: readonly string[][]): string[] {
  const names = new Set(configSource.match(SETTING) ?? []);
  const documented = new Set(
    table.flatMap((row) => codeSpans(row[0] ?? '').filter((span) => /^(PORT|HOST|HTMLDROP_\w+)$/.test(span))),
  );
  return [
    ...[...names]
      .filter((name) => !documented.has(name))
      .map((name) => `${name} is read by config.ts but not in the table`),
    ...[...documented]
      .filter((name) => !names.has(name))
      .map((name) => `${name} is in the table but config.ts does not read it`),
  ];
}

/** (d) Lines over the README's budget. */
const lengthProblems = (text: string, max: number) => {
  const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
  return lines > max ? [`${lines} lines, more than ${max}`] : [];
};

/**
 * (e) Absolute paths that belong to one machine: under a home directory (`/home/<name>`, `/Users/<name>`, `/root`,
 * `C:\Users\`), a workspace or mount (`/work`, `/mnt/<name>`), or a scratch directory (`/tmp`, `/private/tmp`,
 * `/var/folders`), wherever they appear, code blocks included. System paths in deployment examples (`/usr/bin/…`,
 * `/etc/ssl/…`, `/var/lib/…`, `/proc`) are not about anyone's machine and pass, as do `~/…` and URLs' paths.
 */
const MACHINE_PATH =
  /(?<![\w.~:/-])(?:\/(?:home|Users|mnt)\/[^/\s`'")\]]+|\/root|\/work|\/tmp|\/private\/tmp|\/var\/folders)(?=[/\s`'")\]:]|$)|\b[A-Za-z]:\\Users\\/gm;
const machinePathProblems = (text: string) => (text.match(MACHINE_PATH) ?? []).map((found) => `machine path ${found}`);

/**
 * (f) Benchmark figures: a table row with a measured quantity (a time, a rate, a size, or a ratio such as `0.96` or
 * `1.13x`), any number in a table whose header names a measure (req/s, latency, p99, CPU, ratio, …), or a sentence
 * with a throughput or a percentile latency. Numbers belong in bench/README.md.
 */
function figureProblems(markdown: string): string[] {
  const problems: string[] = [];
  const measured = /\b\d[\d,]*(?:\.\d+)?\s?(?:ms|µs|us|ns|req\/s|requests\/s|MB|GB|KB|MiB|x)(?![\w/])|\b\d+\.\d{2,}\b/;
  const measureHeader =
    /req\/s|requests|creates|\bms\b|µs|\bp(?:50|95|99)\b|latency|throughput|\bcpu\b|ratio|\bRSS\b|bytes/i;
  const prose = /\b\d[\d,]*(?:\.\d+)?\s?(?:req(?:uests)?\/s|creates\/s)|\bp(?:50|95|99)\b[^.\n]*?\d(?:\.\d+)?\s?ms\b/;
  let header: string | undefined;
  for (const line of withoutCodeBlocks(markdown).split('\n')) {
    const isTableLine = line.startsWith('|');
    header = isTableLine ? (header ?? line) : undefined;
    const isBodyRow = isTableLine && line !== header && !/^\|[\s|:-]+\|$/.test(line);
    const figure = isBodyRow && (measured.test(line) || (measureHeader.test(header ?? '') && /\d/.test(line)));
    if (figure || prose.test(line)) problems.push(`figures: ${line.trim().slice(0, 100)}`);
  }
  return problems;
}

/** GitHub's anchor for each heading of a Markdown text (lowercased, punctuation dropped, spaces to hyphens). */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of withoutCodeBlocks(markdown).split('\n')) {
    const heading = /^#{1,6} (.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** (g) Relative links of a document (`file`, relative to ROOT) that reach no file, or no heading of the file. */
function linkProblems(file: string, markdown: string, readFile: (relative: string) => string | undefined): string[] {
  const problems: string[] = [];
  const text = withoutCodeBlocks(markdown).replace(/`[^`\n]*`/g, '``');
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const link = match[1] as string;
    if (/^[a-z][a-z+.-]*:/i.test(link)) continue;
    const [target = '', anchor] = link.split('#');
    const relative = target === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
    const content = readFile(relative.replace(/\/$/, ''));
    if (content === undefined) problems.push(`${file} links ${link}: no such file`);
    else if (anchor !== undefined && relative.endsWith('.md') && !anchorsOf(content).has(anchor)) {
      problems.push(`${file} links ${link}: no such heading`);
    }
  }
  return problems;
}

/** Every README and doc the checks read: the root README, the packages', bench's, and everything under docs/. */
function documents(): string[] {
  const docs = (dir: string): string[] =>
    fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
      const relative = `${dir}/${entry.name}`;
      if (entry.isDirectory()) return docs(relative);
      return entry.name.endsWith('.md') ? [relative] : [];
    });
  const packages = fs
    .readdirSync(path.join(ROOT, 'packages'))
    .map((name) => `packages/${name}/README.md`)
    .filter((file) => fs.existsSync(path.join(ROOT, file)));
  return ['README.md', ...packages, 'bench/README.md', ...docs('docs')];
}

/** A file's text, a directory's marker (''), or undefined when nothing is there. */
function readRepositoryFile(relative: string): string | undefined {
  const full = path.join(ROOT, relative);
  if (!fs.existsSync(full)) return undefined;
  return fs.statSync(full).isDirectory() ? '' : fs.readFileSync(full, 'utf8');
}

const existsInSrc = (relative: string) => fs.existsSync(path.join(SRC, relative));

describe('the docs match the code', () => {
  it('every server source file is named in the row of its own folder in docs/architecture.md, "Rooms"', () => {
    const table = firstTable(section(read('docs/architecture.md'), 'Rooms'));
    expect(table.length).toBeGreaterThan(10);
    expect(roomsProblems(sourceFiles(), table, existsInSrc)).toEqual([]);
  });

  it('every decision record is linked from docs/README.md', () => {
    const records = fs.readdirSync(path.join(ROOT, 'docs/decisions')).filter((name) => name.endsWith('.md'));
    expect(decisionIndexProblems(records, read('docs/README.md'))).toEqual([]);
  });

  it('the configuration table of docs/operating.md lists exactly what config.ts reads', () => {
    const table = firstTable(section(read('docs/operating.md'), 'Configuration'));
    expect(configProblems(read('packages/server/src/config.ts'), table)).toEqual([]);
  });

  it(`the README has at most ${README_MAX_LINES} lines and no benchmark figures`, () => {
    const readme = read('README.md');
    expect(lengthProblems(readme, README_MAX_LINES)).toEqual([]);
    expect(figureProblems(readme)).toEqual([]);
  });

  it.each(documents())('%s shows no machine-specific path, and its relative links resolve', (file) => {
    const text = read(file);
    expect(machinePathProblems(text)).toEqual([]);
    expect(linkProblems(file, text, readRepositoryFile)).toEqual([]);
  });
});

describe('each checker can fail', () => {
  it('rooms: a file missing from its folder row, named only in another folder row, or a row naming a stale file', () => {
    const files = ['server.ts', 'domain/drops.ts', 'storage/kysely/drops.ts', 'storage/index.ts'];
    const exists = (relative: string) =>
      ['domain/', 'storage/', 'storage/kysely/', 'server.ts', ...files].includes(relative);
    const good = [
      ['[`server.ts`](x)', 'the composition root'],
      ['[`domain/`](x)', 'drops (`drops.ts`)'],
      ['[`storage/`](x)', '`index.ts`, over `kysely/drops.ts`'],
      ['[`storage/kysely/`](x)', '`drops.ts`'],
    ];
    expect(roomsProblems(files, good, exists)).toEqual([]);
    const bad = [
      ['[`domain/`](x)', 'drops live in `storage/kysely/drops.ts`'],
      ['[`storage/`](x)', '`index.ts`, `drops.ts`, `raw-reply.ts`'],
      ['[`secrets.ts`](x)', 'keys'],
    ];
    expect(roomsProblems(files, bad, exists)).toEqual([
      'server.ts has no row of its own',
      'domain/drops.ts is not named in the row of domain/',
      'storage/kysely/ has no row (it holds storage/kysely/drops.ts)',
      'the row of storage/ names drops.ts, which does not exist',
      'the row of storage/ names raw-reply.ts, which does not exist',
      'a row names secrets.ts, which does not exist',
    ]);
  });

  it('decision index: a record not linked, a link to no record', () => {
    const index = '- [0001](decisions/0001-a.md): a\n- [0003](decisions/0003-c.md): c\n';
    expect(decisionIndexProblems(['0001-a.md', '0002-b.md'], index)).toEqual([
      'docs/README.md does not link 0002-b.md',
      'docs/README.md links 0003-c.md, which does not exist',
    ]);
  });

  it('configuration: a name read but not documented, a row for a name no longer read', () => {
    const source = "readInt(env, 'PORT', 8787);\nconst host = env.HOST;\nenv.HTMLDROP_NEW_SETTING;\n";
    const table = [
      ['`PORT`', '`8787`', 'listen port'],
      ['`HOST`, `HTMLDROP_GONE`', '', ''],
    ];
    expect(configProblems(source, table)).toEqual([
      'HTMLDROP_NEW_SETTING is read by config.ts but not in the table',
      'HTMLDROP_GONE is in the table but config.ts does not read it',
    ]);
  });

  it('README length: one line over the budget', () => {
    expect(lengthProblems('a\n'.repeat(3), 3)).toEqual([]);
    expect(lengthProblems('a\n'.repeat(4), 3)).toEqual(['4 lines, more than 3']);
  });

  it('machine paths: homes, workspaces and scratch directories fail; system paths, ~ and URLs pass', () => {
    const bad = [
      'the file /home/me/.config/htmldrop/token',
      'cd /work/site && npm start',
      '`/root/.npmrc`',
      'HTMLDROP_DATA_DIR=/tmp/htmldrop',
      'open /Users/ann/report.html',
      'C:\\Users\\ann\\report.html',
    ];
    for (const line of bad) expect(machinePathProblems(line), line).toHaveLength(1);
    const good = [
      "Debian's `chromium` at `/usr/bin/chromium`",
      'ssl_certificate /etc/ssl/drops.example.com/fullchain.pem;',
      '`~/.config/htmldrop/token` and `./.htmldrop/token`',
      'https://example.com/home/me and http://localhost:8787/tmp/x',
      'data/htmldrop.sqlite, /var/lib/htmldrop, /proc/self/status',
    ];
    for (const line of good) expect(machinePathProblems(line), line).toEqual([]);
  });

  it('figures: a table of measurements and a throughput in prose fail; ordinary numbers pass', () => {
    const table = '| target | req/s |\n|---|---:|\n| htmldrop | 58,031 |\n| ratio | 0.96 (0.93-1.06) |\n';
    expect(figureProblems(table)).toHaveLength(2);
    expect(figureProblems('| | before |\n|---|---:|\n| cold start | 1.02 s, 193 MB |')).toHaveLength(1);
    expect(figureProblems('On that day nginx did 67,006 requests/s.')).toHaveLength(1);
    expect(figureProblems('every page p95 was 4.3 ms')).toHaveLength(1);
    expect(figureProblems('npm start serves http://localhost:8787; Node.js 20.19; revenue up 12%.')).toEqual([]);
    expect(figureProblems('| `PORT` | `8787` | listen port |\n```\n| 1.00 | 2 ms |\n```')).toEqual([]);
  });

  it('links: a missing file and a missing heading fail; a heading with code and punctuation resolves', () => {
    const files: Record<string, string> = {
      'docs/a.md': "# A\n\n## Flow (b'): a drop on `its` own origin\n\n```sh\n# not a heading\n```\n",
    };
    const readFile = (relative: string) => files[relative];
    const good = "[b'](#flow-b-a-drop-on-its-own-origin) and [a](a.md#a), `[not](a link)`";
    expect(linkProblems('docs/a.md', good, readFile)).toEqual([]);
    expect(
      linkProblems('docs/a.md', '[x](gone.md) [y](a.md#not-a-heading) [z](a.md#not-a-heading-1)', readFile),
    ).toEqual([
      'docs/a.md links gone.md: no such file',
      'docs/a.md links a.md#not-a-heading: no such heading',
      'docs/a.md links a.md#not-a-heading-1: no such heading',
    ]);
  });
});
