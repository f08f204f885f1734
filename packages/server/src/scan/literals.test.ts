/**
 * The scanner's look for literals (literals.ts): the same answer as asking `includes` of each literal, whatever the
 * text, where the literal stands in it, and how often the character it is looked for from appears.
 */
import { describe, expect, it } from 'vitest';
import { createRandom } from '../../../../bench/scan-corpus.mjs';
import { literalFinder } from './literals.js';

const naive = (literals: readonly string[], text: string) => new Set(literals.filter((l) => text.includes(l)));

/** Literals of the scanner's shapes: underscores, capitals, dots and dashes, all lower-case, longer than 6. */
const LITERALS = [
  'ops_ey',
  'hf_',
  'gsk_',
  'hvs.',
  'hvb.',
  'SG.',
  'xoxb-',
  'dapi',
  'secretaccess',
  'k-ant-api0',
  'AKIA',
  ':AA',
  'a',
  '__',
];

describe('literalFinder', () => {
  it('answers what includes() answers, over random texts of the literals, their pieces and filler', () => {
    const rand = createRandom(5);
    const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)] as T;
    const find = literalFinder(LITERALS);
    const pieces = [
      ...LITERALS,
      ...LITERALS.map((l) => l.slice(1)),
      ...LITERALS.map((l) => l.slice(0, -1)),
      '.',
      '-',
      '_',
    ];
    for (let round = 0; round < 3000; round++) {
      const parts: string[] = [];
      // Up to 200 parts: some texts hold more than 64 of a shared character (dots), some fewer.
      const count = Math.floor(rand() * 200);
      for (let i = 0; i < count; i++)
        parts.push(rand() < 0.3 ? pick(pieces) : pick(['<td>', ' 12.5 ', 'report', 'x', 'p', 'v']));
      const text = parts.join('');
      expect(find(text), text).toEqual(naive(LITERALS, text));
    }
  });

  it('finds a literal at the very start and at the very end of the text', () => {
    const find = literalFinder(['k-ant-api0', 'hvs.']);
    expect(find('k-ant-api0 and more')).toEqual(new Set(['k-ant-api0']));
    expect(find('ends with hvs.')).toEqual(new Set(['hvs.']));
    expect(find('hvs')).toEqual(new Set());
  });

  it('checks literals sharing a character whether it appears a few times or many', () => {
    const find = literalFinder(['hvs.', 'hvb.', 'SG.x']);
    const few = `${'a.'.repeat(10)}hvb.`;
    const many = `${'a.v'.repeat(500)}hvs.`;
    expect(find(few)).toEqual(new Set(['hvb.']));
    expect(find(many)).toEqual(new Set(['hvs.']));
  });

  it('refuses an empty literal', () => {
    expect(() => literalFinder([''])).toThrow(/empty/);
  });
});
