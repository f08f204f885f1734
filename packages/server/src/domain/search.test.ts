/**
 * The one definition of a word (domain/search.ts): the fast path for ASCII runs must find exactly the words and runs
 * that the plain definition finds (a run of letters, digits, marks and private-use characters, folded).
 */
import { describe, expect, it } from 'vitest';
import { indexWords, matchedRuns, wordsOf } from './search.js';

/** The definition written plainly: every run by one regular expression, each folded on its own. */
function plainRuns(text: string): Array<{ start: number; end: number; words: string[] }> {
  return Array.from(text.matchAll(/[\p{L}\p{N}\p{M}\p{Co}]+/gu), (match) => {
    const folded = match[0]
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase();
    const words = Array.from(folded.matchAll(/[\p{L}\p{N}\p{Co}]+/gu), (m) => {
      const word = m[0];
      if (word.length <= 64) return word;
      const code = word.charCodeAt(63);
      return word.slice(0, code >= 0xd800 && code <= 0xdbff ? 63 : 64);
    });
    return { start: match.index, end: match.index + match[0].length, words };
  });
}

/** Pieces that meet at every kind of boundary: ASCII, accents (composed and decomposed), ligatures, scripts, emoji. */
const PIECES = [
  'abc',
  'ABC',
  'Report42',
  '2026',
  ' ',
  '\n',
  '-',
  '.',
  '_',
  '—',
  '·',
  'é',
  'É',
  'e\u0301',
  '\u0301',
  'ﬁ',
  'ǅ',
  'x²',
  '①',
  '漢字',
  'かな',
  '😀',
  '𝐀',
  '\ue000',
  'İ',
  'ß',
  'K\u212a',
  'Z'.repeat(70),
  'q'.repeat(63) + '😀',
];

/** A deterministic generator (mulberry32): the same texts every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('words', () => {
  it('are the same words, at the same offsets, as the plain definition finds, over 2,000 mixed texts', () => {
    const next = random(7);
    for (let n = 0; n < 2000; n++) {
      const text = Array.from({ length: 1 + Math.floor(next() * 12) }, () => {
        return PIECES[Math.floor(next() * PIECES.length)] as string;
      }).join('');
      const runs = plainRuns(text);
      expect(wordsOf(text), JSON.stringify(text)).toEqual(runs.flatMap((run) => run.words));
      const marked = runs.filter((run) => run.words.length > 0).map((run) => [run.start, run.end]);
      expect(matchedRuns(text, { words: [''] }), JSON.stringify(text)).toEqual(marked);
    }
  });

  it('fold case and accents, and keep each distinct word once for the index', () => {
    expect(wordsOf('Crème BRÛLÉE, cafe\u0301-au-lait; ﬁnance 漢字')).toEqual([
      'creme',
      'brulee',
      'cafe',
      'au',
      'lait',
      'finance',
      '漢字',
    ]);
    expect(indexWords('Alpha beta ALPHA Béta gamma')).toBe('alpha beta gamma');
  });
});
