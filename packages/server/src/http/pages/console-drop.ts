/** The console's page for one drop, and the confirmation before deleting it (docs/console.md). */
import type { DropRecord, VersionInfo } from '../../domain/types.js';
import type { Who } from './console.js';
import { consoleShell, copyableCommand, csrfField, notice, sizeText, timeTag } from './console-layout.js';
import { escapeHtml } from './layout.js';

export interface DropPage {
  readonly who: Who;
  readonly nonce: string;
  readonly baseUrl: string;
  readonly drop: DropRecord;
  readonly versions: readonly VersionInfo[];
  readonly done?: string;
  readonly error?: string;
  /** What the owner typed into the details form, shown again after a refusal. */
  readonly form?: { readonly title: string; readonly description: string; readonly tags: string };
}

const dropPath = (slug: string) => `/console/drops/${encodeURIComponent(slug)}`;

/** Tags as the details form edits them: one key=value per line. */
export function tagsText(metadata: Readonly<Record<string, string>>): string {
  return Object.entries(metadata)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
}

function detailsSection(page: DropPage): string {
  const { drop } = page;
  const form = page.form ?? { title: drop.title, description: drop.description ?? '', tags: tagsText(drop.metadata) };
  return `<section aria-labelledby="details-h"><h2 id="details-h">Details</h2>
<form method="post" action="${dropPath(drop.slug)}/details">${csrfField(page.who.csrf)}
<div class="field"><label for="title">Title</label><input type="text" id="title" name="title" value="${escapeHtml(form.title)}" required></div>
<div class="field"><label for="description">Description</label><textarea id="description" name="description">${escapeHtml(form.description)}</textarea></div>
<div class="field"><label for="tags">Tags <span class="muted">(one key=value per line; only you see them)</span></label><textarea id="tags" name="tags" spellcheck="false">${escapeHtml(form.tags)}</textarea></div>
<button class="primary" type="submit" id="save-details">Save details</button></form></section>`;
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
  return `<tr data-version="${n}"><td class="title-cell"><strong>Version ${n}</strong>${latest ? ' <span class="badge">latest</span>' : ''}</td>
<td data-label="Published">${timeTag(version.createdAt)}</td><td data-label="Size" class="num">${sizeText(version.sizeBytes)}</td>
<td data-label="Context">${version.hasContext ? 'Yes' : '<span class="muted">No</span>'}</td>
<td data-label="Actions"><div class="row"><a class="button" href="/p/${encodeURIComponent(drop.slug)}?v=${n}" aria-label="Open version ${n}">Open</a>${restore}${remove}</div></td></tr>`;
}

function versionsSection(page: DropPage): string {
  return `<section aria-labelledby="versions-h"><h2 id="versions-h">Versions</h2>
<table class="cards" id="version-list"><thead><tr><th scope="col">Version</th><th scope="col">Published</th><th scope="col" class="num">Size</th><th scope="col">Context</th><th scope="col">Actions</th></tr></thead>
<tbody>${page.versions.map((version) => versionRow(page, version)).join('')}</tbody></table></section>`;
}

/** `/console/drops/<slug>`: everything the owner can see and do with one drop. */
export function dropPage(page: DropPage): string {
  const { drop } = page;
  const url = `${page.baseUrl}/p/${drop.slug}`;
  const summary = `<p class="muted">${drop.versionCount} version${drop.versionCount === 1 ? '' : 's'} · ${drop.viewCount} view${drop.viewCount === 1 ? '' : 's'} · ${drop.locked ? 'locked' : 'open'} · updated ${timeTag(drop.updatedAt)}</p>`;
  const body = `<p><a href="/console">← All drops</a></p><h1 id="drop-title">${escapeHtml(drop.title)}</h1>${summary}
${page.done === undefined ? '' : notice('ok', page.done)}${page.error === undefined ? '' : notice('err', page.error)}
<section aria-labelledby="share-h"><h2 id="share-h">Share</h2>${copyableCommand('public-url', url, 'Public URL')}
<p><a class="button primary" href="/p/${encodeURIComponent(drop.slug)}" id="open-drop">Open the drop</a></p></section>
${versionsSection(page)}${detailsSection(page)}${passcodeSection(page)}
<section aria-labelledby="danger-h"><h2 id="danger-h">Delete</h2><p class="muted">Deleting removes every version; the URL stops working.</p>
<a class="button danger" href="${dropPath(drop.slug)}/delete" id="delete-drop">Delete this drop…</a></section>`;
  return consoleShell({ title: drop.title, nonce: page.nonce, who: page.who, current: 'drops', body });
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
