/** Shared chrome for the service's own small HTML pages (no external requests: inline styles only). */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const STYLE = `:root{color-scheme:light dark;--fg:#1d2430;--muted:#5b6675;--bg:#f6f7f9;--card:#fff;--accent:#3758f9}
@media (prefers-color-scheme:dark){:root{--fg:#e7eaf0;--muted:#9aa4b2;--bg:#0f1217;--card:#181c23;--accent:#8aa0ff}}
*{box-sizing:border-box}body{margin:0;min-height:100vh;display:grid;place-items:center;background:var(--bg);color:var(--fg);
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;padding:24px}
main{max-width:480px;width:100%;background:var(--card);border-radius:14px;padding:28px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{font-size:1.25rem;margin:0 0 8px}p{color:var(--muted);margin:0 0 12px}a{color:var(--accent)}`;

/** A small centred page with a heading and a message (HTML already escaped by the caller). */
export function simplePage(title: string, bodyHtml: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)} · htmldrop</title><style>${STYLE}</style></head><body><main><h1>${escapeHtml(title)}</h1>${bodyHtml}</main></body></html>`;
}

export const NOT_FOUND_PAGE = simplePage(
  'Nothing here',
  '<p>This drop does not exist, or it was deleted. Check the link you were given.</p>',
);
