/**
 * The readable copy's fallback (docs/decisions/0025-markdown-copy.md): a document's text without its structure, for
 * when the Markdown conversion outlives its time or memory. One linear pass with the scanner of the head injection
 * (html-scan.ts): tags are skipped (attribute values included, so a `>` inside one ends nothing), comments and the
 * content of scripts, styles and the other elements the converter drops are skipped too, block boundaries become
 * line breaks, and a few character references are decoded. Every search moves forward, so it stays linear whatever
 * the document: no parser, no tree, no recursion.
 */
import {
  asciiLowerCase,
  BANG,
  findAfterGt,
  findCommentEnd,
  findTagNameEnd,
  findTextContentEnd,
  GT,
  isAsciiAlpha,
  isWhitespace,
  matchesAt,
  QUESTION,
  RAW_TEXT_TAGS,
  SLASH,
  scanAttributes,
} from './html-scan.js';

/**
 * Elements whose whole content is skipped, up to their end tag, besides the raw-text ones the scanner knows (script,
 * style, title, textarea, noscript, iframe, ...): the same things the converter drops (markdown-convert.ts).
 */
const SKIPPED: ReadonlySet<string> = new Set([
  'template',
  'svg',
  'canvas',
  'object',
  'audio',
  'video',
  'select',
  'datalist',
  'button',
  'head',
]);

/** Elements whose start and end mark a line break in the text. */
const BLOCKS: ReadonlySet<string> = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'br',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tr',
  'ul',
]);

/** What a tag means to the text. */
const OTHER = 0;
/** A line break. */
const BLOCK = 1;
/** A cell of a table: a space. */
const CELL = 2;
/** Content skipped up to the end tag (SKIPPED). */
const SKIP = 3;
/** Content the tokenizer reads as text up to the end tag, or to the end (findTextContentEnd()). */
const TEXT = 4;

/** Every name whose tag means more than OTHER, lower case. */
const KINDS: ReadonlyMap<string, number> = new Map([
  ...[...BLOCKS].map((name) => [name, BLOCK] as const),
  ['td', CELL],
  ['th', CELL],
  ...[...SKIPPED].map((name) => [name, SKIP] as const),
  ...['script', 'plaintext', ...RAW_TEXT_TAGS].map((name) => [name, TEXT] as const),
]);

/** A name of at most SHORT characters, as a number: one 7-bit ASCII code per character (a small integer). */
const SHORT = 4;

function shortCode(s: string, start: number, end: number): number {
  let code = 0;
  for (let k = start; k < end; k++) {
    let c = s.charCodeAt(k);
    if (c >= 0x80) return -1;
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    code = code * 0x80 + c;
  }
  return code;
}

/** KINDS of the short names by their code: a report's thousands of `td`, `tr` and `span` are looked up unsliced. */
const SHORT_KINDS: ReadonlyMap<number, number> = new Map(
  [...KINDS].filter(([name]) => name.length <= SHORT).map(([name, kind]) => [shortCode(name, 0, name.length), kind]),
);

/** The kind of the tag named by `s` from `start` to `end` (any case); a name starts with an ASCII letter. */
function kindOf(s: string, start: number, end: number): number {
  if (end - start <= SHORT) {
    const code = shortCode(s, start, end);
    if (code >= 0) return SHORT_KINDS.get(code) ?? OTHER;
  }
  return KINDS.get(asciiLowerCase(s.slice(start, end))) ?? OTHER;
}

/** Index of the `<` of the next end tag `</name` (followed by whitespace, `/` or `>`) from `from`, or -1. */
function findEndTag(s: string, from: number, lowerName: string): number {
  let i = from;
  for (;;) {
    const lt = s.indexOf('</', i);
    if (lt < 0) return -1;
    const after = s.charCodeAt(lt + 2 + lowerName.length);
    if (matchesAt(s, lt + 2, lowerName) && (isWhitespace(after) || after === SLASH || after === 0x3e)) return lt;
    i = lt + 2;
  }
}

const NAMED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** The common character references; any other `&...;` stays as written. */
function decodeReferences(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(
    /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos|nbsp));?/g,
    (whole, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
      if (name !== undefined) return NAMED[name] ?? whole;
      const code = decimal !== undefined ? Number(decimal) : Number.parseInt(hex ?? '', 16);
      return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
    },
  );
}

/** The text of `html`, block by block, with runs of blank space collapsed. Linear in the length of `html`. */
export function textOfHtml(html: string): string {
  // Built by concatenation (V8 joins the pieces once, when the replacements below read it): measured faster than
  // an array joined at the end, over reports of thousands of small cells.
  let out = '';
  const n = html.length;
  let i = 0;
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) {
      out += decodeReferences(html.slice(i));
      break;
    }
    if (lt > i) out += decodeReferences(html.slice(i, lt));
    const next = html.charCodeAt(lt + 1);
    if (next === BANG || next === QUESTION) {
      // A comment, a doctype or a bogus comment: skipped whole.
      const end = html.startsWith('!--', lt + 1) ? findCommentEnd(html, lt + 4) : findAfterGt(html, lt + 1);
      if (end < 0) break;
      i = end;
      continue;
    }
    const closing = next === SLASH;
    const nameStart = closing ? lt + 2 : lt + 1;
    if (!isAsciiAlpha(html.charCodeAt(nameStart))) {
      out += '<'; // not a tag: a literal `<`
      i = lt + 1;
      continue;
    }
    const nameEnd = findTagNameEnd(html, nameStart);
    const kind = kindOf(html, nameStart, nameEnd);
    // A tag without attributes (most end tags, and `<td>`) ends right after its name.
    const tagEnd = html.charCodeAt(nameEnd) === GT ? nameEnd + 1 : scanAttributes(html, nameEnd).end;
    if (tagEnd < 0) break; // the document ends inside the tag
    i = tagEnd;
    if (kind === BLOCK) out += '\n';
    else if (kind === CELL) out += ' ';
    // Only a start tag of SKIP or TEXT has content to pass over: any other tag's content is read on.
    if (closing || kind < SKIP) continue;
    const name = asciiLowerCase(html.slice(nameStart, nameEnd));
    if (name === 'plaintext') {
      out += html.slice(i); // everything after it is text, as written
      break;
    }
    const selfClosing = html.charCodeAt(tagEnd - 2) === SLASH;
    const contentEnd =
      kind === SKIP ? (selfClosing ? i : findEndTag(html, i, name)) : findTextContentEnd(html, i, name);
    if (contentEnd < 0) break; // unclosed: its content runs to the end, and is skipped
    i = contentEnd;
  }
  // Runs of blank space become one space, and a space beside a line break goes: the patterns match only where
  // something changes (a single space between words is left alone, not replaced by itself thousands of times).
  return out
    .replace(/[ \t\f\r\u00a0]{2,}|[\t\f\r\u00a0]/g, ' ')
    .replace(/ \n ?|\n /g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
