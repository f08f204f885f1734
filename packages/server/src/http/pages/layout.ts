/** Shared chrome for the service's own small HTML pages (no external requests: inline styles only). */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const STYLE = `:root{color-scheme:light dark;--fg:#1d2430;--muted:#5b6675;--bg:#f6f7f9;--card:#fff;--accent:#3758f9;--on-accent:#fff;--err-fg:#b42318;--err-bg:#fef3f2}
@media (prefers-color-scheme:dark){:root{--fg:#e7eaf0;--muted:#9aa4b2;--bg:#0f1217;--card:#181c23;--accent:#8aa0ff;--on-accent:#0f1217;--err-fg:#ffb4ab;--err-bg:#3a1d1b}}
*{box-sizing:border-box}body{margin:0;min-height:100vh;display:grid;place-items:center;background:var(--bg);color:var(--fg);
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;padding:24px}
main{max-width:480px;width:100%;background:var(--card);border-radius:14px;padding:28px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{font-size:1.25rem;margin:0 0 8px}p{color:var(--muted);margin:0 0 12px}a{color:var(--accent)}
.code{font:600 1.6rem/1.2 ui-monospace,SFMono-Regular,Menlo,monospace;letter-spacing:.12em;padding:12px 16px;margin:8px 0 16px;
border-radius:10px;background:var(--bg);text-align:center}
dl{display:grid;grid-template-columns:auto 1fr;gap:4px 12px;margin:0 0 20px;font-size:.95rem}dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
form{margin:0}.row{display:flex;gap:10px;flex-wrap:wrap}
input[type=text],input[type=password]{width:100%;font:inherit;padding:10px 12px;border-radius:8px;border:1px solid #c9ced6;
background:var(--card);color:var(--fg);margin:4px 0 12px}
button,.button{font:600 .95rem/1 system-ui,sans-serif;padding:11px 18px;border-radius:8px;border:1px solid transparent;cursor:pointer;
text-decoration:none;display:inline-block}.primary{background:var(--accent);color:var(--on-accent)}
.secondary{background:transparent;color:var(--fg);border-color:#c9ced6}.link{background:none;border:0;padding:0;color:var(--accent);font-weight:400}
.err{color:var(--err-fg);background:var(--err-bg);border-radius:8px;padding:8px 12px}.small{font-size:.85rem}`;

/**
 * A small centred page with a heading and a message (HTML already escaped by the caller). The document title is
 * `<title> · htmldrop`, or `documentTitle` as given.
 */
export function simplePage(
  title: string,
  bodyHtml: string,
  headHtml = '',
  documentTitle = `${title} · htmldrop`,
): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(documentTitle)}</title><style>${STYLE}</style>${headHtml}</head><body><main><h1>${escapeHtml(title)}</h1>${bodyHtml}</main></body></html>`;
}

const HOME_LINK = '<p><a href="/">Go to the htmldrop home page</a></p>';

/** An unknown or deleted drop (or a malformed /p/ URL). */
export const NOT_FOUND_PAGE = simplePage(
  'Nothing here',
  `<p>This drop does not exist, or it was deleted. Check the link you were given.</p>${HOME_LINK}`,
);

/** A drop whose expiry has passed (docs/api.md, "Expiry"): 410, the link was meant to stop working. */
export const EXPIRED_PAGE = simplePage(
  'This drop has expired',
  `<p>Its owner set this link to stop working at a set time, and that time has passed. Ask them for a new link if you still need it.</p>${HOME_LINK}`,
);

/** A browser path outside /p/ and /api/ that matches nothing (docs/api.md, "Browser paths"). */
export const PAGE_NOT_FOUND_PAGE = simplePage('Page not found', `<p>There is no page at this address.</p>${HOME_LINK}`);

/** `/p/<slug>/raw` of a locked drop without a capability: where to enter the passcode. */
export function passcodeRequiredPage(viewerPath: string): string {
  return simplePage(
    'Passcode required',
    `<p>This drop is protected by a passcode. <a href="${escapeHtml(viewerPath)}">Open it in the viewer</a> to enter it.</p>`,
  );
}

/** `/p/<slug>?v=<n>` of an existing drop whose version n does not exist (or was deleted). */
export function versionNotFoundPage(slug: string, version: string, latestVersion: number): string {
  const latest = `/p/${encodeURIComponent(slug)}`;
  return simplePage(
    'Version not found',
    `<p>Version ${escapeHtml(version)} of this drop does not exist: it was deleted, or never published.</p><p><a href="${escapeHtml(latest)}">Open the latest version (version ${latestVersion})</a></p>`,
  );
}

/**
 * A form refused before anything was done (it could not be read, was not a form, or was too large), or a failure
 * in one of the service's small rooms (/verify): what went wrong, and where to go on.
 */
export function refusedFormPage(
  message: string,
  next: { readonly href: string; readonly text: string },
  failed = false,
): string {
  return simplePage(
    failed ? 'Something went wrong' : 'Form not accepted',
    `<p class="err" id="form-error" role="alert">${escapeHtml(message)}</p><p><a href="${escapeHtml(next.href)}" id="form-next">${escapeHtml(next.text)}</a></p>`,
  );
}

/** A request under /p/ that failed unexpectedly (the message is the catalogue's, never a stack). */
export function failedPage(error: { readonly message: string }): string {
  return simplePage('Something went wrong', `<p>${escapeHtml(error.message)}</p>`);
}
