/**
 * Spec 4.6: the defensive additions made to a stored HTML document when it is served.
 *
 * The document is untrusted and arbitrary, so instead of parsing and re-serialising it (which would change bytes) we
 * run a small linear scanner that follows the HTML tokenizer closely enough to find ONE insertion point, and splice
 * the additions in there. Everything else stays byte-for-byte identical.
 *
 * Insertion point ("where the head ends", explicit or implied), found by simulating the browser's head phase:
 * - before the first `</head>` end tag, or before the first token that a browser treats as body content: a start tag
 *   not allowed in head (`<body>`, `<p>`, `<header>`, ...), a `</body>`, `</html>` or `</br>` end tag, or the first
 *   non-whitespace character of text;
 * - otherwise (the head never ends) at the end of the document, but never inside a construct left open at the end
 *   (unclosed comment, tag, `<title>`/`<script>`/... raw text, `<template>`): then right before that construct.
 * Because `<!doctype>`, comments, whitespace, `<html ...>`, `<head ...>` and head elements never end the head, they
 * stay before the additions; a leading BOM is skipped. Markup inside comments, raw text elements (script, style,
 * title, textarea, ...), attribute values and `<template>` contents is never mistaken for the head.
 *
 * Known simplifications (documented, harmless): scripting is assumed enabled (the raw sandbox allows scripts), so
 * `<noscript>` is raw text; SVG/MathML content is tokenised with HTML rules; character references in attribute values
 * are not decoded when looking for `name="viewport"`. The worst outcome of these is a duplicate viewport meta.
 */

import {
  asciiLowerCase,
  BANG,
  BOM,
  findAfterGt,
  findCommentEnd,
  findTagNameEnd,
  findTextContentEnd,
  GT,
  isAsciiAlpha,
  isWhitespace,
  matchesAt,
  QUESTION,
  SLASH,
  scanAttributes,
} from '../domain/html-scan.js';

/** Spec 4.6: appended at the end of the head of every served document. */
export const DEFENSIVE_STYLE =
  '<style data-htmldrop>html,body{max-width:100vw;overflow-x:clip}img,svg,video,iframe{max-width:100%}pre,table{max-width:100%}</style>';

/** Spec 4.6: injected right before DEFENSIVE_STYLE when the document has no viewport meta element. */
export const VIEWPORT_META = '<meta name="viewport" content="width=device-width, initial-scale=1">';

/** Start tags the "in head" insertion mode keeps in the head (anything else implies `</head>`). */
const HEAD_START_TAGS: ReadonlySet<string> = new Set([
  'base',
  'basefont',
  'bgsound',
  'head',
  'html',
  'link',
  'meta',
  'noframes',
  'noscript',
  'script',
  'style',
  'template',
  'title',
]);

/** End tags that close the head; other end tags are ignored by the browser while in the head. */
const HEAD_ENDING_END_TAGS: ReadonlySet<string> = new Set(['body', 'br', 'head', 'html']);

/** Returns the document with the spec 4.6 additions. Pure; O(n) in the document length. */
export function injectDefensiveHead(html: string): string {
  const { insertAt, hasViewport, hasHeadTag } = scanDocument(html);
  const elements = hasViewport ? DEFENSIVE_STYLE : VIEWPORT_META + DEFENSIVE_STYLE;
  // docs/api.md 4.6: a document without a `<head>` start tag gets one around the additions, so the served bytes
  // hold a head element. Where head elements came first (`<title>` with no `<head>`), the browser has opened the
  // head already: it ignores the extra `<head>` and the `</head>` closes the one it opened, the same tree.
  const addition = hasHeadTag ? elements : `<head>${elements}</head>`;
  return html.slice(0, insertAt) + addition + html.slice(insertAt);
}

interface ScanResult {
  /** Index in the document where the additions go. */
  insertAt: number;
  /** Whether a `<meta name="viewport">` element exists (outside comments, raw text and templates). */
  hasViewport: boolean;
  /** Whether a `<head>` start tag comes before the insertion point (outside comments, raw text and templates). */
  hasHeadTag: boolean;
}

/** The head phase so far, shared by `scanDocument` and its steps (one per kind of token). */
interface HeadScan {
  readonly s: string;
  /** Where the head ended; -1 while the (explicit or implied) head is still open. */
  headEnd: number;
  /** As in ScanResult. */
  hasViewport: boolean;
  /** As in ScanResult. */
  hasHeadTag: boolean;
  /** How many `<template>` elements are open. */
  templateDepth: number;
  /** Start of the outermost open <template>. */
  templateStart: number;
}

/** Runs the head phase over the document: the loop alternates text (up to the next `<`) and one markup token. */
function scanDocument(s: string): ScanResult {
  const n = s.length;
  const scan: HeadScan = {
    s,
    headEnd: -1,
    hasViewport: false,
    hasHeadTag: false,
    templateDepth: 0,
    templateStart: -1,
  };
  // spec 4.6: a leading BOM stays first (browsers strip it before tokenizing).
  let i = s.charCodeAt(0) === BOM ? 1 : 0;
  let unterminatedAt = -1; // start of a construct that runs to the end of the document

  while (i < n) {
    const lt = s.indexOf('<', i);
    scanText(scan, i, lt < 0 ? n : lt);
    if (lt < 0) break;
    const next = scanMarkup(scan, lt);
    if (next < 0) {
      unterminatedAt = lt;
      break;
    }
    i = next;
  }

  let headEnd = scan.headEnd;
  if (headEnd < 0) {
    // spec 4.6: the head never ended, so add at the end, but not inside anything still open at the end of the
    // document (it would swallow the additions): go before it instead.
    headEnd = n;
    if (unterminatedAt >= 0) headEnd = unterminatedAt;
    if (scan.templateDepth > 0) headEnd = Math.min(headEnd, scan.templateStart);
  }
  return { insertAt: headEnd, hasViewport: scan.hasViewport, hasHeadTag: scan.hasHeadTag };
}

/** Whether the head is still open and the scan is outside `<template>` contents (where nothing can end it). */
function headIsOpen(scan: HeadScan): boolean {
  return scan.headEnd < 0 && scan.templateDepth === 0;
}

/**
 * Ends the head at `at` unless it has ended already.
 * spec 4.6: inside <template> content nothing closes the head (the browser parses it into a fragment).
 */
function endHeadAt(scan: HeadScan, at: number): void {
  if (headIsOpen(scan)) scan.headEnd = at;
}

/** The text from `from` to `to` (the next `<` or the end of the document). */
function scanText(scan: HeadScan, from: number, to: number): void {
  if (!headIsOpen(scan)) return;
  // spec 4.6: whitespace text stays in the head; the first other character starts the body.
  for (let k = from; k < to; k++) {
    if (!isWhitespace(scan.s.charCodeAt(k))) {
      scan.headEnd = k;
      return;
    }
  }
}

/**
 * The token starting with the `<` at `lt`. Returns the index just after the token, or -1 if it runs to the end of
 * the document.
 */
function scanMarkup(scan: HeadScan, lt: number): number {
  const s = scan.s;
  const c1 = s.charCodeAt(lt + 1);
  if (c1 === BANG) {
    // Comment, or doctype / CDATA / bogus comment (all end at the first `>`).
    return s.startsWith('--', lt + 2) ? findCommentEnd(s, lt + 4) : findAfterGt(s, lt + 2);
  }
  if (c1 === QUESTION) return findAfterGt(s, lt + 2); // bogus comment, e.g. `<?xml ...?>`
  if (c1 === SLASH) return scanEndTag(scan, lt);
  if (isAsciiAlpha(c1)) return scanStartTag(scan, lt);
  endHeadAt(scan, lt); // a `<` that starts no markup (`a < b`, `<3`) is text
  return lt + 1;
}

/** Markup starting with `</` at `lt`; returns as `scanMarkup` does. */
function scanEndTag(scan: HeadScan, lt: number): number {
  const s = scan.s;
  const c2 = s.charCodeAt(lt + 2);
  if (isAsciiAlpha(c2)) {
    const nameEnd = findTagNameEnd(s, lt + 2);
    const name = asciiLowerCase(s.slice(lt + 2, nameEnd)); // spec 4.6: tags are case-insensitive
    const next = scanAttributes(s, nameEnd).end; // end tags can carry (ignored) attributes, quotes and all
    if (next >= 0) {
      if (name === 'template') {
        if (scan.templateDepth > 0) scan.templateDepth--;
      } else if (HEAD_ENDING_END_TAGS.has(name)) {
        endHeadAt(scan, lt);
      }
    }
    return next;
  }
  if (c2 === GT) return lt + 3; // `</>` is dropped by the tokenizer
  if (Number.isNaN(c2)) {
    endHeadAt(scan, lt); // `</` at the very end is text
    return lt + 1;
  }
  return findAfterGt(s, lt + 2); // bogus comment, e.g. `</ x>`
}

/**
 * A start tag at `lt` (`<` and an ASCII letter), and the text content that follows it for script, raw text and
 * `<plaintext>` elements; returns as `scanMarkup` does.
 */
function scanStartTag(scan: HeadScan, lt: number): number {
  const s = scan.s;
  const nameEnd = findTagNameEnd(s, lt + 1);
  // spec 4.6: exact name match after ASCII lowercasing, so `<header>` is not `<head>` and `<HEAD>` is.
  const name = asciiLowerCase(s.slice(lt + 1, nameEnd));
  const tag = scanAttributes(s, nameEnd);
  if (tag.end < 0) return -1;
  if (!HEAD_START_TAGS.has(name)) endHeadAt(scan, lt);
  if (name === 'head' && headIsOpen(scan)) scan.hasHeadTag = true;
  if (name === 'meta' && scan.templateDepth === 0 && tag.name !== undefined && isViewport(tag.name)) {
    scan.hasViewport = true;
  }
  if (name === 'template') {
    if (scan.templateDepth === 0) scan.templateStart = lt;
    scan.templateDepth++;
    return tag.end;
  }
  return findTextContentEnd(s, tag.end, name);
}

/** Browsers compare the name attribute to "viewport" ignoring ASCII case, without trimming. */
function isViewport(value: string): boolean {
  return value.length === 8 && matchesAt(value, 0, 'viewport');
}
