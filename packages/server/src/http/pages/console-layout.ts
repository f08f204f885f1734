/**
 * The console's chrome (docs/console.md): a header with the account and "Sign out", a navigation, one main column.
 * Server-rendered, inline styles, no external request; light and dark from the system setting; tables become cards
 * on a phone. The one script (copy buttons, confirmations) runs under the page's CSP nonce and is optional.
 */
import { escapeHtml } from './layout.js';

/** Colours chosen for WCAG AA contrast (4.5:1 for text) in both schemes. */
const STYLE = `:root{color-scheme:light dark;--fg:#1d2430;--muted:#535d6b;--bg:#f4f5f7;--card:#fff;--line:#d5d9e0;
--accent:#2f4fe0;--on-accent:#fff;--danger:#b42318;--ok:#146c2e;--chip:#eef1f8;--mark:#fff1a8}
@media (prefers-color-scheme:dark){:root{--fg:#e7eaf0;--muted:#a4adba;--bg:#0f1217;--card:#181c23;--line:#2e3440;
--accent:#8fa3ff;--on-accent:#0b0f1a;--danger:#ff8a80;--ok:#7ddc93;--chip:#242a35;--mark:#5c4a00}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:var(--accent)}header{background:var(--card);border-bottom:1px solid var(--line)}
.bar{max-width:1100px;margin:0 auto;padding:10px 20px;display:flex;gap:16px;align-items:center;flex-wrap:wrap}
.brand{font-weight:700;color:var(--fg);text-decoration:none;margin-right:8px}
nav a{padding:6px 10px;border-radius:6px;text-decoration:none;color:var(--fg)}nav a[aria-current=page]{background:var(--chip);font-weight:600}
.who{margin-left:auto;color:var(--muted);font-size:.9rem;display:flex;gap:10px;align-items:center}
main{max-width:1100px;margin:0 auto;padding:20px}h1{font-size:1.5rem;margin:8px 0 4px}h2{font-size:1.1rem;margin:0 0 12px}
.muted{color:var(--muted)}.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.88em}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px;margin:16px 0}
label{display:block;font-weight:600;font-size:.9rem;margin:0 0 4px}
input[type=text],input[type=search],input[type=password],textarea,select{font:inherit;color:var(--fg);background:var(--card);
border:1px solid var(--line);border-radius:7px;padding:8px 10px;width:100%}textarea{min-height:5.5em;resize:vertical}
input:focus-visible,textarea:focus-visible,select:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
button,.button{font:600 .9rem/1 system-ui,sans-serif;padding:9px 14px;border-radius:7px;border:1px solid var(--line);cursor:pointer;
background:var(--card);color:var(--fg);text-decoration:none;display:inline-block;white-space:nowrap}
.primary{background:var(--accent);border-color:var(--accent);color:var(--on-accent)}.danger{color:var(--danger);border-color:var(--danger)}
.primary.danger{background:var(--danger);border-color:var(--danger);color:var(--on-accent)}
.link{background:none;border:0;padding:0;color:var(--accent);font-weight:400;font-size:inherit;text-decoration:underline}
.grid{display:grid;gap:12px}.filters{grid-template-columns:2fr 2fr 1.3fr auto;align-items:end}
.row{display:flex;gap:8px;flex-wrap:wrap;align-items:center}.field{margin:0 0 12px}
table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:9px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}td.num,th.num{text-align:right}
.chip{display:inline-block;background:var(--chip);border-radius:999px;padding:1px 9px;margin:2px 4px 2px 0;font-size:.82rem;
color:var(--fg);text-decoration:none}.badge{display:inline-block;border:1px solid var(--line);border-radius:6px;padding:0 6px;font-size:.8rem}
.badge.warn{border-color:var(--danger);color:var(--danger);text-decoration:none}ul.warnings{padding-left:1.2rem}ul.warnings li{margin:.3rem 0;overflow-wrap:anywhere}
.notice{border-radius:8px;padding:10px 14px;margin:12px 0}.ok{background:color-mix(in srgb,var(--ok) 14%,var(--card));color:var(--fg);border-left:4px solid var(--ok)}
.err{background:color-mix(in srgb,var(--danger) 12%,var(--card));color:var(--fg);border-left:4px solid var(--danger)}
.pager a{color:var(--accent)}.pager{display:flex;gap:12px;align-items:center;justify-content:space-between;margin-top:12px}
pre.cmd{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:10px 12px;margin:6px 0;
white-space:pre-wrap;overflow-wrap:anywhere;flex:1;min-width:0;text-align:left}
.drop-id{display:flex;gap:12px;align-items:flex-start;min-width:0}.drop-id>div{min-width:0;overflow-wrap:anywhere}
.thumb{display:block;flex:none;width:160px;height:84px;object-fit:cover;border-radius:6px;border:1px solid var(--line);background:var(--bg)}
.preview{display:block;width:100%;max-width:480px;height:auto;aspect-ratio:1200/630;border-radius:8px;border:1px solid var(--line);background:var(--bg);margin:0 0 12px}
.empty{text-align:center;padding:36px 18px}ol.comments{list-style:none;margin:0;padding:0}
.comment{border-bottom:1px solid var(--line);padding:10px 0}.comment p{margin:0 0 6px}.comment-body{white-space:pre-wrap;overflow-wrap:anywhere}
.comment blockquote{margin:0 0 6px;padding-left:10px;border-left:3px solid var(--line);white-space:pre-wrap;overflow-wrap:anywhere}.title-cell a{font-weight:600}
.snippet{margin:6px 0 2px;font-size:.9rem;overflow-wrap:anywhere;max-width:60ch}.snippet mark{background:var(--mark);color:var(--fg);border-radius:3px;padding:0 2px}.found-in{font-size:.8rem}
@media (max-width:720px){.filters{grid-template-columns:1fr}.who{margin-left:0;width:100%}
table.cards thead{position:absolute;left:-9999px}table.cards tr{display:block;border:1px solid var(--line);border-radius:10px;margin:0 0 10px;padding:6px 10px;background:var(--card)}
table.cards td{display:flex;gap:10px;justify-content:space-between;border:0;padding:4px 0;text-align:right}
table.cards td::before{content:attr(data-label);color:var(--muted);font-size:.85rem;text-align:left}
table.cards td.title-cell{display:block;text-align:left}table.cards td.title-cell::before{content:none}
.thumb{width:120px;height:63px}}`;

/** Copy buttons (`data-copy` names the element whose text is copied) and confirmations (`data-confirm`). */
const SCRIPT = `for(const b of document.querySelectorAll('[data-copy]')){b.hidden=false;b.addEventListener('click',async()=>{
const t=document.getElementById(b.dataset.copy);try{await navigator.clipboard.writeText(t.textContent.trim());b.textContent='Copied'}
catch{const r=document.createRange();r.selectNodeContents(t);getSelection().removeAllRanges();getSelection().addRange(r)}
setTimeout(()=>{b.textContent='Copy'},1500)})}
for(const f of document.querySelectorAll('form[data-confirm]'))f.addEventListener('submit',(e)=>{if(!confirm(f.dataset.confirm))e.preventDefault()})`;

export interface ShellOptions {
  /** The document title, followed by " · htmldrop console" unless `documentTitle` is given. */
  readonly title: string;
  readonly documentTitle?: string;
  readonly nonce: string;
  /** The signed-in human; none on the signed-out page. */
  readonly who?: { readonly login: string; readonly provider: string; readonly csrf: string };
  /** Which navigation entry is the current page. */
  readonly current?: 'drops' | 'tokens' | 'webhooks';
  readonly body: string;
  /** A page's own `<style>` element, placed in the head after the console's. */
  readonly style?: string;
}

/** A whole console page. */
export function consoleShell(options: ShellOptions): string {
  const { who, current } = options;
  const navLink = (key: 'drops' | 'tokens' | 'webhooks', href: string, text: string) =>
    `<a href="${href}"${current === key ? ' aria-current="page"' : ''}>${text}</a>`;
  const account =
    who === undefined
      ? ''
      : `<nav aria-label="Console">${navLink('drops', '/console', 'Drops')}${navLink('tokens', '/console/tokens', 'Tokens')}${navLink('webhooks', '/console/webhooks', 'Webhooks')}</nav>
<div class="who"><span id="signed-in-as">Signed in as <strong>${escapeHtml(who.login)}</strong> (${escapeHtml(who.provider)})</span>
<form method="post" action="/console/logout">${csrfField(who.csrf)}<button class="link" type="submit" id="sign-out">Sign out</button></form></div>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(options.documentTitle ?? `${options.title} · htmldrop console`)}</title><style>${STYLE}</style>${options.style ?? ''}</head>
<body><header><div class="bar"><a class="brand" href="/">htmldrop</a>${account}</div></header>
<main id="main">${options.body}</main><script nonce="${options.nonce}">${SCRIPT}</script></body></html>`;
}

/** The hidden CSRF field every console form carries. */
export function csrfField(csrf: string): string {
  return `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;
}

/** A notice: a done action (role=status) or a refusal (role=alert). */
export function notice(kind: 'ok' | 'err', text: string): string {
  const role = kind === 'ok' ? 'status' : 'alert';
  return `<p class="notice ${kind}" role="${role}" id="${kind === 'ok' ? 'console-done' : 'console-error'}">${escapeHtml(text)}</p>`;
}

/** A time as `<time>`: UTC date and minute, with the exact instant for machines. */
export function timeTag(ms: number | null): string {
  if (ms === null) return '<span class="muted">never</span>';
  const iso = new Date(ms).toISOString();
  return `<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** Bytes as a short human size. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(2)} MB`;
}

/**
 * Where a version's file opens (docs/api.md, "Many files in one drop"): on the drop's own origin when it has one
 * (`<content_url>v/<n>/<path>`), else in its raw folder (`/p/<slug>/raw/v/<n>/<path>`).
 */
export function fileHref(slug: string, contentUrl: string | null, version: number, path: string): string {
  const inFolder = `v/${version}/${path}`;
  return contentUrl === null ? `/p/${encodeURIComponent(slug)}/raw/${inFolder}` : `${contentUrl}${inFolder}`;
}

/** A command to copy, with a copy button that the script shows (hidden without JavaScript). */
export function copyableCommand(id: string, command: string, label: string): string {
  return `<div class="row"><pre class="cmd" id="${id}" aria-label="${escapeHtml(label)}">${escapeHtml(command)}</pre>
<button type="button" data-copy="${id}" hidden aria-label="Copy ${escapeHtml(label.toLowerCase())}">Copy</button></div>`;
}
