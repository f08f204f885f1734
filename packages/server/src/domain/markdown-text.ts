/**
 * What the readable copy may hand to a Markdown renderer (docs/api.md, "Readable copy (Markdown)";
 * docs/decisions/0031-markdown-copy-bounded-and-neutralised.md): text that renders as the same text and never as
 * HTML, and link targets a reader may follow. Pure functions without dependencies: the copy's header uses them on
 * the main thread, the converter (serve/markdown-convert.ts) in its worker.
 */

/** Link and image schemes a reader may get; anything else with a scheme is dropped (relative targets are kept). */
export const SAFE_SCHEMES: ReadonlySet<string> = new Set(['http', 'https', 'mailto']);

/**
 * An `&` that a renderer would read as the start of a character reference (`&name;`, `&#10;`, `&#x0a;`), or that
 * could become one when the next piece of text is appended (a name running to the end of the string).
 */
const ENTITY_START = /&(?=#?[A-Za-z0-9]+;|#?[A-Za-z0-9]*$)/g;

/** `&` escaped where a renderer would decode a character reference, so `&lt;` stays the text `&lt;`. */
export function escapeAmpersands(text: string): string {
  return text.replace(ENTITY_START, '\\&');
}

/**
 * `<` as a character reference, not `\<`: a renderer that linkifies bare URLs (markdown-it, GFM's extended
 * autolinks) can take the backslash into a URL just before it (`https://a.example/\<javascript:…>`), and the `<`
 * would open an autolink or a tag again. A reference is decoded to text after parsing, never to markup.
 */
const encodeLessThan = (text: string) => text.replaceAll('<', '&lt;');

/**
 * Escapes everything Markdown would read as markup in plain text (a title, a description, the text fallback): the
 * result renders as `text`, never as HTML, a link, a table or a heading.
 */
export function escapeMarkdownText(text: string): string {
  return encodeLessThan(escapeAmpersands(text.replace(/[\\`*_[\]>#|~]/g, '\\$&')))
    .replace(/^([ \t]*)([-+=])/gm, '$1\\$2')
    .replace(/^([ \t]*\d+)([.)])(?=\s|$)/gm, '$1\\$2');
}

/**
 * What a renderer would still read as HTML, a character reference or a table cell boundary in text the converter
 * has escaped for Markdown's own punctuation (turndown's escaping): `<` (as `&lt;`), `|` and a reference-like `&`.
 */
export function escapeHtmlSignificant(escaped: string): string {
  return encodeLessThan(escapeAmpersands(escaped.replaceAll('|', '\\|')));
}

/** Whitespace, control and invisible format characters: browsers ignore some of them inside a scheme. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Z}\s\u115f\u1160\u3164\uffa0]/gu;

const NAMED_REFERENCES: Readonly<Record<string, string>> = {
  colon: ':',
  tab: '\t',
  newline: '\n',
  nbsp: ' ',
  sol: '/',
  quest: '?',
  num: '#',
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  semi: ';',
  period: '.',
  lpar: '(',
  rpar: ')',
  plus: '+',
  hyphen: '-',
  dash: '-',
};

/** One round of decoding: numeric and the scheme-relevant named character references, then `%XX`. */
function decodeOnce(value: string): string {
  return value
    .replace(/&#(?:[xX]([0-9a-fA-F]{1,6})|(\d{1,7}));?|&([A-Za-z]+);/g, (whole, hex, decimal, name) => {
      if (name !== undefined) return NAMED_REFERENCES[String(name).toLowerCase()] ?? whole;
      const code = hex !== undefined ? Number.parseInt(String(hex), 16) : Number(decimal);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
    })
    .replace(/%([0-9a-fA-F]{2})/g, (_whole, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/**
 * Whether a reader may follow `url`: read as a browser would, after decoding character references and `%XX`
 * (repeatedly, so double encoding hides nothing) and removing whitespace, control and invisible characters. A colon
 * before the first `/`, `?` or `#` makes what precedes it a scheme, which must be one of `SAFE_SCHEMES`
 * (case-insensitively); without one the target is relative and kept. Stricter than a URL parser on purpose: `1x:`
 * or `java script:` are dropped too.
 */
export function isSafeLinkTarget(url: string): boolean {
  let value = url;
  for (let round = 0; round < 6; round++) {
    const stripped = value.replace(INVISIBLE, '');
    const scheme = /^([^/?#]*?):/.exec(stripped)?.[1];
    if (scheme !== undefined && !SAFE_SCHEMES.has(scheme.toLowerCase())) return false;
    const next = decodeOnce(value);
    if (next === value) return true;
    value = next;
  }
  return false; // still decoding after six rounds: nothing a page would write
}

/** Percent-encodes a string's UTF-8 bytes; a lone surrogate becomes U+FFFD. */
function percentEncode(char: string): string {
  const code = char.charCodeAt(0);
  if (code >= 0xd800 && code <= 0xdfff && char.length === 1) return '%EF%BF%BD';
  return encodeURIComponent(char).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * `url` as a Markdown link destination, or undefined when a reader must not get it (`isSafeLinkTarget`). Every
 * character that could end the destination early or start other markup is percent-encoded (spaces, controls,
 * `<`, `>`, parentheses, quotes, backticks, backslashes, non-ASCII), and a reference-like `&` is escaped, so the
 * link always parses, and a renderer's href is `url` as written.
 */
export function markdownLinkTarget(url: string): string | undefined {
  const trimmed = url.trim();
  if (trimmed === '' || !isSafeLinkTarget(trimmed)) return undefined;
  // Everything but printable ASCII (controls, spaces, DEL, non-ASCII), and what could end or reopen markup.
  const encoded = trimmed.replace(/[<>()`"'\\{}|^]|[^!-~]/gu, percentEncode);
  return escapeAmpersands(encoded);
}

/**
 * A link title as Markdown (` "title"`), or '' when there is none: whitespace collapsed, and every ASCII
 * punctuation character backslash-escaped, so the title renders as written and cannot end early.
 */
export function markdownLinkTitle(title: string | null): string {
  const text = (title ?? '').replace(/\s+/g, ' ').trim();
  return text === '' ? '' : ` "${text.replace(/[!-/:-@[-`{-~]/g, '\\$&')}"`;
}
