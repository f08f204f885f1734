/** The console's page for one drop, and the confirmation before deleting it (docs/console.md). */
import type { DropComments } from '../../domain/comments.js';
import type { NetworkPolicy } from '../../domain/network.js';
import type { Finding } from '../../domain/scan.js';
import type { AccessEntry, RecipientLink } from '../../domain/store.js';
import type { CommentRecord, DropRecord, DropViewStats, VersionFile, VersionInfo } from '../../domain/types.js';
import type { Who } from './console.js';
import { compareForm } from './console-diff.js';
import { consoleShell, copyableCommand, csrfField, fileHref, notice, sizeText, timeTag } from './console-layout.js';
import { escapeHtml } from './layout.js';

export interface DropPage {
  readonly who: Who;
  readonly nonce: string;
  readonly baseUrl: string;
  readonly drop: DropRecord;
  /** `<origin>/` of the drop's own origin, or null when none is configured (docs/api.md, "Each drop on its own origin"). */
  readonly contentUrl: string | null;
  readonly versions: readonly VersionInfo[];
  /** Each version's files, by version number (docs/api.md, "Many files in one drop"); none: no entry. */
  readonly files: ReadonlyMap<number, readonly VersionFile[]>;
  /** Read receipts (docs/api.md, "Read receipts"). */
  readonly stats: DropViewStats;
  /** A page of the drop's comments (newest first) and their counts. */
  readonly comments: DropComments;
  /** The page shown is the one older than this time; absent: the newest. */
  readonly commentsBefore?: number;
  /** What the look before publishing found, by version (docs/console.md, "Warnings"); absent or empty: nothing. */
  readonly warnings?: ReadonlyMap<number, readonly Finding[]>;
  /** The drop's recipient links, newest first, and the newest entries of its access log (docs/console.md, "Sharing"). */
  readonly links?: readonly RecipientLink[];
  readonly access?: readonly AccessEntry[];
  /** The link just created: its URL is shown this once. */
  readonly createdLink?: { readonly label: string; readonly url: string };
  /** What the owner typed into the Sharing form, shown again after a refusal. */
  readonly sharing?: { readonly visibility: string; readonly allow: string };
  readonly done?: string;
  readonly error?: string;
  /** What the owner typed into the details form, shown again after a refusal. */
  readonly form?: {
    readonly title: string;
    readonly description: string;
    readonly tags: string;
    readonly comments: string;
    /** `open`, `none` or `list` (NETWORK_MODES), and the origins, one per line. */
    readonly network: string;
    readonly networkOrigins: string;
  };
}

const COMMENT_SETTINGS = [
  ['signed_in', 'People signed in through the identity provider'],
  ['open', 'Anyone who can view it (with a name they type)'],
  ['off', 'Nobody (comments are off)'],
] as const;

/** The network select's values: `list` takes the origins from the textarea (docs/api.md, "Each drop on its own origin"). */
const NETWORK_MODES = [
  ['open', 'Anything (open)'],
  ['none', 'Nothing from the network (none)'],
  ['list', 'Only these origins'],
] as const;

/** A network policy as the details form edits it: the select's value and the textarea's lines. */
function networkFields(policy: NetworkPolicy): { network: string; networkOrigins: string } {
  return typeof policy === 'string'
    ? { network: policy, networkOrigins: '' }
    : { network: 'list', networkOrigins: policy.join('\n') };
}

/** The policy in plain words, for the Share section. */
function networkText(policy: NetworkPolicy): string {
  if (policy === 'open') return 'open (it may load anything from any site).';
  if (policy === 'none')
    return 'none (it loads nothing from the network: only what is inside it, such as inline scripts, styles and data: URLs).';
  const origins = policy.map((o) => `<span class="mono">${escapeHtml(o)}</span>`).join(', ');
  return `only ${origins} (anything else from the network is blocked).`;
}

/** The public link's neighbours: the drop's own origin (when configured) and what it may load. */
function originLines(page: DropPage): string {
  const { drop, contentUrl } = page;
  const own =
    contentUrl === null
      ? ''
      : `<p id="own-origin"><strong>Own origin:</strong> <a href="${escapeHtml(contentUrl)}" target="_blank" rel="noopener noreferrer" id="own-origin-link" class="mono" aria-describedby="own-origin-hint" style="overflow-wrap:anywhere">${escapeHtml(contentUrl)}</a>
<br><span class="muted" id="own-origin-hint">Opens in a new tab: the document alone, on an address of its own, where its storage (localStorage, IndexedDB, cookies) works, kept apart from other drops.${drop.locked ? ' Locked: it opens there only from its page, after the passcode.' : ''}</span></p>`;
  return `${own}<p id="network-now"><strong>Network:</strong> ${networkText(drop.network)}</p>`;
}

const dropPath = (slug: string) => `/console/drops/${encodeURIComponent(slug)}`;

const HOUR = 3_600_000;
/** What the expiry form offers (docs/api.md, "Expiry"): value, label, time from now. Durations, not a date: the
 * browser's time zone never has to be guessed. */
export const EXPIRY_CHOICES = [
  ['1h', 'In 1 hour', HOUR],
  ['1d', 'In 1 day', 24 * HOUR],
  ['7d', 'In 7 days', 7 * 24 * HOUR],
  ['30d', 'In 30 days', 30 * 24 * HOUR],
  ['365d', 'In 365 days', 365 * 24 * HOUR],
] as const;

function expirySection(page: DropPage): string {
  const { drop } = page;
  const now =
    drop.expiresAt === null
      ? '<p class="muted" id="expiry-now">Never expires: the link works until you delete the drop.</p>'
      : `<p id="expiry-now">Expires ${timeTag(drop.expiresAt)}: from then on the link answers "expired", and the drop is deleted within the hour.</p>`;
  const options = [['never', 'Never', 0] as const, ...EXPIRY_CHOICES]
    .map(([value, label]) => `<option value="${value}">${label}</option>`)
    .join('');
  return `<section aria-labelledby="expiry-h"><h2 id="expiry-h">Expiry</h2>${now}
<form method="post" action="${dropPath(drop.slug)}/expiry">${csrfField(page.who.csrf)}
<div class="field"><label for="expires">Stop serving it</label><select id="expires" name="expires">${options}</select></div>
<button type="submit" id="save-expiry">Set expiry</button></form></section>`;
}

/** Tags as the details form edits them: one key=value per line. */
export function tagsText(metadata: Readonly<Record<string, string>>): string {
  return Object.entries(metadata)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
}

function detailsSection(page: DropPage): string {
  const { drop } = page;
  const form = page.form ?? {
    title: drop.title,
    description: drop.description ?? '',
    tags: tagsText(drop.metadata),
    comments: drop.comments,
    ...networkFields(drop.network),
  };
  const settings = COMMENT_SETTINGS.map(
    ([value, label]) => `<option value="${value}"${value === form.comments ? ' selected' : ''}>${label}</option>`,
  ).join('');
  return `<section aria-labelledby="details-h"><h2 id="details-h">Details</h2>
<form method="post" action="${dropPath(drop.slug)}/details">${csrfField(page.who.csrf)}
<div class="field"><label for="title">Title</label><input type="text" id="title" name="title" value="${escapeHtml(form.title)}" required></div>
<div class="field"><label for="description">Description</label><textarea id="description" name="description">${escapeHtml(form.description)}</textarea></div>
<div class="field"><label for="tags">Tags <span class="muted">(one key=value per line; only you see them)</span></label><textarea id="tags" name="tags" spellcheck="false">${escapeHtml(form.tags)}</textarea></div>
<div class="field"><label for="comments-setting">Who may comment</label><select id="comments-setting" name="comments">${settings}</select></div>
${networkFieldset(form)}
<button class="primary" type="submit" id="save-details">Save details</button></form></section>`;
}

/**
 * The network control: a select, and the origins (one per line) used when it says "Only these origins". Without
 * `:has()` support the textarea simply stays visible; the server ignores it for the other two choices.
 */
function networkFieldset(form: { readonly network: string; readonly networkOrigins: string }): string {
  const modes = NETWORK_MODES.map(
    ([value, label]) => `<option value="${value}"${value === form.network ? ' selected' : ''}>${label}</option>`,
  ).join('');
  return `<div class="network-fields"><div class="field"><label for="network">Network <span class="muted">(what the drop may load)</span></label><select id="network" name="network">${modes}</select></div>
<div class="field network-origins"><label for="network-origins">Allowed origins <span class="muted">(one per line)</span></label><textarea id="network-origins" name="network_origins" spellcheck="false" autocapitalize="off" rows="3" placeholder="https://cdn.jsdelivr.net">${escapeHtml(form.networkOrigins)}</textarea></div></div>`;
}

/** The network control's two columns (one on a phone), and the origins hidden unless they apply. */
const STYLE = `<style>.preview-figure{margin:0 0 12px}.preview-figure .preview{margin:0 0 4px}details.files summary{cursor:pointer}#version-list td.num{white-space:nowrap}
.file-list{margin:6px 0 0;padding:0;list-style:none;font-size:.9rem;text-align:left}
.file-list li{overflow-wrap:anywhere;margin:0 0 4px}.comment .pick{width:1.1rem;height:1.1rem;margin:0 8px 0 0;vertical-align:-2px}.moderation{margin:0 0 12px}
.network-fields{display:grid;grid-template-columns:repeat(auto-fit,minmax(250px,1fr));gap:0 12px;align-items:start}
.network-fields:has(#network option[value=list]:not(:checked)) .network-origins{display:none}</style>`;

const VISIBILITY_CHOICES = [
  ['public', 'Anyone with the link (public)'],
  ['signed_in', 'Anyone who signs in (signed_in)'],
  ['people', 'Only you and the people listed below (people)'],
] as const;

/** A link's state as the owner reads it. */
function linkState(link: RecipientLink, now: number): string {
  if (link.revokedAt !== null) return 'revoked';
  if (link.expiresAt !== null && link.expiresAt <= now) return 'expired';
  return 'active';
}

function linkRow(page: DropPage, link: RecipientLink, now: number): string {
  const state = linkState(link, now);
  const revoke =
    state === 'active'
      ? `<form method="post" action="${dropPath(page.drop.slug)}/links/${encodeURIComponent(link.id)}/revoke">${csrfField(page.who.csrf)}<button type="submit" aria-label="Revoke the link for ${escapeHtml(link.label)}">Revoke</button></form>`
      : '';
  return `<tr><td data-label="For">${escapeHtml(link.label)}</td><td data-label="State">${state}</td><td data-label="Views" class="num">${link.views}</td><td data-label="Last viewed">${timeTag(link.lastViewedAt)}</td><td data-label="Actions">${revoke}</td></tr>`;
}

/** Who an access log entry is about, in words. */
function whoText(entry: AccessEntry): string {
  const name = entry.who.name === null ? '' : escapeHtml(entry.who.name);
  if (entry.who.kind === 'link') return `link “${name}”`;
  if (entry.who.kind === 'owner') return 'you';
  if (entry.who.kind === 'person') return name;
  return '<span class="muted">anonymous</span>';
}

function accessRow(entry: AccessEntry): string {
  const outcome = entry.outcome === 'viewed' ? 'viewed' : `refused: ${entry.reason ?? ''}`;
  return `<tr><td data-label="When">${timeTag(entry.at)}</td><td data-label="Outcome">${outcome}</td><td data-label="Who">${whoText(entry)}</td><td data-label="Version">${entry.version === null ? 'latest' : `v${entry.version}`}</td></tr>`;
}

/**
 * The Sharing panel (docs/console.md, "Sharing"): who can see the drop and the list, the recipient links with their
 * views and a way to make or revoke one, and the newest entries of the access log.
 */
function sharingSection(page: DropPage): string {
  const { drop, who } = page;
  const form = page.sharing ?? { visibility: drop.visibility, allow: drop.allow.join('\n') };
  const choices = VISIBILITY_CHOICES.map(
    ([value, label]) => `<option value="${value}"${value === form.visibility ? ' selected' : ''}>${label}</option>`,
  ).join('');
  const now = Date.now();
  const links = page.links ?? [];
  const linkTable =
    links.length === 0
      ? '<p class="muted" id="no-links">No links yet.</p>'
      : `<table class="cards" id="link-list"><thead><tr><th scope="col">For</th><th scope="col">State</th><th scope="col" class="num">Views</th><th scope="col">Last viewed</th><th scope="col">Actions</th></tr></thead><tbody>${links.map((l) => linkRow(page, l, now)).join('')}</tbody></table>`;
  const created =
    page.createdLink === undefined
      ? ''
      : copyableCommand('new-link', page.createdLink.url, `Link for ${page.createdLink.label}`);
  const access = page.access ?? [];
  const log =
    access.length === 0
      ? '<p class="muted" id="no-access">No views or refusals yet.</p>'
      : `<p class="muted">The newest ${access.length} entries (kept 90 days; no addresses).</p><table class="cards" id="access-log"><thead><tr><th scope="col">When</th><th scope="col">Outcome</th><th scope="col">Who</th><th scope="col">Version</th></tr></thead><tbody>${access.map(accessRow).join('')}</tbody></table>`;
  return `<section aria-labelledby="sharing-h" id="sharing"><h2 id="sharing-h">Sharing</h2>
<form method="post" action="${dropPath(drop.slug)}/sharing">${csrfField(who.csrf)}
<div class="field"><label for="visibility">Who can see it</label><select id="visibility" name="visibility">${choices}</select></div>
<div class="field"><label for="allow">People <span class="muted">(one a line: a username, an email address, or @domain for everyone with a verified email there; used when only listed people may see it)</span></label><textarea id="allow" name="allow" spellcheck="false" autocapitalize="off" rows="3" placeholder="dana@client.example">${escapeHtml(form.allow)}</textarea></div>
<button class="primary" type="submit" id="save-sharing">Save who can see it</button></form>
<h3>Recipient links</h3><p class="muted">A link opens the drop for the one person you send it to, whatever the setting above, and counts their views.</p>
${created}${linkTable}
<form method="post" action="${dropPath(drop.slug)}/links" class="row" style="margin-top:12px">${csrfField(who.csrf)}
<div style="flex:1;min-width:200px"><label for="link-label">Who the link is for</label><input type="text" id="link-label" name="label" required maxlength="100" placeholder="Dana"></div>
<button type="submit" id="create-link" style="align-self:flex-end">Create link</button></form>
<h3>Access log</h3>${log}</section>`;
}

function passcodeSection(page: DropPage): string {
  const { drop, who } = page;
  const remove = drop.locked
    ? `<form method="post" action="${dropPath(drop.slug)}/passcode" style="margin-top:10px">${csrfField(who.csrf)}<input type="hidden" name="passcode" value="">
<button type="submit" id="remove-passcode">Remove the passcode</button></form>`
    : '';
  return `<section aria-labelledby="passcode-h"><h2 id="passcode-h">Passcode</h2>
<p class="muted" id="passcode-state">${drop.locked ? 'Locked: viewers must enter the passcode. Changing it signs out everyone who unlocked it.' : 'Open: anyone with the link can view it.'}</p>
<form method="post" action="${dropPath(drop.slug)}/passcode" class="row">${csrfField(who.csrf)}
<div style="flex:1;min-width:200px"><label for="passcode">${drop.locked ? 'New passcode' : 'Passcode'}</label><input type="password" id="passcode" name="passcode" autocomplete="new-password" required minlength="1"></div>
<button type="submit" id="set-passcode" style="align-self:flex-end">${drop.locked ? 'Change passcode' : 'Lock with passcode'}</button></form>${remove}</section>`;
}

function versionRow(page: DropPage, version: VersionInfo): string {
  const { drop, who } = page;
  const n = version.version;
  const latest = n === drop.latestVersion;
  const base = `${dropPath(drop.slug)}/versions/${n}`;
  const restore = latest
    ? '<span class="muted">Latest</span>'
    : `<form method="post" action="${base}/restore">${csrfField(who.csrf)}<button type="submit" aria-label="Restore version ${n}">Restore</button></form>`;
  const remove =
    page.versions.length <= 1
      ? ''
      : `<form method="post" action="${base}/delete" data-confirm="Delete version ${n}? This cannot be undone.">${csrfField(who.csrf)}<button class="danger" type="submit" aria-label="Delete version ${n}">Delete</button></form>`;
  return `<tr data-version="${n}"><td class="title-cell"><strong>Version ${n}</strong>${latest ? ' <span class="badge">latest</span>' : ''}${warningBadge(page, n)}</td>
<td data-label="Published">${timeTag(version.createdAt)}</td><td data-label="Size" class="num">${sizeText(version.sizeBytes)}</td>
<td data-label="Files">${filesCell(page, n, version.sizeBytes)}</td>
<td data-label="Context">${version.hasContext ? 'Yes' : '<span class="muted">No</span>'}</td>
<td data-label="Views" class="num">${viewsOf(page, n)}</td>
<td data-label="Actions"><div class="row"><a class="button" href="/p/${encodeURIComponent(drop.slug)}?v=${n}" aria-label="Open version ${n}">Open</a>${restore}${remove}</div></td></tr>`;
}

function versionsSection(page: DropPage): string {
  return `<section aria-labelledby="versions-h"><h2 id="versions-h">Versions</h2>
<table class="cards" id="version-list"><thead><tr><th scope="col">Version</th><th scope="col">Published</th><th scope="col" class="num">Size</th><th scope="col">Files</th><th scope="col">Context</th><th scope="col" class="num">Views</th><th scope="col">Actions</th></tr></thead>
<tbody>${page.versions.map((version) => versionRow(page, version)).join('')}</tbody></table>${compareForm(page.drop, page.versions)}</section>`;
}

/** `N warnings`, linking to the version's findings, for a version the look before publishing found something in. */
function warningBadge(page: DropPage, version: number): string {
  const count = page.warnings?.get(version)?.length ?? 0;
  if (count === 0) return '';
  return ` <a class="badge warn" href="#warnings-v${version}">${count} warning${count === 1 ? '' : 's'}</a>`;
}

const KIND_WORDS: Readonly<Record<string, string>> = { secret: 'Secret', personal_data: 'Personal data' };

/**
 * What the look before publishing found in each version, newest first: kind, rule, where and line, and the masked
 * excerpt (never the secret). Nothing when every version is clean.
 */
function warningsSection(page: DropPage): string {
  const versions = [...(page.warnings ?? new Map<number, readonly Finding[]>())]
    .filter(([, findings]) => findings.length > 0)
    .sort(([a], [b]) => b - a);
  if (versions.length === 0) return '';
  const list = versions
    .map(([version, findings]) => {
      const items = findings
        .map(
          (f) =>
            `<li><span class="badge warn">${KIND_WORDS[f.kind] ?? escapeHtml(f.kind)}</span> <span class="mono">${escapeHtml(f.rule)}</span> in <span class="mono">${escapeHtml(f.where)}</span>, line ${f.line}: <code>${escapeHtml(f.excerpt)}</code></li>`,
        )
        .join('');
      return `<h3 id="warnings-v${version}">Version ${version}</h3><ul class="warnings">${items}</ul>`;
    })
    .join('');
  return `<section aria-labelledby="warnings-h" id="warnings"><h2 id="warnings-h">Warnings</h2>
<p class="muted">When these versions were published, they carried what looks like secrets or personal data. They are public while the version exists: publish a version without them, revoke or rotate any key shown, then delete the version that carried it.</p>${list}</section>`;
}

/** Files listed per version on the page; more are counted, and the API lists them all. */
const MAX_LISTED_FILES = 100;

/**
 * A version's files (docs/api.md, "Many files in one drop"): how many and the version's size with them, opening to
 * the list (a `<details>`, no script needed), each file a link to it with its size and type.
 */
function filesCell(page: DropPage, version: number, htmlBytes: number): string {
  const files = page.files.get(version) ?? [];
  if (files.length === 0) return '<span class="muted">None</span>';
  const total = files.reduce((sum, file) => sum + file.sizeBytes, htmlBytes);
  const { slug } = page.drop;
  const items = files
    .slice(0, MAX_LISTED_FILES)
    .map(
      (file) =>
        `<li><a class="mono" href="${escapeHtml(fileHref(slug, page.contentUrl, version, file.path))}">${escapeHtml(file.path)}</a> <span class="muted">${sizeText(file.sizeBytes)} · ${escapeHtml(file.contentType.split(';')[0] ?? '')}</span></li>`,
    )
    .join('');
  const more =
    files.length > MAX_LISTED_FILES
      ? `<li class="muted">and ${files.length - MAX_LISTED_FILES} more (<span class="mono">GET /api/drops/${escapeHtml(slug)}/v/${version}</span> lists them all)</li>`
      : '';
  return `<details class="files" id="files-v${version}"><summary>${files.length} file${files.length === 1 ? '' : 's'} · ${sizeText(total)} in all</summary><ul class="file-list">${items}${more}</ul></details>`;
}

/** A version's views and distinct viewers, as the versions table shows them. */
function viewsOf(page: DropPage, version: number): string {
  const stats = page.stats.versions.find((v) => v.version === version);
  if (stats === undefined || stats.views === 0) return '0';
  return `${stats.views} <span class="muted">(${stats.uniqueViewers} ${stats.uniqueViewers === 1 ? 'viewer' : 'viewers'})</span>`;
}

function commentRow(page: DropPage, comment: CommentRecord): string {
  const base = `${dropPath(page.drop.slug)}/comments/${encodeURIComponent(comment.id)}`;
  const by = escapeHtml(comment.author.name);
  const state =
    comment.resolvedInVersion === null
      ? `<form method="post" action="${base}/resolve">${csrfField(page.who.csrf)}<button type="submit" aria-label="Resolve the comment by ${by}">Resolve</button></form>`
      : `<span class="badge">Resolved in v${comment.resolvedInVersion}</span>`;
  const quote = comment.quote === null ? '' : `<blockquote class="muted">${escapeHtml(comment.quote)}</blockquote>`;
  // The tick belongs to the bulk form (its `form` attribute): no form inside another, and no script needed.
  const pick = `<input type="checkbox" class="pick" form="bulk-comments" name="pick:${escapeHtml(comment.id)}" value="1" aria-label="Select the comment by ${by}">`;
  return `<li class="comment" data-comment="${escapeHtml(comment.id)}"><p>${pick}<strong>${by}</strong> <span class="badge">${comment.author.kind}</span>
<span class="muted">on version ${comment.version} · ${timeTag(comment.createdAt)}</span></p>${quote}<p class="comment-body">${escapeHtml(comment.body)}</p>
<div class="row">${state}<form method="post" action="${base}/delete" data-confirm="Delete this comment?">${csrfField(page.who.csrf)}<button class="danger" type="submit" aria-label="Delete the comment by ${by}">Delete</button></form></div></li>`;
}

const SETTING_WORDS: Readonly<Record<string, string>> = {
  signed_in: 'people signed in through the identity provider',
  open: 'anyone who can view it, with a name they type',
  off: 'nobody but you (comments are off)',
};

/**
 * What ends a flood from the comments section itself: only signed-in people from now on (one step), every guest
 * comment deleted (one step), and the ticked comments deleted.
 */
function moderationTools(page: DropPage): string {
  const { drop, who } = page;
  const base = `${dropPath(drop.slug)}/comments`;
  const setting = `<p class="muted" id="comments-who">Who may comment: ${SETTING_WORDS[drop.comments] ?? drop.comments}.</p>`;
  const signedIn =
    drop.comments === 'open'
      ? `<form method="post" action="${base}/setting">${csrfField(who.csrf)}<input type="hidden" name="comments" value="signed_in"><button type="submit" id="comments-signed-in">Only signed-in people from now on</button></form>`
      : '';
  const guests = page.comments.guests;
  const deleteGuests =
    guests === 0
      ? ''
      : `<form method="post" action="${base}/delete-guests" data-confirm="Delete all ${guests} guest comments of this drop? This cannot be undone.">${csrfField(who.csrf)}<button class="danger" type="submit" id="delete-guest-comments">Delete all ${guests} guest comment${guests === 1 ? '' : 's'}</button></form>`;
  return `${setting}<div class="row moderation">${signedIn}${deleteGuests}</div>`;
}

/** The page of comments shown, and the links to the older ones and back to the newest. */
function commentPager(page: DropPage): string {
  const { comments, commentsBefore } = page;
  const links: string[] = [];
  const path = dropPath(page.drop.slug);
  if (commentsBefore !== undefined) links.push(`<a id="newest-comments" href="${path}#comments">Newest comments</a>`);
  if (comments.olderBefore !== undefined) {
    links.push(
      `<a id="older-comments" href="${path}?comments_before=${comments.olderBefore}#comments">Older comments</a>`,
    );
  }
  if (links.length === 0) return '';
  const shown = comments.page.comments.length;
  const which = commentsBefore === undefined ? `the newest ${shown}` : `${shown} older ones`;
  return `<nav class="pager" aria-label="Pages of comments"><span class="muted">Showing ${which} of ${comments.page.total}</span><span class="row">${links.join('')}</span></nav>`;
}

function commentsSection(page: DropPage): string {
  const { comments } = page;
  const total = comments.page.total;
  const list =
    comments.page.comments.length === 0
      ? `<p class="muted" id="no-comments">No comments${page.commentsBefore === undefined ? ' yet' : ' older than these'}. People comment from the drop's page (its Comments button); agents read them with <span class="mono">GET /api/drops/${escapeHtml(page.drop.slug)}/comments</span>.</p>`
      : `<form method="post" action="${dropPath(page.drop.slug)}/comments/delete" id="bulk-comments" data-confirm="Delete the ticked comments? This cannot be undone.">${csrfField(page.who.csrf)}</form>
<ol class="comments" id="comment-list">${comments.page.comments.map((c) => commentRow(page, c)).join('')}</ol>
<div class="row"><button class="danger" type="submit" form="bulk-comments" id="delete-selected">Delete the ticked comments</button></div>`;
  return `<section aria-labelledby="comments-h" id="comments"><h2 id="comments-h">Comments <span class="muted">(${comments.open} open of ${total})</span></h2>${moderationTools(page)}${list}${commentPager(page)}</section>`;
}

/** `/console/drops/<slug>`: everything the owner can see and do with one drop. */
export function dropPage(page: DropPage): string {
  const { drop } = page;
  const url = `${page.baseUrl}/p/${drop.slug}`;
  const { stats } = page;
  const seen = stats.lastViewedAt === null ? 'never viewed' : `last viewed ${timeTag(stats.lastViewedAt)}`;
  const summary = `<p class="muted" id="drop-summary">${drop.versionCount} version${drop.versionCount === 1 ? '' : 's'} · ${drop.viewCount} view${drop.viewCount === 1 ? '' : 's'} by ${stats.uniqueViewers} viewer${stats.uniqueViewers === 1 ? '' : 's'} · ${seen} · ${drop.locked ? 'locked' : 'open'}${drop.expiresAt === null ? '' : ` · expires ${timeTag(drop.expiresAt)}`} · updated ${timeTag(drop.updatedAt)}</p>`;
  const body = `<p><a href="/console">← All drops</a></p><h1 id="drop-title">${escapeHtml(drop.title)}</h1>${summary}
${page.done === undefined ? '' : notice('ok', page.done)}${page.error === undefined ? '' : notice('err', page.error)}
<section aria-labelledby="share-h"><h2 id="share-h">Share</h2>${previewFigure(drop)}${copyableCommand('public-url', url, 'Public URL')}
<p><a class="button primary" href="/p/${encodeURIComponent(drop.slug)}" id="open-drop">Open the drop</a></p>${originLines(page)}</section>
${sharingSection(page)}
${versionsSection(page)}${warningsSection(page)}${commentsSection(page)}${detailsSection(page)}${passcodeSection(page)}${expirySection(page)}
<section aria-labelledby="danger-h"><h2 id="danger-h">Delete</h2><p class="muted">Deleting removes every version; the URL stops working.</p>
<a class="button danger" href="${dropPath(drop.slug)}/delete" id="delete-drop">Delete this drop…</a></section>`;
  return consoleShell({ title: drop.title, nonce: page.nonce, who: page.who, current: 'drops', body, style: STYLE });
}

/**
 * The latest version's preview image, as link cards show it (docs/console.md): sized before it loads, so the page does
 * not move. A locked drop's cards show the generic protected image instead, and the owner is told so.
 */
function previewFigure(drop: DropRecord): string {
  const src = `${dropPath(drop.slug)}/preview.png?v=${drop.latestVersion}`;
  const note = drop.locked
    ? 'Version preview. While the passcode is set, link cards show a generic “protected drop” image instead.'
    : 'What a link to this drop shows in chats and issues.';
  return `<figure class="preview-figure"><img class="preview" id="drop-preview" src="${src}" width="480" height="252" loading="lazy" decoding="async" alt="Preview of version ${drop.latestVersion} of ${escapeHtml(drop.title)}"><figcaption class="muted">${note}</figcaption></figure>`;
}

/** `/console/drops/<slug>/delete`: the confirmation, naming the drop. */
export function confirmDeletePage(options: { who: Who; nonce: string; baseUrl: string; drop: DropRecord }): string {
  const { drop, who } = options;
  const body = `<section><h1>Delete “${escapeHtml(drop.title)}”?</h1>
<p>This deletes the drop <strong>${escapeHtml(drop.title)}</strong> (<span class="mono">${escapeHtml(drop.slug)}</span>) and all of its
${drop.versionCount} version${drop.versionCount === 1 ? '' : 's'}. Its URL, <span class="mono">${escapeHtml(options.baseUrl)}/p/${escapeHtml(drop.slug)}</span>,
stops working for everyone. This cannot be undone.</p>
<form method="post" action="${dropPath(drop.slug)}/delete" class="row">${csrfField(who.csrf)}
<button class="primary danger" type="submit" id="confirm-delete">Delete “${escapeHtml(drop.title)}”</button><a href="${dropPath(drop.slug)}">Cancel</a></form></section>`;
  return consoleShell({ title: `Delete ${drop.title}`, nonce: options.nonce, who, current: 'drops', body });
}
