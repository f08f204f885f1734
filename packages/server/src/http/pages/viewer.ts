/**
 * Spec 4.6: the public viewer page at /p/<slug> and the passcode gate shown in its place for a locked drop.
 *
 * Pure template functions (no I/O). The service's own chrome makes no external request: inline CSS and JS only,
 * system fonts, no favicon fetch. Every interpolated value goes through escapeHtml. The only inline script carries
 * the response's CSP nonce; there are no inline event handlers or style attributes, so a strict CSP holds.
 */
import { FRAME_LOCKED_MESSAGE } from './content-host.js';
import { escapeHtml } from './layout.js';

export interface ViewerModel {
  slug: string;
  title: string;
  /** '' when none. */
  description: string;
  /** The version shown. */
  version: number;
  latestVersion: number;
  /** Newest first, for the picker. createdAt in Unix ms. */
  versions: ReadonlyArray<{ version: number; createdAt: number }>;
  /** Creation time of the shown version, Unix ms. */
  createdAt: number;
  /** The shown version's context (reasoning trace); null when none. */
  context: string | null;
  /** URL of the iframe document, already built (may carry a capability query parameter). */
  frameSrc: string;
  /**
   * The drop's own origin when the frame shows it there (docs/api.md, "Each drop on its own origin"): the sandbox
   * then keeps that origin, so its storage works. Absent: the raw path, in an opaque origin.
   */
  frameOrigin?: string;
  /** A locked drop on its own origin: when the frame's ticket has lapsed, reload for a fresh one. */
  renewTicket?: boolean;
  /** Link to the raw document. */
  rawUrl: string;
  /** Absolute {base_url}/p/<slug>, for og:url and <link rel=canonical>. */
  canonicalUrl: string;
  /** Link cards (docs/api.md, "Previews and embeds"): absolute URLs of the version's image and oEmbed answer. */
  card?: LinkCard;
  /** CSP nonce for the inline script (and style). */
  nonce: string;
  /** The comments panel; absent when comments are off and there are none to show. */
  comments?: ViewerComments;
  /** The URL named a version (`?v=`): a newer one is announced, not followed (docs/api.md, "Live pages"). */
  pinned?: boolean;
}

/** What a link card of a page is made of (docs/api.md, "Previews and embeds"). */
export interface LinkCard {
  /** Absolute URL of the 1200x630 preview image. */
  readonly imageUrl: string;
  /** Absolute URL of the oEmbed answer for the page; absent where none is given (a locked drop). */
  readonly oembedUrl?: string;
}

/** The Open Graph and Twitter image tags of a link card, and the oEmbed discovery link. */
function linkCardTags(card: LinkCard | undefined, title: string): string {
  if (card === undefined) return '';
  const image = escapeHtml(card.imageUrl);
  return [
    `<meta property="og:image" content="${image}">`,
    '<meta property="og:image:type" content="image/png">',
    '<meta property="og:image:width" content="1200">',
    '<meta property="og:image:height" content="630">',
    '<meta name="twitter:card" content="summary_large_image">',
    `<meta name="twitter:image" content="${image}">`,
    card.oembedUrl === undefined
      ? ''
      : `<link rel="alternate" type="application/json+oembed" href="${escapeHtml(card.oembedUrl)}" title="${escapeHtml(title)}">`,
  ].join('');
}

/** One comment as the panel shows it. */
export interface ViewerComment {
  readonly id: string;
  /** The version it was made on. */
  readonly version: number;
  readonly author: { readonly name: string; readonly kind: 'owner' | 'member' | 'guest' };
  readonly body: string;
  readonly quote: string | null;
  readonly createdAt: number;
  readonly resolvedInVersion: number | null;
}

/** The comments panel of the shown version: its comments, those it resolved, and what this visitor may do. */
export interface ViewerComments {
  /** A page of the comments made on the shown version, oldest first (the newest page unless `newestHref`). */
  readonly list: readonly ViewerComment[];
  /** Comments made on the shown version, on every page. */
  readonly total: number;
  /** The page of older comments, when there is one. */
  readonly olderHref?: string;
  /** Back to the newest comments, when this page is an older one. */
  readonly newestHref?: string;
  /** Made on earlier versions and resolved in the shown one (the newest of them), oldest first. */
  readonly resolvedHere: readonly ViewerComment[];
  readonly resolvedHereTotal: number;
  /** Comment as a signed-in account; as a guest with a typed name; sign in first; or nothing (comments off). */
  readonly can:
    | { readonly kind: 'account'; readonly login: string; readonly csrf: string }
    | { readonly kind: 'guest' }
    | { readonly kind: 'sign_in'; readonly href: string; readonly provider: string }
    | { readonly kind: 'off' };
  /** The form's POST path. */
  readonly action: string;
  /** A refusal of the last post, shown above the form. */
  readonly error?: string;
  /** The panel starts open (after a post, or with #comments). */
  readonly open?: boolean;
}

export interface GateModel {
  slug: string;
  /** Form POST target path, e.g. /p/<slug>/unlock?v=3. */
  action: string;
  /**
   * 'foreign': the form was posted from another site or a sandboxed document, not from this page; 'form': the form
   * itself was refused (not readable, not a form, too large), as `detail` says.
   */
  error: 'wrong' | 'rate_limited' | 'foreign' | 'form' | null;
  /** With 'form': the refusal's message. */
  detail?: string;
  /** With 'rate_limited': seconds until another attempt is accepted. */
  retryAfterSeconds?: number;
  nonce: string;
  /** The protected drop's link card: the generic image, nothing of the drop (docs/api.md, "Previews and embeds"). */
  card?: LinkCard;
}

/** The sandbox attribute of the drop iframe on the raw path: never allow-same-origin (docs/api.md 4.6; docs/decisions/0008-opaque-origin-sandbox-for-untrusted-html.md). */
export const IFRAME_SANDBOX = 'allow-scripts allow-forms allow-popups allow-modals allow-downloads';

/**
 * On the drop's own origin: allow-same-origin keeps that origin, which is the drop's alone (docs/decisions/
 * 0024-content-origins.md), so its storage works and it still reaches nothing of the service's.
 */
export const IFRAME_SANDBOX_OWN_ORIGIN = `${IFRAME_SANDBOX} allow-same-origin`;

/**
 * Renews a locked drop's frame ticket: the content host's locked page posts FRAME_LOCKED_MESSAGE to the viewer when
 * the ticket in the frame's URL has lapsed (a reload inside the frame, minutes later); the viewer reloads itself
 * for a fresh one, at most once a minute, so a drop posting the message itself cannot loop it.
 */
function renewScript(frameOrigin: string): string {
  const origin = JSON.stringify(frameOrigin).replace(/</g, '\\u003c');
  return `(function(){var f=document.getElementById('drop-frame');addEventListener('message',function(e){
if(!f||e.source!==f.contentWindow||e.origin!==${origin}||e.data!==${JSON.stringify(FRAME_LOCKED_MESSAGE)})return;
var k='htmldrop-renew:'+location.pathname,n=Date.now(),l=0;try{l=+(sessionStorage.getItem(k)||0);sessionStorage.setItem(k,String(n));}catch(x){}
if(n-l>60000)location.reload();});})();`;
}

const GENERIC_DESCRIPTION = 'An HTML document shared with htmldrop.';

/** Shared palette and base rules: the same visual language as layout.ts, for the viewer and the gate. */
const BASE_STYLE = `:root{color-scheme:light dark;--fg:#1d2430;--fg2:#3b4452;--muted:#5b6675;--bg:#f6f7f9;--card:#fff;
--line:rgba(16,24,40,.12);--hover:rgba(16,24,40,.06);--accent:#3758f9;--accent-soft:rgba(55,88,249,.1);
--warn-bg:#fff6e0;--warn-fg:#6b4600;--warn-line:#f1d9a0;--err-bg:#fdecec;--err-fg:#9f1d1d;--err-line:#f3c2c2;
--shadow:0 1px 2px rgba(16,24,40,.06),0 8px 24px rgba(16,24,40,.06)}
@media (prefers-color-scheme:dark){:root{--fg:#e7eaf0;--fg2:#c9cfd9;--muted:#9aa4b2;--bg:#0f1217;--card:#181c23;
--line:rgba(255,255,255,.1);--hover:rgba(255,255,255,.07);--accent:#8aa0ff;--accent-soft:rgba(138,160,255,.14);
--warn-bg:#2a2312;--warn-fg:#f2cf7e;--warn-line:#4a3b17;--err-bg:#2d1618;--err-fg:#ffb4b4;--err-line:#5a2a2e;
--shadow:0 1px 2px rgba(0,0,0,.4),0 8px 24px rgba(0,0,0,.3)}}
*{box-sizing:border-box}
html,body{margin:0}
body{background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
-webkit-font-smoothing:antialiased;-webkit-text-size-adjust:100%;text-size-adjust:100%}
a{color:var(--accent)}
:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.sr{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.mark{display:inline-block;width:10px;height:10px;border-radius:3px;background:var(--accent);flex:none}`;

const VIEWER_STYLE = `body{height:100vh;height:100dvh;display:flex;flex-direction:column;overflow:hidden}
.bar{flex:none;display:flex;align-items:center;gap:12px;min-height:52px;padding:8px 14px 8px 16px;
background:var(--card);border-bottom:1px solid var(--line)}
.id{flex:1 1 auto;min-width:0;display:flex;align-items:center;gap:10px}
.names{min-width:0}
h1{margin:0;font-size:15px;font-weight:600;line-height:1.3;letter-spacing:-.005em;
white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.desc{margin:1px 0 0;font-size:12.5px;line-height:1.3;color:var(--muted);white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.tools{flex:none;display:flex;align-items:center;gap:6px}
.chip{display:inline-flex;align-items:center;gap:6px;height:30px;padding:0 10px;border:1px solid var(--line);border-radius:8px;
background:transparent;color:var(--fg2);font:inherit;font-size:13px;line-height:1;text-decoration:none;cursor:pointer;white-space:nowrap}
.chip:hover{background:var(--hover);color:var(--fg)}
.chip svg{width:14px;height:14px;flex:none;fill:none;stroke:currentColor;stroke-width:1.8;stroke-linecap:round;stroke-linejoin:round}
#context-toggle[aria-expanded="true"]{background:var(--accent-soft);border-color:transparent;color:var(--accent)}
.ver{display:inline-flex;align-items:center;gap:6px;margin:0}
.chip.sel{position:relative;padding-right:26px}
.sel::after{content:"";position:absolute;right:11px;top:50%;width:5px;height:5px;margin-top:-4px;border:solid var(--muted);
border-width:0 1.5px 1.5px 0;transform:rotate(45deg);pointer-events:none}
.sel:focus-within{outline:2px solid var(--accent);outline-offset:2px}
.sel:has(select:focus:not(:focus-visible)){outline:none}
.sel select{position:absolute;inset:0;width:100%;height:100%;margin:0;opacity:0;cursor:pointer;font-size:16px;
-webkit-appearance:none;appearance:none;border:0}
.sel option{background:var(--card);color:var(--fg)}
.vlabel{display:inline-flex;align-items:center;height:30px;padding:0 4px;color:var(--muted);font-size:13px}
.date{color:var(--muted);font-size:12.5px;font-variant-numeric:tabular-nums;padding:0 4px;white-space:nowrap}
.notice{flex:none;margin:0;padding:7px 16px;background:var(--warn-bg);color:var(--warn-fg);border-bottom:1px solid var(--warn-line);
font-size:13px;line-height:1.4}
.notice a{color:inherit;font-weight:600;text-underline-offset:2px}
.ctx{flex:none;background:var(--card);border-bottom:1px solid var(--line);padding:10px 16px 12px}
.ctx-head{display:flex;align-items:baseline;gap:8px;margin:0 0 8px;font-size:12px;color:var(--muted)}
.ctx-head strong{color:var(--fg2);font-weight:600;text-transform:uppercase;letter-spacing:.06em;font-size:11px}
.ctx pre{margin:0;max-height:50vh;max-height:50dvh;overflow:auto;padding:12px 14px;border-radius:8px;background:var(--bg);
border:1px solid var(--line);color:var(--fg2);font:12.5px/1.55 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;
white-space:pre-wrap;overflow-wrap:anywhere}
.stage{flex:1 1 auto;min-height:0;display:flex;background:Canvas}
.frame{flex:1 1 auto;display:block;width:100%;height:100%;border:0}
.split{flex:1 1 auto;min-height:0;display:flex;position:relative}
#comments-toggle[aria-expanded="true"]{background:var(--accent-soft);border-color:transparent;color:var(--accent)}
.count{display:inline-grid;place-items:center;min-width:18px;height:18px;padding:0 5px;border-radius:9px;background:var(--hover);
font-size:11.5px;font-weight:600;color:var(--fg2)}
.cmt{flex:none;width:360px;max-width:100%;overflow:auto;background:var(--card);border-left:1px solid var(--line);padding:14px 16px}
.cmt h2{margin:0;font-size:14px}.cmt-head{display:flex;align-items:baseline;gap:8px;margin:0 0 10px;color:var(--muted);font-size:12.5px}
.cmt ol{list-style:none;margin:0 0 14px;padding:0}.c{padding:10px 0;border-bottom:1px solid var(--line)}
.c-who{margin:0 0 4px;font-size:12.5px;color:var(--muted);display:flex;flex-wrap:wrap;gap:6px;align-items:baseline}
.c-who strong{color:var(--fg);font-size:13.5px}.kind{border:1px solid var(--line);border-radius:5px;padding:0 5px;font-size:11px}
.done{color:var(--fg2);background:var(--hover);border-radius:5px;padding:0 5px;font-size:11px}
.c blockquote{margin:4px 0;padding:2px 0 2px 10px;border-left:3px solid var(--line);color:var(--fg2);font-size:13px;white-space:pre-wrap;overflow-wrap:anywhere}
.c-body{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
.cmt form{display:grid;gap:6px}.cmt label{font-size:12.5px;font-weight:600;color:var(--fg2)}.cmt label span{font-weight:400;color:var(--muted)}
.cmt textarea,.cmt input{font:inherit;font-size:15px;color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:8px 10px;width:100%}
.cmt textarea{min-height:90px;resize:vertical}.cmt button,.cmt .btn{justify-self:start;height:34px;padding:0 14px;border:0;border-radius:8px;
background:var(--accent);color:#fff;font:inherit;font-size:14px;font-weight:600;cursor:pointer;text-decoration:none;display:inline-grid;place-items:center}
@media (prefers-color-scheme:dark){.cmt button,.cmt .btn{color:#0f1217}}
.cmt .err{margin:0 0 10px;padding:8px 10px;border-radius:8px;background:var(--err-bg);color:var(--err-fg);border:1px solid var(--err-line);font-size:13.5px}
.cmt .muted{color:var(--muted);font-size:13.5px;margin:0 0 8px}
.resolved-here{margin:0 0 14px;padding:10px 12px;border:1px solid var(--line);border-radius:10px;background:var(--bg)}
.resolved-here h3{margin:0 0 2px;font-size:13px;display:flex;align-items:center;gap:6px}.resolved-here ol{margin:0}
.resolved-here .c:last-child{border-bottom:0;padding-bottom:0}.cmt h3.sub{margin:0 0 4px;font-size:13px}
.cmt .pager{display:flex;flex-wrap:wrap;gap:6px 12px;align-items:baseline;margin:0 0 4px;font-size:13px}.cmt .pager .muted{margin:0}
@media (max-width:640px){.cmt{position:absolute;inset:0;width:auto;border-left:0}}
@media (max-width:640px){.bar{gap:8px;padding:6px 10px 6px 12px;min-height:48px}.id{gap:8px}.mark{display:none}
.date{display:none}.chip{padding:0 8px}.chip .lbl{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);
white-space:nowrap}.notice,.ctx{padding-left:12px;padding-right:12px}}
@media (max-width:420px){.desc{display:none}}`;

const GATE_STYLE = `body{min-height:100vh;min-height:100dvh;display:flex;flex-direction:column;align-items:center;justify-content:center;
padding:24px 16px}
.card{width:100%;max-width:380px;background:var(--card);border:1px solid var(--line);border-radius:14px;padding:28px 24px 24px;
box-shadow:var(--shadow)}
.lock{display:grid;place-items:center;width:40px;height:40px;border-radius:10px;background:var(--accent-soft);color:var(--accent);
margin:0 0 16px}
.lock svg{width:20px;height:20px;fill:none;stroke:currentColor;stroke-width:1.8;stroke-linecap:round;stroke-linejoin:round}
h1{margin:0 0 6px;font-size:19px;font-weight:650;letter-spacing:-.01em}
.lead{margin:0 0 20px;color:var(--muted)}
label{display:block;margin:0 0 6px;font-size:13px;font-weight:600;color:var(--fg2)}
input{display:block;width:100%;height:42px;padding:0 12px;border:1px solid var(--line);border-radius:9px;background:var(--bg);
color:var(--fg);font:inherit;font-size:16px}
input:focus{outline:2px solid var(--accent);outline-offset:-1px;border-color:transparent}
input:disabled{opacity:.55;cursor:not-allowed}
input[aria-invalid="true"]{border-color:var(--err-fg)}
button{display:block;width:100%;height:42px;margin:12px 0 0;border:0;border-radius:9px;background:var(--accent);color:#fff;
font:inherit;font-size:15px;font-weight:600;cursor:pointer}
@media (prefers-color-scheme:dark){button{color:#0f1217}}
button:hover{filter:brightness(1.06)}
button:disabled{opacity:.5;cursor:not-allowed;filter:none}
.err{margin:0 0 14px;padding:9px 12px;border-radius:9px;background:var(--err-bg);color:var(--err-fg);
border:1px solid var(--err-line);font-size:14px}
.foot{display:flex;align-items:center;gap:8px;margin:18px 0 0;color:var(--muted);font-size:12.5px}
.foot .mark{width:8px;height:8px;border-radius:2px}`;

// Inline icons: SVG inside HTML needs no xmlns, so no URL appears in the page.
const ICON_CONTEXT =
  '<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M4 6h16M4 12h10M4 18h13"/></svg>';
const ICON_EXTERNAL =
  '<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M14 4h6v6M20 4l-9 9M18 14v5a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1V7a1 1 0 0 1 1-1h5"/></svg>';
const ICON_COMMENTS =
  '<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M4 5h16v11H9l-5 4z"/></svg>';
const ICON_LOCK =
  '<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><rect x="5" y="11" width="14" height="9" rx="2"/><path d="M8 11V8a4 4 0 0 1 8 0v3"/></svg>';

/** The date part of an instant in UTC (`2026-11-21`), independent of the server's locale and time zone. */
function formatUtcDate(ms: number): { date: string; iso: string } | null {
  // Date supports +-8.64e15 ms; anything else would make toISOString throw.
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return null;
  const iso = new Date(ms).toISOString();
  return { date: iso.slice(0, 10), iso };
}

function headHtml(opts: { title: string; nonce: string; style: string; extra: string }): string {
  return `<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><meta name="color-scheme" content="light dark">${opts.extra}<title>${escapeHtml(opts.title)}</title><link rel="icon" href="data:,"><style nonce="${escapeHtml(opts.nonce)}">${BASE_STYLE}\n${opts.style}</style>`;
}

function versionPickerHtml(model: ViewerModel, viewerPath: string): string {
  const list = model.versions.some((v) => v.version === model.version)
    ? model.versions
    : [{ version: model.version, createdAt: model.createdAt }, ...model.versions];
  if (list.length <= 1) {
    return `<span class="vlabel" id="version-label" title="Version ${model.version}">v${model.version}</span>`;
  }
  const options = list
    .map((v) => {
      const label = `v${v.version}${v.version === model.latestVersion ? ' (latest)' : ''}`;
      const selected = v.version === model.version ? ' selected' : '';
      return `<option value="${v.version}"${selected}>${escapeHtml(label)}</option>`;
    })
    .join('');
  // The native select lies transparent over a compact chip that shows only the current version, so the header stays
  // narrow on phones while the picker keeps native behaviour and accessibility. autocomplete=off: Firefox would
  // otherwise restore a stale selection on back navigation.
  return `<form class="ver" method="get" action="${escapeHtml(viewerPath)}"><label class="sr" for="version-picker">Version</label><span class="chip sel"><span aria-hidden="true">v${model.version}</span><select id="version-picker" name="v" autocomplete="off">${options}</select></span><noscript><button class="chip" type="submit">Go</button></noscript></form>`;
}

/**
 * The small script: the picker navigates on change; the context and comments toggles show and hide their panels
 * (Escape closes); the comments panel opens by itself after a post or with #comments.
 */
const VIEWER_SCRIPT = `(function(){function panelOf(t){return t?document.getElementById(t.getAttribute('aria-controls')):null;}
function set(t,o){var c=panelOf(t);if(!c)return;c.hidden=!o;t.setAttribute('aria-expanded',o?'true':'false');}
document.addEventListener('change',function(e){var p=e.target;if(p&&p.id==='version-picker'&&p.form)p.form.submit();});
document.addEventListener('click',function(e){var t=e.target&&e.target.closest?e.target.closest('#context-toggle,#comments-toggle'):null,c=panelOf(t);if(!c)return;
set(t,c.hidden);if(!c.hidden&&t.id==='comments-toggle'){var b=document.getElementById('c-body');if(b)b.focus();}});
document.addEventListener('keydown',function(e){if(e.key!=='Escape')return;['context-toggle','comments-toggle'].forEach(function(id){var t=document.getElementById(id),c=panelOf(t);if(c&&!c.hidden){set(t,false);t.focus();}});});
var cp=document.getElementById('comments-panel');if(cp&&(cp.dataset.open==='1'||location.hash==='#comments'))set(document.getElementById('comments-toggle'),true);})();`;

/**
 * Following the drop live (docs/api.md, "Live pages"): the page listens to `/p/<slug>/events`. Showing the latest, a
 * new version moves the frame there and updates the page around it (the page itself is never reloaded, so its own
 * scroll and an open panel stay; the framed document's scroll is in another origin and cannot be read). Pinned with
 * `?v=`, it shows a notice with a link to the newer version instead. A comment refreshes the comments panel and its
 * count, keeping what the visitor is typing. The refreshed parts come from the same viewer URL, asked with
 * `X-Htmldrop-Live` (a comment refresh is not a render: no view counted). EventSource reconnects by itself and gives
 * up on a refusal, and nothing here reloads the page, so there is no reload loop.
 */
const LIVE_SCRIPT = `(function(){var b=document.body,slug=b.getAttribute('data-slug'),shown=+b.getAttribute('data-version'),pinned=b.getAttribute('data-pinned')==='1';
if(!slug||!window.EventSource||!window.fetch||!window.DOMParser)return;var busy=false,again=null;
function byId(d,id){return d.getElementById(id);}
function swap(id,doc,after){var o=byId(document,id),n=byId(doc,id);if(o&&n)o.replaceWith(n);else if(o)o.remove();else if(n&&after)after.after(n);return n;}
function noticeFor(v){var a=byId(document,'latest-link');if(!a){var p=document.createElement('p');p.className='notice';p.id='version-notice';p.setAttribute('role','status');
p.append('You are viewing version '+shown+'. A newer version exists: ');a=document.createElement('a');a.id='latest-link';a.href='/p/'+encodeURIComponent(slug);p.append(a,'.');
var s=document.querySelector('.split');s.parentNode.insertBefore(p,s);}a.textContent='version '+v;}
function applyComments(doc,version){var o=byId(document,'comments-panel'),n=byId(doc,'comments-panel');if(!o||!n)return;
var of=byId(document,'comment-form'),nf=byId(doc,'comment-form'),keep=of&&nf&&(!version||(byId(document,'c-body')||{}).value);
if(keep)of.setAttribute('action',nf.getAttribute('action'));var kids=Array.prototype.slice.call(n.childNodes);o.textContent='';
kids.forEach(function(k){o.appendChild(keep&&k===nf?of:k);});var oc=byId(document,'comment-count'),nc=byId(doc,'comment-count');if(oc&&nc)oc.replaceWith(nc);}
function apply(doc,kind){if(kind==='version'){var v=+doc.body.getAttribute('data-version');if(!(v>shown))return applyComments(doc,false);
var f=byId(document,'drop-frame'),nf=byId(doc,'drop-frame');if(f&&nf&&f.getAttribute('src')!==nf.getAttribute('src'))f.setAttribute('src',nf.getAttribute('src'));
var open={};['context-panel','comments-panel'].forEach(function(id){var c=byId(document,id);open[id]=!!c&&!c.hidden;});
var h=document.querySelector('header.bar'),nh=doc.querySelector('header.bar');if(h&&nh)h.replaceWith(nh);
swap('context-panel',doc,document.querySelector('header.bar'));swap('version-notice',doc,null);shown=v;b.setAttribute('data-version',String(v));document.title=doc.title;
applyComments(doc,true);['context','comments'].forEach(function(k){var c=byId(document,k+'-panel'),t=byId(document,k+'-toggle');if(c&&t){c.hidden=!open[k+'-panel'];t.setAttribute('aria-expanded',open[k+'-panel']?'true':'false');}});
}else applyComments(doc,false);}
function refresh(kind){if(busy){again=again==='version'?again:kind;return;}busy=true;
fetch(location.pathname+location.search,{credentials:'same-origin',headers:{'x-htmldrop-live':kind}}).then(function(r){if(!r.ok)throw new Error(String(r.status));return r.text();})
.then(function(t){apply(new DOMParser().parseFromString(t,'text/html'),kind);}).catch(function(){}).then(function(){busy=false;if(again){var k=again;again=null;refresh(k);}});}
var es=new EventSource('/p/'+encodeURIComponent(slug)+'/events');
es.addEventListener('version',function(e){var v;try{v=+JSON.parse(e.data).version;}catch(x){return;}if(!(v>shown))return;if(pinned)noticeFor(v);else refresh('version');});
es.addEventListener('comment',function(){refresh('comments');});})();`;

/** One comment; `here` is the shown version, so a resolution in it reads "Resolved in this version". */
function commentItem(comment: ViewerComment, here: number): string {
  const when = formatUtcDate(comment.createdAt);
  const time = when === null ? '' : `<time datetime="${when.iso}">${when.date}</time>`;
  const kind = comment.author.kind === 'guest' ? '' : `<span class="kind">${comment.author.kind}</span>`;
  const made = comment.version === here ? '' : `<span class="kind">on v${comment.version}</span>`;
  const resolved = comment.resolvedInVersion;
  const done =
    resolved === null
      ? ''
      : `<span class="done">${resolved === here ? 'Resolved in this version' : `Resolved in v${resolved}`}</span>`;
  const quote = comment.quote === null ? '' : `<blockquote>${escapeHtml(comment.quote)}</blockquote>`;
  return `<li class="c" data-comment="${escapeHtml(comment.id)}"><p class="c-who"><strong>${escapeHtml(comment.author.name)}</strong>${kind}${made}${time}${done}</p>${quote}<p class="c-body">${escapeHtml(comment.body)}</p></li>`;
}

function commentForm(comments: ViewerComments): string {
  const { can } = comments;
  if (can.kind === 'off') return '<p class="muted" id="comments-off">Comments are off for this drop.</p>';
  if (can.kind === 'sign_in') {
    return `<p class="muted">Sign in to comment on this drop.</p><a class="btn" id="comment-sign-in" href="${escapeHtml(can.href)}">Sign in with ${escapeHtml(can.provider)}</a>`;
  }
  const who =
    can.kind === 'account'
      ? `<input type="hidden" name="csrf" value="${escapeHtml(can.csrf)}"><p class="muted" id="commenting-as">Commenting as <strong>${escapeHtml(can.login)}</strong></p>`
      : '<label for="c-name">Your name</label><input id="c-name" name="name" required maxlength="60" autocomplete="name">';
  return `<form method="post" action="${escapeHtml(comments.action)}" id="comment-form">${who}
<label for="c-body">Comment</label><textarea id="c-body" name="body" required maxlength="4000"></textarea>
<label for="c-quote">Quote <span>(optional: paste the text your comment is about)</span></label><input id="c-quote" name="quote" maxlength="1000">
<button type="submit" id="comment-submit">Post comment</button></form>`;
}

/** What the shown version resolved of the comments made on earlier ones (PUT with `resolves`, or resolving). */
function resolvedHereSection(model: ViewerModel, comments: ViewerComments): string {
  if (comments.resolvedHereTotal === 0) return '';
  const more = comments.resolvedHereTotal - comments.resolvedHere.length;
  const rest =
    more > 0 ? `<p class="muted" id="resolved-here-more">And ${more} more, the oldest, not shown here.</p>` : '';
  return `<section class="resolved-here" id="resolved-here" aria-labelledby="resolved-here-h"><h3 id="resolved-here-h">Resolved in this version <span class="count">${comments.resolvedHereTotal}</span></h3><p class="muted">Comments on earlier versions that version ${model.version} addresses.</p><ol>${comments.resolvedHere.map((c) => commentItem(c, model.version)).join('')}</ol>${rest}</section>`;
}

/** Which page of the version's comments this is, with the links to the others. */
function commentPager(comments: ViewerComments): string {
  const shown = comments.list.length;
  const parts: string[] = [];
  if (comments.olderHref !== undefined) {
    parts.push(`<a id="older-comments" href="${escapeHtml(comments.olderHref)}">Older comments</a>`);
  }
  if (comments.newestHref !== undefined) {
    parts.push(`<a id="newest-comments" href="${escapeHtml(comments.newestHref)}">Newest comments</a>`);
  }
  if (parts.length === 0) return '';
  const which = comments.newestHref === undefined ? `the newest ${shown}` : `${shown} older ones`;
  return `<nav class="pager" aria-label="Pages of comments"><span class="muted">Showing ${which} of ${comments.total}</span>${parts.join('')}</nav>`;
}

function commentsPanel(model: ViewerModel, comments: ViewerComments): string {
  // With a "Resolved in this version" box above, the version's own comments get a heading of their own.
  const heading =
    comments.resolvedHereTotal === 0 ? '' : '<h3 class="sub" id="made-here-h">Comments on this version</h3>';
  const list =
    comments.list.length === 0
      ? `${heading}<p class="muted" id="no-comments">No comments on this version yet.</p>`
      : `${heading}${commentPager(comments)}<ol id="comment-list">${comments.list.map((c) => commentItem(c, model.version)).join('')}</ol>`;
  const error =
    comments.error === undefined
      ? ''
      : `<p class="err" role="alert" id="comment-error">${escapeHtml(comments.error)}</p>`;
  return `<aside class="cmt" id="comments-panel" hidden${comments.open === true ? ' data-open="1"' : ''} aria-labelledby="comments-h"><div class="cmt-head"><h2 id="comments-h">Comments</h2><span>on version ${model.version}</span></div>${resolvedHereSection(model, comments)}${list}${error}${commentForm(comments)}</aside>`;
}

/** The Comments button's count: the panel's comments, on every page, with what they are in words. */
function commentCount(comments: ViewerComments): string {
  const count = comments.total + comments.resolvedHereTotal;
  const words =
    comments.resolvedHereTotal === 0
      ? `${comments.total} comments`
      : `${comments.total} comments, and ${comments.resolvedHereTotal} resolved in this version`;
  return `<span class="count" id="comment-count" aria-label="${words}">${count}</span>`;
}

/** The public viewer page: header bar (title, description, context toggle, version picker, date, raw link), then the drop. */
export function renderViewer(model: ViewerModel): string {
  const title = model.title.trim() === '' ? 'Untitled drop' : model.title;
  const description = model.description.trim();
  const metaDescription = description === '' ? GENERIC_DESCRIPTION : description;
  const viewerPath = `/p/${encodeURIComponent(model.slug)}`;
  const nonce = escapeHtml(model.nonce);
  const t = escapeHtml(title);
  const d = escapeHtml(metaDescription);
  const canonical = escapeHtml(model.canonicalUrl);
  const hasContext = model.context !== null;
  const comments = model.comments;
  const isOld = model.version !== model.latestVersion;
  const when = formatUtcDate(model.createdAt);

  const meta = [
    `<meta name="description" content="${d}">`,
    `<meta property="og:title" content="${t}">`,
    `<meta property="og:description" content="${d}">`,
    '<meta property="og:type" content="website">',
    `<meta property="og:url" content="${canonical}">`,
    '<meta property="og:site_name" content="htmldrop">',
    model.card === undefined ? '<meta name="twitter:card" content="summary">' : linkCardTags(model.card, title),
    `<link rel="canonical" href="${canonical}">`,
    // Without JS the toggle cannot work: show the context openly instead.
    hasContext || comments !== undefined
      ? `<noscript><style nonce="${nonce}">#context-toggle,#comments-toggle{display:none}#context-panel[hidden],#comments-panel[hidden]{display:block}</style></noscript>`
      : '',
  ].join('');

  const contextToggle = hasContext
    ? `<button type="button" class="chip" id="context-toggle" aria-expanded="false" aria-controls="context-panel" title="Show the context recorded with this version">${ICON_CONTEXT}<span class="lbl">Context</span></button>`
    : '';
  const commentsToggle =
    comments === undefined
      ? ''
      : `<button type="button" class="chip" id="comments-toggle" aria-expanded="false" aria-controls="comments-panel" title="Comments on this version">${ICON_COMMENTS}<span class="lbl">Comments</span>${commentCount(comments)}</button>`;
  const date = when === null ? '' : `<time class="date" datetime="${when.iso}">${when.date}</time>`;
  const header = `<header class="bar"><div class="id"><span class="mark" aria-hidden="true"></span><div class="names"><h1 title="${t}">${t}</h1>${description === '' ? '' : `<p class="desc" title="${escapeHtml(description)}">${escapeHtml(description)}</p>`}</div></div><nav class="tools" aria-label="Drop">${contextToggle}${commentsToggle}${versionPickerHtml(model, viewerPath)}${date}<a class="chip" id="raw-link" href="${escapeHtml(model.rawUrl)}" target="_blank" rel="noopener noreferrer" title="Open the raw document in a new tab">Raw${ICON_EXTERNAL}</a></nav></header>`;

  const panel =
    model.context === null
      ? ''
      : `<section class="ctx" id="context-panel" hidden aria-label="Context of version ${model.version}"><p class="ctx-head"><strong>Context</strong><span>recorded with version ${model.version}</span></p><pre tabindex="0">${escapeHtml(model.context)}</pre></section>`;

  const notice = isOld
    ? `<p class="notice" id="version-notice" role="status">You are viewing version ${model.version}. The latest is <a id="latest-link" href="${escapeHtml(viewerPath)}">version ${model.latestVersion}</a>.</p>`
    : '';

  const sandbox = model.frameOrigin === undefined ? IFRAME_SANDBOX : IFRAME_SANDBOX_OWN_ORIGIN;
  const frame = `<iframe class="frame" id="drop-frame" src="${escapeHtml(model.frameSrc)}" title="${t}" sandbox="${sandbox}" referrerpolicy="no-referrer" loading="eager"></iframe>`;

  const renew = model.renewTicket === true && model.frameOrigin !== undefined ? renewScript(model.frameOrigin) : '';
  const script = `<script nonce="${nonce}">${VIEWER_SCRIPT}${LIVE_SCRIPT}${renew}</script>`;
  const live = `data-slug="${escapeHtml(model.slug)}" data-version="${model.version}" data-pinned="${model.pinned === true ? '1' : '0'}"`;

  return `<!doctype html><html lang="en"><head>${headHtml({ title: `${title} · htmldrop`, nonce: model.nonce, style: VIEWER_STYLE, extra: meta })}</head><body ${live}>${header}${panel}${notice}<div class="split"><main class="stage" id="drop">${frame}</main>${comments === undefined ? '' : commentsPanel(model, comments)}</div>${script}</body></html>`;
}

function rateLimitMessage(retryAfterSeconds: number | undefined): string {
  if (retryAfterSeconds === undefined || !Number.isFinite(retryAfterSeconds)) {
    return 'Too many attempts. Try again in a few minutes.';
  }
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  return `Too many attempts. Try again in about ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.`;
}

/** The passcode gate shown instead of a locked drop. Reveals nothing about the drop and never echoes a passcode. */
export function renderGate(model: GateModel): string {
  const limited = model.error === 'rate_limited';
  const message =
    model.error === 'wrong'
      ? 'That passcode is not right.'
      : model.error === 'foreign'
        ? 'For your safety, a passcode is only accepted from this page. Enter it here.'
        : limited
          ? rateLimitMessage(model.retryAfterSeconds)
          : model.error === 'form'
            ? `${model.detail ?? 'The form could not be read.'} Enter the passcode again.`
            : null;
  const error = message === null ? '' : `<p class="err" id="gate-error" role="alert">${escapeHtml(message)}</p>`;
  const inputAttrs = [
    'type="password"',
    'id="passcode"',
    'name="passcode"',
    'autocomplete="current-password"',
    'required',
    'autofocus',
    'spellcheck="false"',
    'autocapitalize="off"',
    message === null ? '' : 'aria-describedby="gate-error"',
    model.error === 'wrong' ? 'aria-invalid="true"' : '',
    limited ? 'disabled' : '',
  ]
    .filter((a) => a !== '')
    .join(' ');
  const body = `<main class="card"><div class="lock">${ICON_LOCK}</div><h1>This drop is protected</h1><p class="lead">Enter the passcode you were given.</p>${error}<form method="post" action="${escapeHtml(model.action)}"><label for="passcode">Passcode</label><input ${inputAttrs}><button type="submit" id="unlock"${limited ? ' disabled' : ''}>Unlock</button></form></main><p class="foot"><span class="mark" aria-hidden="true"></span>htmldrop</p>`;
  return `<!doctype html><html lang="en"><head>${headHtml({ title: 'Protected drop · htmldrop', nonce: model.nonce, style: GATE_STYLE, extra: `<meta name="robots" content="noindex">${gateCardTags(model.card)}` })}</head><body>${body}</body></html>`;
}

/** A protected drop's link card: a generic title, description and image, the same for every locked drop. */
function gateCardTags(card: LinkCard | undefined): string {
  if (card === undefined) return '';
  return [
    '<meta property="og:title" content="Protected drop">',
    '<meta property="og:description" content="This drop is protected: open the link to see it.">',
    '<meta property="og:site_name" content="htmldrop">',
    linkCardTags(card, 'Protected drop'),
  ].join('');
}

export interface EmbedModel {
  readonly title: string;
  readonly version: number;
  /** The drop's frame, as the viewer's (`ViewerModel.frameSrc`, `frameOrigin`, `renewTicket`). */
  readonly frameSrc: string;
  readonly frameOrigin?: string;
  readonly renewTicket?: boolean;
  /** Absolute URL of the viewer, opened in a new tab from the embed's corner link. */
  readonly viewerUrl: string;
  readonly nonce: string;
}

const EMBED_STYLE = `body{height:100vh;height:100dvh;overflow:hidden;position:relative}
#drop{height:100%}
.frame{display:block;border:0;width:100%;height:100%;background:#fff}
svg{width:14px;height:14px;fill:none;stroke:currentColor;stroke-width:2;stroke-linecap:round;stroke-linejoin:round;flex:none}
.open{position:absolute;right:8px;bottom:8px;display:inline-flex;align-items:center;gap:6px;padding:4px 10px;
border-radius:999px;background:var(--card);color:var(--fg);border:1px solid var(--line);box-shadow:var(--shadow);
text-decoration:none;font-size:12px;max-width:calc(100% - 16px);overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.card{height:100%;display:flex;flex-direction:column;align-items:center;justify-content:center;gap:8px;padding:16px;text-align:center}
.card svg{width:40px;height:40px;color:var(--muted)}
.card h1{font-size:18px;margin:0}
.card p{margin:0;color:var(--fg2)}`;

/**
 * The chrome-less embed of a drop (docs/api.md, "Previews and embeds"): the drop's frame filling the page and a
 * small link to the viewer, for the iframe an oEmbed answer hands out. Framed only where the viewer may be.
 */
export function renderEmbed(model: EmbedModel): string {
  const title = model.title.trim() === '' ? 'Untitled drop' : model.title;
  const t = escapeHtml(title);
  const sandbox = model.frameOrigin === undefined ? IFRAME_SANDBOX : IFRAME_SANDBOX_OWN_ORIGIN;
  const frame = `<iframe class="frame" id="drop-frame" src="${escapeHtml(model.frameSrc)}" title="${t}" sandbox="${sandbox}" referrerpolicy="no-referrer" loading="eager"></iframe>`;
  const open = `<a class="open" id="open-viewer" href="${escapeHtml(model.viewerUrl)}" target="_blank" rel="noopener noreferrer">${t} · v${model.version} · htmldrop${ICON_EXTERNAL}</a>`;
  const renew = model.renewTicket === true && model.frameOrigin !== undefined ? renewScript(model.frameOrigin) : '';
  const script = renew === '' ? '' : `<script nonce="${escapeHtml(model.nonce)}">${renew}</script>`;
  return `<!doctype html><html lang="en"><head>${headHtml({ title: `${title} · htmldrop`, nonce: model.nonce, style: EMBED_STYLE, extra: '<meta name="robots" content="noindex">' })}</head><body><main id="drop">${frame}</main>${open}${script}</body></html>`;
}

/** The embed of a drop the visitor cannot open here: a link to open it in the viewer, nothing of the drop. */
export function renderProtectedEmbed(model: { readonly viewerUrl: string; readonly nonce: string }): string {
  const body = `<main class="card"><div>${ICON_LOCK}</div><h1>Protected drop</h1><p><a href="${escapeHtml(model.viewerUrl)}" target="_blank" rel="noopener noreferrer">Open it on htmldrop</a> and enter its passcode to see it.</p></main>`;
  return `<!doctype html><html lang="en"><head>${headHtml({ title: 'Protected drop · htmldrop', nonce: model.nonce, style: EMBED_STYLE, extra: '<meta name="robots" content="noindex">' })}</head><body>${body}</body></html>`;
}

/**
 * The page of a visitor who may not see a drop (docs/api.md, "Who can see a drop"): 401, sign in (and come back to
 * the same drop and version); or 403, the signed-in identity (named) is not on the list, with a way to sign out and
 * in as someone else. Neither shows the drop's title or any byte of it: only the address the visitor typed.
 */
export interface AccessRefusedModel {
  readonly kind: 'sign_in' | 'not_on_list';
  /** Why a link did not open it, when the visitor came with one. */
  readonly link?: 'revoked' | 'expired' | undefined;
  /** Where signing in starts (it comes back to the drop and version asked for). */
  readonly signInHref: string;
  /** The identity provider's name, for the button. */
  readonly provider: string;
  /** The signed-in person (not_on_list): their username, the sign-out form's CSRF token and where it comes back to. */
  readonly signedInAs?: { readonly login: string; readonly csrf: string; readonly next: string } | undefined;
  readonly nonce: string;
}

const ACCESS_STYLE = `${GATE_STYLE}
.who{font-weight:650;color:var(--fg)}
a.button{display:flex;align-items:center;justify-content:center;width:100%;height:42px;margin:12px 0 0;border-radius:9px;
background:var(--accent);color:#fff;font-size:15px;font-weight:600;text-decoration:none}
@media (prefers-color-scheme:dark){a.button{color:#0f1217}}
a.button:hover{filter:brightness(1.06)}
button.quiet{background:transparent;color:var(--accent);border:1px solid var(--line)}
@media (prefers-color-scheme:dark){button.quiet{color:var(--accent)}}
.note{margin:14px 0 0;color:var(--muted);font-size:13.5px}`;

export function renderAccessRefused(model: AccessRefusedModel): string {
  const linkNote =
    model.link === undefined
      ? ''
      : `<p class="err" role="alert">The link you opened ${model.link === 'revoked' ? 'was revoked by its owner' : 'has expired'}: it no longer opens this drop.</p>`;
  let body: string;
  if (model.kind === 'not_on_list' && model.signedInAs !== undefined) {
    const who = model.signedInAs;
    body = `<h1>You are not on the list</h1>${linkNote}<p class="lead">You are signed in as <span class="who">${escapeHtml(who.login)}</span>, who is not among the people this drop is shared with.</p><p class="note">Ask the person who sent you the address to add you, or sign in as someone else.</p><form method="post" action="/console/logout"><input type="hidden" name="csrf" value="${escapeHtml(who.csrf)}"><input type="hidden" name="next" value="${escapeHtml(who.next)}"><button type="submit" class="quiet" id="sign-out">Sign out</button></form>`;
  } else {
    body = `<h1>Sign in to see this drop</h1>${linkNote}<p class="lead">This drop is shared with specific people. Sign in to show who you are.</p><a class="button" id="sign-in" href="${escapeHtml(model.signInHref)}">Sign in with ${escapeHtml(model.provider)}</a>`;
  }
  const title = model.kind === 'not_on_list' ? 'Not on the list · htmldrop' : 'Sign in · htmldrop';
  const page = `<main class="card"><div class="lock">${ICON_LOCK}</div>${body}</main><p class="foot"><span class="mark" aria-hidden="true"></span>htmldrop</p>`;
  // Same-origin referrers, so the Sign out form's POST carries the service's Origin (a no-referrer page sends `null`).
  const head = headHtml({
    title,
    nonce: model.nonce,
    style: ACCESS_STYLE,
    extra: '<meta name="robots" content="noindex">',
  }).replace('<meta name="referrer" content="no-referrer">', '<meta name="referrer" content="same-origin">');
  return `<!doctype html><html lang="en"><head>${head}</head><body>${page}</body></html>`;
}
