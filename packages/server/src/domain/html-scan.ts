/**
 * Spec 4.6: the tokenizer side of the head-injection scanner in inject.ts. Character classes and finders that follow
 * the HTML tokenizer's states (comments, tags and their attributes, RAWTEXT/RCDATA and script data) closely enough to
 * skip over a construct without mistaking the markup inside it for real tags. Each finder is linear in what it skips
 * and allocates nothing per character; -1 means "runs to the end of the document".
 */

const TAB = 0x09;
const LF = 0x0a;
const FF = 0x0c;
const CR = 0x0d;
const SPACE = 0x20;
export const BANG = 0x21;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const DASH = 0x2d;
export const SLASH = 0x2f;
const LT = 0x3c;
const EQUALS = 0x3d;
export const GT = 0x3e;
export const QUESTION = 0x3f;
export const BOM = 0xfeff;

/** Elements whose content is text up to the matching end tag (RAWTEXT and RCDATA; script is handled separately). */
export const RAW_TEXT_TAGS: ReadonlySet<string> = new Set([
  'iframe',
  'noembed',
  'noframes',
  'noscript',
  'style',
  'textarea',
  'title',
  'xmp',
]);

/**
 * Where the tokenizer is back in markup after the start tag of `lowerName`, whose content starts at `from`: the `<` of
 * the closing end tag for script and RAWTEXT/RCDATA elements (-1 if there is none), the end of the document for
 * `<plaintext>`, and `from` itself for every other element.
 */
export function findTextContentEnd(s: string, from: number, lowerName: string): number {
  if (lowerName === 'script') return findScriptEnd(s, from);
  if (RAW_TEXT_TAGS.has(lowerName)) return findRawTextEnd(s, from, lowerName);
  if (lowerName === 'plaintext') return s.length; // everything after `<plaintext>` is text
  return from;
}

export function isWhitespace(c: number): boolean {
  return c === SPACE || c === LF || c === TAB || c === FF || c === CR;
}

export function isAsciiAlpha(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/** ASCII-only lowercasing: `String.prototype.toLowerCase` would map e.g. U+212A KELVIN SIGN to `k`. */
export function asciiLowerCase(value: string): string {
  // Most names are lower case already: returned as they are, without a regular expression's pass and copy.
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) return value.replace(/[A-Z]+/g, (m) => m.toLowerCase());
  }
  return value;
}

/** Whether `s` at `at` spells `lowerName` (ASCII lowercase letters), ignoring ASCII case. */
export function matchesAt(s: string, at: number, lowerName: string): boolean {
  for (let k = 0; k < lowerName.length; k++) {
    const c = s.charCodeAt(at + k);
    const lower = c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
    if (lower !== lowerName.charCodeAt(k)) return false;
  }
  return true;
}

export function findAfterGt(s: string, from: number): number {
  const gt = s.indexOf('>', from);
  return gt < 0 ? -1 : gt + 1;
}

export function findTagNameEnd(s: string, from: number): number {
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
export function findCommentEnd(s: string, from: number): number {
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

export interface TagEnd {
  /** Index just after the tag's `>`, or -1 if the document ends inside the tag (the browser drops it). */
  end: number;
  /** Value of the first `name` attribute, if any. */
  name: string | undefined;
}

/**
 * Scans the attributes of a tag from just after its name, following the tokenizer's attribute states, so that `>`
 * or `</head>` inside quoted values (`title="a>b"`) do not end the tag.
 */
export function scanAttributes(s: string, from: number): TagEnd {
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
