/**
 * The console's comparison of two versions (docs/console.md): the Compare form the drop page also shows, and
 * `/console/drops/<slug>/diff`, the unified diff of GET /api/drops/<slug>/diff as a table of lines (docs/api.md,
 * "Version history: diff"). Added and removed lines carry a visible + or −, `<ins>`/`<del>` and a tint, so colour is
 * never the only signal; long diffs are cut at a fixed number of lines, the API has the whole text.
 */
import type { VersionDiff } from '../../domain/diff.js';
import type { DropRecord, VersionInfo } from '../../domain/types.js';
import type { Who } from './console.js';
import { consoleShell, fileHref, notice } from './console-layout.js';
import { escapeHtml } from './layout.js';

/** Diff lines shown on the page; the rest is counted and left to the API. */
export const MAX_SHOWN_LINES = 2000;
/** Characters shown of one line (a minified document can be one 2 MiB line). */
export const MAX_LINE_CHARS = 2000;

/** The page's own styles; tints mixed from the console's ok and danger colours, so both schemes keep their contrast. */
const STYLE = `<style>.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.diff-wrap{border:1px solid var(--line);border-radius:8px;overflow:hidden}
table.diff{table-layout:fixed;font:.82rem/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
table.diff th{padding:6px 8px;font-family:system-ui,sans-serif}
table.diff td{padding:0 8px;border:0;white-space:pre-wrap;overflow-wrap:anywhere}
table.diff td.code{padding-left:calc(8px + 1ch);text-indent:-1ch}
table.diff td.ln{color:var(--muted);text-align:right;user-select:none;white-space:nowrap}
table.diff ins,table.diff del{text-decoration:none}.diff .sign{user-select:none;font-weight:700}
tr.add{background:color-mix(in srgb,var(--ok) 14%,var(--card))}tr.add .sign{color:var(--ok)}
tr.del{background:color-mix(in srgb,var(--danger) 12%,var(--card))}tr.del .sign{color:var(--danger)}
tr.hunk td{background:var(--chip);color:var(--muted);padding:3px 8px}tr.note td{color:var(--muted);font-style:italic}
.notice.warn{background:var(--chip);border-left:4px solid var(--muted)}
.count-add{color:var(--ok);font-weight:700}.count-del{color:var(--danger);font-weight:700}
.file-changes{padding-left:18px;overflow-wrap:anywhere}h3{font-size:1rem;margin:12px 0 4px}</style>`;

const dropPath = (slug: string) => `/console/drops/${encodeURIComponent(slug)}`;
const viewHref = (slug: string, n: number) => `/p/${encodeURIComponent(slug)}?v=${n}`;
const plural = (n: number, one: string) => `${n.toLocaleString('en')} ${one}${n === 1 ? '' : 's'}`;

export interface CompareChoice {
  readonly from?: number | undefined;
  readonly to?: number | undefined;
}

/**
 * The Compare form: two selects of the drop's versions, `from` on the previous one and `to` on the latest unless
 * chosen, sent with GET to the diff page. Empty for a drop with one version.
 */
export function compareForm(drop: DropRecord, versions: readonly VersionInfo[], choice: CompareChoice = {}): string {
  if (versions.length < 2) return '';
  const to = choice.to ?? drop.latestVersion;
  const from = choice.from ?? versions.find((v) => v.version < to)?.version ?? versions[1]?.version;
  const options = (selected: number | undefined) =>
    versions
      .map((v) => {
        const label = `Version ${v.version}${v.version === drop.latestVersion ? ' (latest)' : ''}`;
        return `<option value="${v.version}"${v.version === selected ? ' selected' : ''}>${label}</option>`;
      })
      .join('');
  // Inline styles: the drop page has no stylesheet of this module.
  return `<form method="get" action="${dropPath(drop.slug)}/diff" class="row" id="compare-form" aria-label="Compare two versions" style="align-items:flex-end;gap:12px;margin-top:16px">
<div><label for="compare-from">Compare from</label><select id="compare-from" name="from">${options(from)}</select></div>
<div><label for="compare-to">To</label><select id="compare-to" name="to">${options(to)}</select></div>
<button type="submit" id="compare">Compare</button></form>`;
}

/** A line of the diff as shown: at most MAX_LINE_CHARS characters, escaped. */
function shown(text: string): string {
  if (text.length <= MAX_LINE_CHARS) return escapeHtml(text);
  const rest = text.length - MAX_LINE_CHARS;
  return `${escapeHtml(text.slice(0, MAX_LINE_CHARS))}<span class="muted"> … (${plural(rest, 'more character')})</span>`;
}

/** Line numbers in each version, moved along by the hunk headers and the lines. */
interface Position {
  old: number;
  new: number;
}

function row(line: string, at: Position): string {
  const mark = line[0];
  const text = line.slice(1);
  if (line.startsWith('@@')) {
    const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    at.old = Number(header?.[1] ?? 0);
    at.new = Number(header?.[2] ?? 0);
    return `<tr class="hunk"><td colspan="3">${escapeHtml(line)}</td></tr>`;
  }
  if (mark === '-') {
    return `<tr class="del"><td class="ln">${at.old++}</td><td class="ln"></td><td class="code"><del><span class="sign">−</span><span class="sr-only">removed: </span>${shown(text)}</del></td></tr>`;
  }
  if (mark === '+') {
    return `<tr class="add"><td class="ln"></td><td class="ln">${at.new++}</td><td class="code"><ins><span class="sign">+</span><span class="sr-only">added: </span>${shown(text)}</ins></td></tr>`;
  }
  if (mark === ' ') {
    return `<tr><td class="ln">${at.old++}</td><td class="ln">${at.new++}</td><td class="code"><span class="sign"> </span>${shown(text)}</td></tr>`;
  }
  return `<tr class="note"><td colspan="2"></td><td class="code">${escapeHtml(line)}</td></tr>`;
}

/** The hunks of a unified diff as table rows, at most MAX_SHOWN_LINES of them; also how many lines were left out. */
export function diffRows(unified: string): { rows: string; omitted: number; digits: number } {
  // Past the two file headers; read line by line, so a long diff is never split whole.
  let at = unified.indexOf('\n', unified.indexOf('\n') + 1) + 1;
  const rows: string[] = [];
  const position: Position = { old: 0, new: 0 };
  while (at > 0 && at < unified.length && rows.length < MAX_SHOWN_LINES) {
    const end = unified.indexOf('\n', at);
    const stop = end < 0 ? unified.length : end;
    rows.push(row(unified.slice(at, stop), position));
    at = stop + 1;
  }
  let omitted = 0;
  for (let i = at > 0 ? unified.indexOf('\n', at) : -1; i >= 0; i = unified.indexOf('\n', i + 1)) omitted++;
  return { rows: rows.join(''), omitted, digits: String(Math.max(position.old, position.new)).length };
}

export interface DiffPage {
  readonly who: Who;
  readonly nonce: string;
  readonly drop: DropRecord;
  readonly versions: readonly VersionInfo[];
  /** `<origin>/` of the drop's own origin, where its files open; null: its raw folder. */
  readonly contentUrl: string | null;
  /** Whether either version compared has files: then the Files section says so even when nothing changed. */
  readonly hasFiles?: boolean;
  /** The diff, or why there is none (the refusal's message). */
  readonly diff?: VersionDiff;
  readonly error?: string;
  readonly choice?: CompareChoice;
}

/**
 * The files added, removed and changed from one version to the other (docs/api.md, "Many files in one drop"), each a
 * link to the file in the version that has it (a changed one in both); nothing when neither version has files.
 */
function filesSection(page: DiffPage, diff: VersionDiff): string {
  const { added, removed, changed } = diff.files;
  // A changed file's links read "v1", "v2"; the hidden rest names the file for a screen reader.
  const link = (version: number, path: string, text = path) =>
    `<a href="${escapeHtml(fileHref(page.drop.slug, page.contentUrl, version, path))}">${escapeHtml(text)}${text === path ? '' : `<span class="sr-only"> of ${escapeHtml(path)}</span>`}</a>`;
  const group = (id: string, title: string, paths: readonly string[], item: (path: string) => string) =>
    paths.length === 0
      ? ''
      : `<h3 id="${id}-h">${title} <span class="muted">(${paths.length})</span></h3><ul class="file-changes" id="${id}" aria-labelledby="${id}-h">${paths.map((p) => `<li>${item(p)}</li>`).join('')}</ul>`;
  const lists = [
    group(
      'files-added',
      '<span class="count-add">+</span> Added',
      added,
      (p) => `<span class="mono">${link(diff.to, p)}</span>`,
    ),
    group(
      'files-removed',
      '<span class="count-del">−</span> Removed',
      removed,
      (p) => `<span class="mono">${link(diff.from, p)}</span>`,
    ),
    group(
      'files-changed',
      'Changed',
      changed,
      (p) =>
        `<span class="mono">${escapeHtml(p)}</span> ${link(diff.from, p, `v${diff.from}`)} → ${link(diff.to, p, `v${diff.to}`)}`,
    ),
  ].join('');
  if (lists === '' && !page.hasFiles) return '';
  const body =
    lists === ''
      ? '<p id="files-same">The two versions have the same files.</p>'
      : `<p id="files-counts">${plural(added.length, 'file')} added, ${removed.length.toLocaleString('en')} removed, ${changed.length.toLocaleString('en')} changed.</p>${lists}`;
  return `<section aria-labelledby="files-h"><h2 id="files-h">Files</h2>${body}</section>`;
}

function changesSection(page: DiffPage, diff: VersionDiff): string {
  const { slug } = page.drop;
  const counts = `<p id="diff-counts"><span class="count-add">+${diff.added.toLocaleString('en')}</span> ${diff.added === 1 ? 'line' : 'lines'} added, <span class="count-del">−${diff.removed.toLocaleString('en')}</span> removed.</p>`;
  const coarse = diff.exact
    ? ''
    : `<p class="notice warn" id="diff-coarse">These versions differ in too many lines for an exact comparison within the service's bounds: everything from the first to the last changed line is shown as removed, then added.</p>`;
  const links = `<p class="row"><a class="button" href="${viewHref(slug, diff.from)}" id="open-from">Open version ${diff.from}</a><a class="button" href="${viewHref(slug, diff.to)}" id="open-to">Open version ${diff.to}</a></p>`;
  if (diff.unified === '') {
    return `<section aria-labelledby="changes-h"><h2 id="changes-h">Version ${diff.from} → version ${diff.to}</h2>${links}
<p id="diff-same">The two versions have the same HTML.</p></section>`;
  }
  const { rows, omitted, digits } = diffRows(diff.unified);
  // Line-number columns as wide as the largest number (the table's font is monospace).
  const ln = `<col style="width:calc(${Math.max(digits, 3)}ch + 16px)">`;
  const api = `GET /api/drops/${slug}/diff?from=${diff.from}&to=${diff.to}`;
  const cut =
    omitted === 0
      ? ''
      : `<p class="muted" id="diff-cut">The first ${MAX_SHOWN_LINES.toLocaleString('en')} lines of the diff are shown; ${plural(omitted, 'more line')} follow. The whole diff: <span class="mono">${escapeHtml(api)}</span>.</p>`;
  return `<section aria-labelledby="changes-h"><h2 id="changes-h">Version ${diff.from} → version ${diff.to}</h2>${counts}${coarse}${links}
<div class="diff-wrap"><table class="diff" id="diff"><caption class="sr-only">Lines of version ${diff.from} removed and of version ${diff.to} added, with 3 lines of context</caption>
<colgroup>${ln}${ln}<col></colgroup>
<thead><tr><th scope="col" class="num">v${diff.from}</th><th scope="col" class="num">v${diff.to}</th><th scope="col">HTML</th></tr></thead>
<tbody>${rows}</tbody></table></div>${cut}</section>`;
}

/** `/console/drops/<slug>/diff`: the Compare form again, then the changes, or the refusal. */
export function diffPage(page: DiffPage): string {
  const { drop, diff } = page;
  const choice = diff === undefined ? (page.choice ?? {}) : { from: diff.from, to: diff.to };
  const title =
    diff === undefined ? `Compare versions of ${drop.title}` : `v${diff.from} → v${diff.to} of ${drop.title}`;
  const body = `<p><a href="${dropPath(drop.slug)}">← ${escapeHtml(drop.title)}</a></p>
<h1 id="diff-title">Compare versions</h1><p class="muted">Of <strong>${escapeHtml(drop.title)}</strong> (<span class="mono">${escapeHtml(drop.slug)}</span>): what changed in the HTML and in the files beside it.</p>
${page.error === undefined ? '' : notice('err', page.error)}
<section aria-labelledby="compare-h"><h2 id="compare-h">Versions</h2>${compareForm(drop, page.versions, choice) || '<p class="muted">This drop has one version.</p>'}</section>
${diff === undefined ? '' : changesSection(page, diff)}${diff === undefined ? '' : filesSection(page, diff)}`;
  return consoleShell({ title, nonce: page.nonce, who: page.who, current: 'drops', body, style: STYLE });
}
