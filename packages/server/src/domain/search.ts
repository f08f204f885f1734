/**
 * Finding drops again (docs/api.md, "Search"; docs/decisions/0037-full-text-search-words-made-once.md): the one
 * definition of a word, for the index and for the query on both databases, and what a match shows. A word is a run of
 * letters, digits (and private-use characters), folded: compatibility-decomposed (NFKD), its combining marks dropped,
 * lower-cased; anything else separates words. The databases receive words already folded and joined by spaces, so
 * SQLite's FTS5 and PostgreSQL's `simple` configuration split them the same way and find the same drops.
 */

/** The longest `q` (docs/api.md, "Search"): longer is 400 `invalid_arg`. */
export const MAX_QUERY_CHARS = 200;

/** A longer word is cut to this many characters, in the index and in the query alike (a base64 run finds itself). */
const MAX_WORD_CHARS = 64;

/**
 * How much of one document's text is indexed, in the units of {@link indexedContent}: each distinct word its length
 * plus 8 (about what PostgreSQL stores of a lexeme and its position). It keeps a tsvector well under PostgreSQL's 1 MB;
 * a 20 KB report uses about 0.3 % of it.
 */
const CONTENT_BUDGET = 600_000;

/**
 * A run of word characters as written, from a given offset (sticky); marks stay inside it so that a decomposed accent
 * is one word with its letter.
 */
const RUN = /[\p{L}\p{N}\p{M}\p{Co}]+/uy;
const WORD = /[\p{L}\p{N}\p{Co}]+/gu;
const MARKS = /\p{M}+/gu;
/** A run of ASCII letters and digits only: folding is lower-casing. */
const ASCII = /^[A-Za-z0-9]*$/;

function cut(word: string): string {
  if (word.length <= MAX_WORD_CHARS) return word;
  const code = word.charCodeAt(MAX_WORD_CHARS - 1);
  // Never half a surrogate pair.
  return word.slice(0, code >= 0xd800 && code <= 0xdbff ? MAX_WORD_CHARS - 1 : MAX_WORD_CHARS);
}

/** The folded words of one run of word characters (usually one; a compatibility form may hold a separator). */
function foldRun(run: string): string[] {
  if (ASCII.test(run)) return [cut(run.toLowerCase())];
  const folded = run.normalize('NFKD').replace(MARKS, '').toLowerCase();
  return Array.from(folded.matchAll(WORD), (m) => cut(m[0]));
}

/** An ASCII letter or digit. */
const isAsciiWordChar = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a);

/**
 * Calls `visit` with each folded word of `text` and the offsets of its run; stops when `visit` answers true. A run of
 * ASCII letters and digits between ASCII separators (most of an English report) is read character by character and
 * only lower-cased; any other run goes through RUN and foldRun (about twice as fast over a report's text as RUN alone,
 * which made a match object and an array per word).
 */
function eachWord(text: string, visit: (word: string, start: number, end: number) => boolean | undefined): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      if (!isAsciiWordChar(c)) {
        i += 1;
        continue;
      }
      let upper = c <= 0x5a && c >= 0x41;
      let j = i + 1;
      for (; j < n; j++) {
        c = text.charCodeAt(j);
        if (c >= 0x80 || !isAsciiWordChar(c)) break;
        if (c <= 0x5a && c >= 0x41) upper = true;
      }
      // Ended by an ASCII separator or the text's end: the whole run is ASCII. Else it may go on past `j`.
      if (j >= n || c < 0x80) {
        const run = text.slice(i, j);
        if (visit(cut(upper ? run.toLowerCase() : run), i, j) === true) return;
        i = j;
        continue;
      }
    }
    RUN.lastIndex = i;
    const match = RUN.exec(text);
    if (match === null) {
      i += 1; // not a word character
      continue;
    }
    const end = RUN.lastIndex;
    for (const word of foldRun(match[0])) if (visit(word, i, end) === true) return;
    i = end;
  }
}

/** The folded words of `text`, in order. */
export function wordsOf(text: string): string[] {
  const words: string[] = [];
  eachWord(text, (word) => void words.push(word));
  return words;
}

/**
 * A field's words as the index takes them: folded, each once (in the order they first appear), joined by single
 * spaces. Each once: a search asks whether a field holds a word, not how often (docs/decisions/0037), and a report
 * repeats its words (a 20 KB one: 776 words, 159 distinct), which the index would otherwise store and read each time.
 */
export const indexWords = (text: string | null): string => (text === null ? '' : [...new Set(wordsOf(text))].join(' '));

/** A document's text as indexed: its distinct words within the budget, and the text up to the last word (for snippets). */
export interface IndexedContent {
  readonly text: string;
  readonly words: string;
}

/** The indexed part of a document's plain text (domain/plain-text.ts): all of it, unless it is beyond the budget. */
export function indexedContent(text: string): IndexedContent {
  const words: string[] = [];
  const seen = new Set<string>();
  let spent = 0;
  let textEnd = text.length;
  eachWord(text, (word, start) => {
    if (seen.has(word)) return undefined;
    spent += word.length + 8;
    if (spent > CONTENT_BUDGET) {
      textEnd = start;
      return true;
    }
    seen.add(word);
    words.push(word);
    return undefined;
  });
  return { text: text.slice(0, textEnd), words: words.join(' ') };
}

/** What `q` asks for: every word, each in any field, the last as a prefix. No words: nothing matches. */
export interface SearchTerms {
  readonly words: readonly string[];
}

/**
 * The terms of `q`, or undefined when `q` is blank (no search). Query syntax (quotes, `-`, `*`, `OR`, parentheses,
 * SQL) is text: only words reach a database, each as a literal (storage builds the engine's query from them).
 */
export function searchTerms(q: string | undefined): SearchTerms | undefined {
  if (q === undefined || q.trim() === '') return undefined;
  return { words: [...new Set(wordsOf(q))] };
}

export type MatchField = 'title' | 'description' | 'content' | 'context';

/** What a found drop shows of its match (docs/api.md, "Search"). */
export interface SearchMatch {
  readonly snippet: string;
  readonly fields: readonly MatchField[];
}

/** The texts a match is shown from: the drop's title and description, its latest version's text and context. */
export type SearchedTexts = Readonly<Record<MatchField, string | null>>;

const FIELDS: readonly MatchField[] = ['title', 'description', 'content', 'context'];
/** The field a snippet is cut from, the first of these that matched. */
const SNIPPET_FROM: readonly MatchField[] = ['content', 'context', 'description', 'title'];
const SNIPPET_CHARS = 160;
const SNIPPET_BEFORE = 50;

/** Offsets of the first run of `text` holding a word of `terms` (the last word as a prefix), or undefined. */
function firstHit(text: string, terms: SearchTerms): { start: number; end: number } | undefined {
  const { words } = terms;
  if (words.length === 0) return undefined;
  const exact = new Set(words.slice(0, -1));
  const prefix = words[words.length - 1] as string;
  let hit: { start: number; end: number } | undefined;
  eachWord(text, (word, start, end) => {
    if (!exact.has(word) && !word.startsWith(prefix)) return undefined;
    hit = { start, end };
    return true;
  });
  return hit;
}

/** Up to SNIPPET_CHARS of `text` around `at`, on word boundaries, blank space collapsed, `…` where it was cut. */
function around(text: string, at: number): string {
  let start = Math.max(0, at - SNIPPET_BEFORE);
  if (start > 0) {
    const space = text.lastIndexOf(' ', start);
    start = space > at - SNIPPET_BEFORE * 2 && space >= 0 ? space + 1 : start;
  }
  let end = Math.min(text.length, start + SNIPPET_CHARS);
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space > at) end = space;
  }
  const body = text.slice(start, end).replace(/\s+/g, ' ').trim();
  return `${start > 0 ? '…' : ''}${body}${end < text.length ? '…' : ''}`;
}

/** Which fields of a found drop hold a word of `terms`, and a snippet from the most telling of them. */
export function matchOf(texts: SearchedTexts, terms: SearchTerms): SearchMatch {
  const hits = new Map<MatchField, { start: number; end: number }>();
  for (const field of FIELDS) {
    const text = texts[field];
    const hit = text === null ? undefined : firstHit(text, terms);
    if (hit !== undefined) hits.set(field, hit);
  }
  const from = SNIPPET_FROM.find((field) => hits.has(field));
  const snippet =
    from === undefined
      ? around(texts.content ?? texts.description ?? texts.title ?? '', 0)
      : around(texts[from] ?? '', (hits.get(from) as { start: number }).start);
  return { snippet, fields: FIELDS.filter((field) => hits.has(field)) };
}

/**
 * The runs of `text` that hold a word of `terms` (the last as a prefix), as `[start, end)` offsets in order: what a
 * page marks in a snippet. Found the way the index finds words, so a marked run is one that matched.
 */
export function matchedRuns(text: string, terms: SearchTerms): Array<readonly [number, number]> {
  const runs: Array<readonly [number, number]> = [];
  if (terms.words.length === 0) return runs;
  const exact = new Set(terms.words.slice(0, -1));
  const prefix = terms.words[terms.words.length - 1] as string;
  eachWord(text, (word, start, end) => {
    const last = runs[runs.length - 1];
    if ((exact.has(word) || word.startsWith(prefix)) && last?.[0] !== start) runs.push([start, end]);
    return undefined;
  });
  return runs;
}
