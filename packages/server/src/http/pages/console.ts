/** Console pages: signed out, the drop list, the tokens (docs/console.md). The drop's own page is console-drop.ts. */
import { type MatchField, matchedRuns, type SearchTerms, searchTerms } from '../../domain/search.js';
import type { DropRecord, FoundDrop, SortBy, SortOrder, TokenInfo } from '../../domain/types.js';
import { consoleShell, copyableCommand, csrfField, notice, timeTag } from './console-layout.js';
import { escapeHtml } from './layout.js';

export interface Who {
  readonly login: string;
  readonly provider: string;
  readonly csrf: string;
}

/** `/console` signed out: what it is, and sign-in through the configured provider. */
export function signedOutPage(options: { providerName: string; loginHref: string; nonce: string }): string {
  return consoleShell({
    title: 'Sign in',
    nonce: options.nonce,
    body: `<section class="empty"><h1>Your drops, in one place</h1>
<p class="muted">Sign in to see every drop your agents published for you: find one by title or tag, change its passcode,
restore or delete versions, and revoke tokens.</p>
<p><a class="button primary" id="console-sign-in" href="${escapeHtml(options.loginHref)}">Sign in with ${escapeHtml(options.providerName)}</a></p></section>`,
  });
}

/** The list's state, as its query string carries it. */
export interface ListState {
  /** Words searched for in title, description, text and context (docs/api.md, "Search"). */
  readonly q: string;
  readonly tags: string;
  /** A key of SORTS, or '' (the default: the best match first with a search, else recently updated). */
  readonly sort: string;
  readonly page: number;
}

/** The default order: best match first when searching, the most recently updated first otherwise. */
export const DEFAULT_SORT = '';

/** The sort choices of the list: the API's sort fields and orders, named for people. */
export const SORTS: Readonly<Record<string, { label: string; sortBy: SortBy; sortOrder: SortOrder }>> = {
  updated: { label: 'Recently updated', sortBy: 'updated_at', sortOrder: 'desc' },
  created: { label: 'Newest first', sortBy: 'created_at', sortOrder: 'desc' },
  oldest: { label: 'Oldest first', sortBy: 'created_at', sortOrder: 'asc' },
  views: { label: 'Most viewed', sortBy: 'view_count', sortOrder: 'desc' },
  'least-viewed': { label: 'Least viewed', sortBy: 'view_count', sortOrder: 'asc' },
};

/** A link to the list with some of its state changed (page 1 unless given). */
export function listHref(state: ListState, change: Partial<ListState>): string {
  const next = { ...state, page: 1, ...change };
  const params = new URLSearchParams();
  if (next.q !== '') params.set('q', next.q);
  if (next.tags !== '') params.set('tags', next.tags);
  if (next.sort !== DEFAULT_SORT) params.set('sort', next.sort);
  if (next.page !== 1) params.set('page', String(next.page));
  const query = params.toString();
  return query === '' ? '/console' : `/console?${query}`;
}

function filterForm(state: ListState): string {
  const searching = state.q.trim() !== '';
  // The default option is named for what it does now; "Recently updated" is offered apart only while searching.
  const choices = [
    [DEFAULT_SORT, searching ? 'Best match' : (SORTS.updated?.label ?? '')],
    ...Object.entries(SORTS)
      .filter(([key]) => searching || key !== 'updated')
      .map(([key, { label }]) => [key, label]),
  ];
  const options = choices
    .map(([key, label]) => `<option value="${key}"${key === state.sort ? ' selected' : ''}>${label}</option>`)
    .join('');
  return `<form method="get" action="/console" class="grid filters" role="search" aria-label="Find drops">
<div><label for="q">Search <span class="muted">(title, description, text, context)</span></label><input type="search" id="q" name="q" value="${escapeHtml(state.q)}" autocomplete="off" maxlength="200"></div>
<div><label for="tags">Tags <span class="muted">(key=value, space-separated)</span></label><input type="text" id="tags" name="tags" value="${escapeHtml(state.tags)}" autocomplete="off" spellcheck="false" placeholder="project=acme"></div>
<div><label for="sort">Sort</label><select id="sort" name="sort">${options}</select></div>
<div class="row"><button class="primary" type="submit">Find</button>${state.q !== '' || state.tags !== '' ? '<a href="/console">Clear</a>' : ''}</div></form>`;
}

function tagChips(drop: DropRecord, state: ListState): string {
  return Object.entries(drop.metadata)
    .map(([key, value]) => {
      const pair = `${key}=${value}`;
      const href = listHref(state, { tags: pair });
      return `<a class="chip" href="${escapeHtml(href)}" title="Show drops tagged ${escapeHtml(pair)}">${escapeHtml(pair)}</a>`;
    })
    .join('');
}

const FIELD_NAMES: Readonly<Record<MatchField, string>> = {
  title: 'title',
  description: 'description',
  content: 'text',
  context: 'context',
};

/** `text` escaped, with the runs that matched `terms` in <mark>. */
function marked(text: string, terms: SearchTerms): string {
  let html = '';
  let at = 0;
  for (const [start, end] of matchedRuns(text, terms)) {
    html += `${escapeHtml(text.slice(at, start))}<mark>${escapeHtml(text.slice(start, end))}</mark>`;
    at = end;
  }
  return html + escapeHtml(text.slice(at));
}

/** What a search found in a drop: the text around the match, its words marked, and where it matched. */
function matchLines(drop: FoundDrop, state: ListState): string {
  const terms = searchTerms(state.q);
  if (drop.match === undefined || terms === undefined) return '';
  const where = drop.match.fields.map((field) => FIELD_NAMES[field]).join(', ');
  return `<p class="snippet">${marked(drop.match.snippet, terms)}</p><div class="muted found-in">Found in ${escapeHtml(where)}</div>`;
}

function dropRow(drop: FoundDrop, state: ListState): string {
  const href = `/console/drops/${encodeURIComponent(drop.slug)}`;
  // The thumbnail (docs/console.md): sized before it loads, so the list never moves; decorative next to the title.
  const thumb = `<img class="thumb" src="${href}/preview.png?v=${drop.latestVersion}" width="160" height="84" loading="lazy" decoding="async" alt="">`;
  return `<tr data-slug="${escapeHtml(drop.slug)}"><td class="title-cell"><div class="drop-id">${thumb}<div><a href="${href}">${escapeHtml(drop.title)}</a>
<div class="muted mono">${escapeHtml(drop.slug)}</div>${matchLines(drop, state)}</div></div></td>
<td data-label="Tags">${tagChips(drop, state) || '<span class="muted">none</span>'}</td>
<td data-label="Versions" class="num">${drop.versionCount}</td><td data-label="Views" class="num">${drop.viewCount}</td>
<td data-label="Passcode">${drop.locked ? '<span class="badge">Locked</span>' : '<span class="muted">Open</span>'}</td>
<td data-label="Updated">${timeTag(drop.updatedAt)}</td></tr>`;
}

/** How the first drop gets published, for the empty console. */
export function firstPublishHelp(baseUrl: string): string {
  const command = `npx --yes --package=${baseUrl}/cli/htmldrop.tgz htmldrop --server ${baseUrl} publish report.html`;
  return `<p>Ask your agent to publish something: tell it to read <a href="/llms.txt">${escapeHtml(baseUrl)}/llms.txt</a>,
or publish a file yourself (the CLI asks you to sign in the first time):</p>${copyableCommand('first-publish', command, 'Publish command')}`;
}

export interface ListPage {
  readonly who: Who;
  readonly nonce: string;
  readonly baseUrl: string;
  readonly state: ListState;
  readonly drops: readonly FoundDrop[];
  readonly total: number;
  readonly totalPages: number;
  /** A finished action, shown above the list. */
  readonly done?: string;
  /** A refusal of the filters, shown above the list. */
  readonly error?: string;
}

/** "Download everything" (docs/console.md): the export of every drop, below the list. */
const downloadEverything = `<section class="download" id="download-everything" aria-labelledby="download-heading">
<h2 id="download-heading">Take everything with you</h2>
<p class="muted">One zip of every drop: each version's page, files and context, the settings, comments and view counts.
Import it into another htmldrop service with <code>htmldrop import</code>.</p>
<p><a class="button" href="/console/export" download id="download-everything-link">Download everything</a></p></section>`;

/** `/console`: the owner's drops. */
export function dropListPage(page: ListPage): string {
  const { state, drops, total, totalPages } = page;
  const filtered = state.q !== '' || state.tags !== '';
  let list: string;
  if (total === 0 && !filtered) {
    list = `<section class="empty" id="empty-console"><h2>No drops yet</h2>${firstPublishHelp(page.baseUrl)}</section>`;
  } else if (drops.length === 0) {
    list = `<section class="empty"><h2>No drop matches</h2><p><a href="/console">Show all drops</a></p></section>`;
  } else {
    const pager =
      totalPages <= 1
        ? ''
        : `<nav class="pager" aria-label="Pages">${state.page > 1 ? `<a href="${escapeHtml(listHref(state, { page: state.page - 1 }))}" rel="prev">Previous</a>` : '<span></span>'}
<span class="muted">Page ${state.page} of ${totalPages}</span>${state.page < totalPages ? `<a href="${escapeHtml(listHref(state, { page: state.page + 1 }))}" rel="next">Next</a>` : '<span></span>'}</nav>`;
    list = `<section><table class="cards" id="drop-list"><caption class="muted" style="text-align:left;caption-side:top;padding-bottom:6px">${total} drop${total === 1 ? '' : 's'}${filtered ? ' found' : ''}</caption>
<thead><tr><th scope="col">Title</th><th scope="col">Tags</th><th scope="col" class="num">Versions</th><th scope="col" class="num">Views</th><th scope="col">Passcode</th><th scope="col">Updated</th></tr></thead>
<tbody>${drops.map((drop) => dropRow(drop, state)).join('')}</tbody></table>${pager}</section>`;
  }
  return consoleShell({
    title: 'Your drops',
    nonce: page.nonce,
    who: page.who,
    current: 'drops',
    body: `<h1>Your drops</h1>${page.done === undefined ? '' : notice('ok', page.done)}${page.error === undefined ? '' : notice('err', page.error)}<section>${filterForm(state)}</section>${list}${total === 0 && !filtered ? '' : downloadEverything}`,
  });
}

export interface TokensPage {
  readonly who: Who;
  readonly nonce: string;
  readonly tokens: readonly TokenInfo[];
  /** The time the page is for (Unix ms): whether an OAuth token's hour is over. */
  readonly now: number;
  readonly done?: string;
  readonly error?: string;
}

/** A token's label cell: its label and id, and for an OAuth token the client it went to. */
function tokenLabelCell(token: TokenInfo): string {
  const label = token.label === null ? '<span class="muted">no label</span>' : escapeHtml(token.label);
  const oauth = token.oauthClient;
  // The label is the client's name when the token was issued; the name is shown again only if it differs.
  const name =
    oauth?.name === null || oauth?.name === undefined || oauth.name === token.label ? '' : ` ${escapeHtml(oauth.name)}`;
  const client =
    oauth === null
      ? ''
      : `<div class="muted">MCP client (OAuth)${name}: <span class="mono">${escapeHtml(oauth.id)}</span></div>`;
  return `<td class="title-cell"><strong>${label}</strong>
<div class="muted mono">${escapeHtml(token.id)}</div>${client}</td>`;
}

/** When a token stops working: never, at a time, or (OAuth) every hour, renewed by its client until a time. */
function tokenExpiryCell(token: TokenInfo, now: number): string {
  const expires =
    token.expiresAt === null
      ? '<span class="muted">never</span>'
      : token.expiresAt <= now
        ? `<span class="muted">expired</span> ${timeTag(token.expiresAt)}`
        : timeTag(token.expiresAt);
  const renewal =
    token.renewableUntil === null
      ? ''
      : `<div class="muted">its client renews it until ${timeTag(token.renewableUntil)}</div>`;
  return `<td data-label="Expires">${expires}${renewal}</td>`;
}

/** `/console/tokens`: the account's tokens, each revocable. */
export function tokensPage(page: TokensPage): string {
  const rows = page.tokens
    .map(
      (token) => `<tr data-token="${escapeHtml(token.id)}">${tokenLabelCell(token)}
<td data-label="Created">${timeTag(token.createdAt)}</td><td data-label="Last used">${timeTag(token.lastUsedAt)}</td>${tokenExpiryCell(token, page.now)}
<td data-label="Action"><form method="post" action="/console/tokens/${encodeURIComponent(token.id)}/revoke" data-confirm="Revoke this token? Whatever uses it stops working at once.">${csrfField(page.who.csrf)}
<button class="danger" type="submit" aria-label="Revoke ${escapeHtml(token.label ?? token.id)}">Revoke</button></form></td></tr>`,
    )
    .join('');
  const table =
    page.tokens.length === 0
      ? '<p class="empty" id="no-tokens">No active tokens. Agents get one when you approve them on <a href="/verify">/verify</a>.</p>'
      : `<table class="cards" id="token-list"><thead><tr><th scope="col">Label</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>`;
  return consoleShell({
    title: 'Tokens',
    nonce: page.nonce,
    who: page.who,
    current: 'tokens',
    body: `<h1>Tokens</h1>${page.done === undefined ? '' : notice('ok', page.done)}${page.error === undefined ? '' : notice('err', page.error)}
<p class="muted">Tokens are what your agents, the CLI and the MCP server use to publish for you. Revoking one stops it at
once. Tokens from <code>htmldrop login</code> never expire. An MCP client that signed in with OAuth holds a token for an
hour and renews it itself, for up to 30 days after its last renewal; signing it in again replaces its earlier token. This
browser is not using a token: it holds a signed session cookie that lasts 7 days or until you sign out, is not listed
here, and cannot call the API.</p><section>${table}</section>`,
  });
}
