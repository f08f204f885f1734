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

/** Spec 4.6: appended at the end of the head of every served document. */
export const DEFENSIVE_STYLE =
  '<style data-htmldrop>html,body{max-width:100vw;overflow-x:clip}img,svg,video,iframe{max-width:100%}pre,table{max-width:100%}</style>';

/** Spec 4.6: injected right before DEFENSIVE_STYLE when the document has no viewport meta element. */
export const VIEWPORT_META = '<meta name="viewport" content="width=device-width, initial-scale=1">';

const TAB = 0x09;
const LF = 0x0a;
const FF = 0x0c;
const CR = 0x0d;
const SPACE = 0x20;
const BANG = 0x21;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const DASH = 0x2d;
const SLASH = 0x2f;
const LT = 0x3c;
const EQUALS = 0x3d;
const GT = 0x3e;
const QUESTION = 0x3f;
const BOM = 0xfeff;

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

/** Elements whose content is text up to the matching end tag (RAWTEXT and RCDATA; script is handled separately). */
const RAW_TEXT_TAGS: ReadonlySet<string> = new Set([
  'iframe',
  'noembed',
  'noframes',
  'noscript',
  'style',
  'textarea',
  'title',
  'xmp',
]);

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

function scanDocument(s: string): ScanResult {
  const n = s.length;
  // spec 4.6: a leading BOM stays first (browsers strip it before tokenizing).
  let i = s.charCodeAt(0) === BOM ? 1 : 0;
  let headEnd = -1; // -1 while the (explicit or implied) head is still open
  let hasViewport = false;
  let hasHeadTag = false;
  let templateDepth = 0;
  let templateStart = -1; // start of the outermost open <template>
  let unterminatedAt = -1; // start of a construct that runs to the end of the document

  // spec 4.6: inside <template> content nothing closes the head (the browser parses it into a fragment).
  const endHeadAt = (at: number): void => {
    if (headEnd < 0 && templateDepth === 0) headEnd = at;
  };

  while (i < n) {
    const lt = s.indexOf('<', i);
    const textEnd = lt < 0 ? n : lt;
    if (headEnd < 0 && templateDepth === 0) {
      // spec 4.6: whitespace text stays in the head; the first other character starts the body.
      for (let k = i; k < textEnd; k++) {
        if (!isWhitespace(s.charCodeAt(k))) {
          headEnd = k;
          break;
        }
      }
    }
    if (lt < 0) break;

    const c1 = s.charCodeAt(lt + 1);
    let next: number; // index just after the token, or -1 if it runs to the end of the document
    if (c1 === BANG) {
      // Comment, or doctype / CDATA / bogus comment (all end at the first `>`).
      next = s.startsWith('--', lt + 2) ? findCommentEnd(s, lt + 4) : findAfterGt(s, lt + 2);
    } else if (c1 === QUESTION) {
      next = findAfterGt(s, lt + 2); // bogus comment, e.g. `<?xml ...?>`
    } else if (c1 === SLASH) {
      const c2 = s.charCodeAt(lt + 2);
      if (isAsciiAlpha(c2)) {
        const nameEnd = findTagNameEnd(s, lt + 2);
        const name = asciiLowerCase(s.slice(lt + 2, nameEnd)); // spec 4.6: tags are case-insensitive
        next = scanAttributes(s, nameEnd).end; // end tags can carry (ignored) attributes, quotes and all
        if (next >= 0) {
          if (name === 'template') {
            if (templateDepth > 0) templateDepth--;
          } else if (HEAD_ENDING_END_TAGS.has(name)) {
            endHeadAt(lt);
          }
        }
      } else if (c2 === GT) {
        next = lt + 3; // `</>` is dropped by the tokenizer
      } else if (Number.isNaN(c2)) {
        endHeadAt(lt); // `</` at the very end is text
        i = lt + 1;
        continue;
      } else {
        next = findAfterGt(s, lt + 2); // bogus comment, e.g. `</ x>`
      }
    } else if (isAsciiAlpha(c1)) {
      const nameEnd = findTagNameEnd(s, lt + 1);
      // spec 4.6: exact name match after ASCII lowercasing, so `<header>` is not `<head>` and `<HEAD>` is.
      const name = asciiLowerCase(s.slice(lt + 1, nameEnd));
      const tag = scanAttributes(s, nameEnd);
      next = tag.end;
      if (next >= 0) {
        if (!HEAD_START_TAGS.has(name)) endHeadAt(lt);
        if (name === 'head' && headEnd < 0 && templateDepth === 0) hasHeadTag = true;
        if (name === 'meta' && templateDepth === 0 && tag.name !== undefined && isViewport(tag.name)) {
          hasViewport = true;
        }
        if (name === 'template') {
          if (templateDepth === 0) templateStart = lt;
          templateDepth++;
        } else if (name === 'script') {
          next = findScriptEnd(s, next);
        } else if (RAW_TEXT_TAGS.has(name)) {
          next = findRawTextEnd(s, next, name);
        } else if (name === 'plaintext') {
          next = n; // everything after `<plaintext>` is text
        }
      }
    } else {
      endHeadAt(lt); // a `<` that starts no markup (`a < b`, `<3`) is text
      i = lt + 1;
      continue;
    }

    if (next < 0) {
      unterminatedAt = lt;
      break;
    }
    i = next;
  }

  if (headEnd < 0) {
    // spec 4.6: the head never ended, so add at the end, but not inside anything still open at the end of the
    // document (it would swallow the additions): go before it instead.
    headEnd = n;
    if (unterminatedAt >= 0) headEnd = unterminatedAt;
    if (templateDepth > 0) headEnd = Math.min(headEnd, templateStart);
  }
  return { insertAt: headEnd, hasViewport, hasHeadTag };
}

function isWhitespace(c: number): boolean {
  return c === SPACE || c === LF || c === TAB || c === FF || c === CR;
}

function isAsciiAlpha(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/** ASCII-only lowercasing: `String.prototype.toLowerCase` would map e.g. U+212A KELVIN SIGN to `k`. */
function asciiLowerCase(value: string): string {
  return value.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** Whether `s` at `at` spells `lowerName` (ASCII lowercase letters), ignoring ASCII case. */
function matchesAt(s: string, at: number, lowerName: string): boolean {
  for (let k = 0; k < lowerName.length; k++) {
    const c = s.charCodeAt(at + k);
    const lower = c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
    if (lower !== lowerName.charCodeAt(k)) return false;
  }
  return true;
}

/** Browsers compare the name attribute to "viewport" ignoring ASCII case, without trimming. */
function isViewport(value: string): boolean {
  return value.length === 8 && matchesAt(value, 0, 'viewport');
}

function findAfterGt(s: string, from: number): number {
  const gt = s.indexOf('>', from);
  return gt < 0 ? -1 : gt + 1;
}

function findTagNameEnd(s: string, from: number): number {
  let i = from;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (isWhitespace(c) || c === SLASH || c === GT) break;
    i++;
  }
  return i;
}

/**
 * Index just after a comment whose text starts at `from` (just after `<!--`), or -1 if it never closes.
 * Tokenizer rules: `<!-->` and `<!--->` are closed empty comments; otherwise the comment ends at the first `--`
 * (plus any further dashes) followed by `>` or `!>`.
 */
function findCommentEnd(s: string, from: number): number {
  if (s.charCodeAt(from) === GT) return from + 1;
  if (s.charCodeAt(from) === DASH && s.charCodeAt(from + 1) === GT) return from + 2;
  let i = from;
  for (;;) {
    const dashes = s.indexOf('--', i);
    if (dashes < 0) return -1;
    let j = dashes + 2;
    while (s.charCodeAt(j) === DASH) j++;
    if (s.charCodeAt(j) === GT) return j + 1;
    if (s.charCodeAt(j) === BANG && s.charCodeAt(j + 1) === GT) return j + 2;
    i = j;
  }
}

interface TagEnd {
  /** Index just after the tag's `>`, or -1 if the document ends inside the tag (the browser drops it). */
  end: number;
  /** Value of the first `name` attribute, if any. */
  name: string | undefined;
}

/**
 * Scans the attributes of a tag from just after its name, following the tokenizer's attribute states, so that `>`
 * or `</head>` inside quoted values (`title="a>b"`) do not end the tag.
 */
function scanAttributes(s: string, from: number): TagEnd {
  const n = s.length;
  let i = from;
  let name: string | undefined;
  for (;;) {
    // Before attribute name: whitespace and stray `/` separate attributes.
    while (i < n) {
      const c = s.charCodeAt(i);
      if (!isWhitespace(c) && c !== SLASH) break;
      i++;
    }
    if (i >= n) return { end: -1, name };
    if (s.charCodeAt(i) === GT) return { end: i + 1, name };

    const attrStart = i;
    i++; // the first character is part of the name even if it is `=`
    while (i < n) {
      const c = s.charCodeAt(i);
      if (isWhitespace(c) || c === SLASH || c === GT || c === EQUALS) break;
      i++;
    }
    const isNameAttr = name === undefined && i - attrStart === 4 && matchesAt(s, attrStart, 'name');
    while (i < n && isWhitespace(s.charCodeAt(i))) i++;

    let valueStart = i;
    let valueEnd = i;
    if (i < n && s.charCodeAt(i) === EQUALS) {
      i++;
      while (i < n && isWhitespace(s.charCodeAt(i))) i++;
      if (i >= n) return { end: -1, name };
      const quote = s.charCodeAt(i);
      if (quote === DQUOTE || quote === SQUOTE) {
        const close = s.indexOf(quote === DQUOTE ? '"' : "'", i + 1);
        if (close < 0) return { end: -1, name };
        valueStart = i + 1;
        valueEnd = close;
        i = close + 1;
      } else {
        // Unquoted value (possibly empty before `>`): runs to whitespace or `>`; `/` is part of it.
        valueStart = i;
        while (i < n) {
          const c = s.charCodeAt(i);
          if (isWhitespace(c) || c === GT) break;
          i++;
        }
        valueEnd = i;
      }
    }
    // spec 4.6: duplicate attributes are dropped by the browser, so the first `name` wins.
    if (isNameAttr) name = s.slice(valueStart, valueEnd);
  }
}

/** Whether `s` has an end tag for `lowerName` at `at` (`</name` followed by whitespace, `/` or `>`). */
function isEndTagAt(s: string, at: number, lowerName: string): boolean {
  if (s.charCodeAt(at) !== LT || s.charCodeAt(at + 1) !== SLASH || !matchesAt(s, at + 2, lowerName)) return false;
  const c = s.charCodeAt(at + 2 + lowerName.length);
  return isWhitespace(c) || c === SLASH || c === GT;
}

/** Index of the `<` of the end tag closing a RAWTEXT/RCDATA element whose content starts at `from`, or -1. */
function findRawTextEnd(s: string, from: number, lowerName: string): number {
  let i = from;
  for (;;) {
    const lt = s.indexOf('</', i);
    if (lt < 0) return -1;
    if (isEndTagAt(s, lt, lowerName)) return lt;
    i = lt + 2;
  }
}

/** Length of the run of ASCII letters in `s` from `from`. */
function asciiAlphaRun(s: string, from: number): number {
  let i = from;
  while (isAsciiAlpha(s.charCodeAt(i))) i++;
  return i - from;
}

/** Whether the `length` letters at `at` spell "script" and are followed by whitespace, `/` or `>`. */
function isScriptWordAt(s: string, at: number, length: number): boolean {
  if (length !== 6 || !matchesAt(s, at, 'script')) return false;
  const c = s.charCodeAt(at + length);
  return isWhitespace(c) || c === SLASH || c === GT;
}

const SCRIPT_DATA = 0;
const SCRIPT_ESCAPED = 1; // after `<!--`
const SCRIPT_DOUBLE_ESCAPED = 2; // after `<!--` ... `<script>`: here `</script>` does not end the script

/**
 * Index of the `<` of the `</script>` closing a script whose content starts at `from`, or -1. Follows the tokenizer's
 * script data states, including `<!-- <script> ... </script> -->` (double escaping).
 */
function findScriptEnd(s: string, from: number): number {
  const n = s.length;
  let state = SCRIPT_DATA;
  let dashes = 0; // consecutive `-` just seen (capped at 2), in the escaped states
  let i = from;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (state === SCRIPT_DATA) {
      if (c === LT) {
        if (isEndTagAt(s, i, 'script')) return i;
        if (s.startsWith('!--', i + 1)) {
          state = SCRIPT_ESCAPED;
          dashes = 2; // `<!-->` returns straight to script data
          i += 4;
          continue;
        }
      }
      i++;
    } else if (c === DASH) {
      dashes = Math.min(dashes + 1, 2);
      i++;
    } else if (c === GT) {
      if (dashes === 2) state = SCRIPT_DATA; // `-->`
      dashes = 0;
      i++;
    } else if (c === LT) {
      dashes = 0;
      if (state === SCRIPT_ESCAPED) {
        if (isEndTagAt(s, i, 'script')) return i;
        const letters = asciiAlphaRun(s, i + 1);
        if (isScriptWordAt(s, i + 1, letters)) state = SCRIPT_DOUBLE_ESCAPED;
        i += 1 + letters;
      } else if (s.charCodeAt(i + 1) === SLASH) {
        const letters = asciiAlphaRun(s, i + 2);
        if (isScriptWordAt(s, i + 2, letters)) state = SCRIPT_ESCAPED;
        i += 2 + letters;
      } else {
        i++;
      }
    } else {
      dashes = 0;
      i++;
    }
  }
  return -1;
}
