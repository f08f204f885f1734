/**
 * The version diff's text part (domain/diff.ts; decision 0021): the unified text, the counts, and the coarse answer
 * past the bounds, checked against jsdiff itself: every answer applies to `from` and gives `to`, and an exact one
 * has the counts of jsdiff's diff of the whole texts.
 */
import { applyPatch, parsePatch, structuredPatch } from 'diff';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DIFF_BOUNDS, diffTexts } from './diff.js';

const COARSE = { ...DIFF_BOUNDS, maxEditLength: 0 };

/** What jsdiff counts on the whole texts (a minimal diff: any other minimal one has the same counts). */
function jsdiffCounts(from: string, to: string) {
  const lines = structuredPatch('a', 'b', from, to).hunks.flatMap((h) => h.lines);
  return {
    added: lines.filter((l) => l.startsWith('+')).length,
    removed: lines.filter((l) => l.startsWith('-')).length,
  };
}

/** Every answer is a patch that turns `from` into `to`, with the counts its hunks have. */
function expectValid(from: string, to: string, diff: ReturnType<typeof diffTexts>) {
  if (from === to) {
    expect(diff).toEqual({ unified: '', added: 0, removed: 0, exact: true });
    return;
  }
  expect(applyPatch(from, diff.unified)).toBe(to);
  const [patch] = parsePatch(diff.unified);
  const lines = patch?.hunks.flatMap((h) => h.lines) ?? [];
  expect(diff.added).toBe(lines.filter((l) => l.startsWith('+')).length);
  expect(diff.removed).toBe(lines.filter((l) => l.startsWith('-')).length);
  // Each hunk sits where its header says, in both texts (applyPatch alone would also search nearby).
  const [fromLines, toLines] = [from.split('\n'), to.split('\n')];
  for (const hunk of patch?.hunks ?? []) {
    const body = hunk.lines.filter((l) => !l.startsWith('\\'));
    const side = (skip: string) => body.filter((l) => !l.startsWith(skip)).map((l) => l.slice(1));
    const at = (start: number, count: number) => (count === 0 ? start : start - 1);
    expect(fromLines.slice(at(hunk.oldStart, hunk.oldLines), at(hunk.oldStart, hunk.oldLines) + hunk.oldLines)).toEqual(
      side('+'),
    );
    expect(toLines.slice(at(hunk.newStart, hunk.newLines), at(hunk.newStart, hunk.newLines) + hunk.newLines)).toEqual(
      side('-'),
    );
  }
}

describe('diffTexts', () => {
  it('is empty for equal texts', () => {
    expect(diffTexts('d v1', 'd v1', 'a\nb\n', 'a\nb\n')).toEqual({ unified: '', added: 0, removed: 0, exact: true });
  });

  it('writes diff -u with three lines of context, numbered in the whole texts', () => {
    const from = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', ''].join('\n');
    const to = from.replace('6\n', 'six\n').replace('10\n', '10\n11\n');
    const diff = diffTexts('q3 v1', 'q3 v2', from, to);
    expect(diff).toEqual({
      unified: '--- q3 v1\n+++ q3 v2\n@@ -3,8 +3,9 @@\n 3\n 4\n 5\n-6\n+six\n 7\n 8\n 9\n 10\n+11\n',
      added: 2,
      removed: 1,
      exact: true,
    });
  });

  it('says when a last line has no newline', () => {
    const diff = diffTexts('a', 'b', 'x\ny', 'x\ny\n');
    expect(diff.unified).toBe('--- a\n+++ b\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y\n');
    expect([diff.added, diff.removed]).toEqual([1, 1]);
  });

  it('is coarse past the edit-length bound: one hunk between the common leading and trailing lines', () => {
    const from = 'a\nb\nc\nd\ne\nf\ng\nh\n';
    const to = 'a\nb\nc\nd\nE\nf\nG\nh\n';
    const diff = diffTexts('s v1', 's v2', from, to, COARSE);
    expect(diff).toEqual({
      unified: '--- s v1\n+++ s v2\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n-f\n-g\n+E\n+f\n+G\n h\n',
      added: 3,
      removed: 3,
      exact: false,
    });
    expectValid(from, to, diff);
    expect(diffTexts('s v1', 's v2', from, to).exact).toBe(true);
  });

  it('is coarse past the line bound, without trying', () => {
    const diff = diffTexts('a', 'b', 'x\n', 'y\n', { ...DIFF_BOUNDS, maxLines: 0 });
    expect(diff).toEqual({ unified: '--- a\n+++ b\n@@ -1,1 +1,1 @@\n-x\n+y\n', added: 1, removed: 1, exact: false });
  });

  it('turns from into to, exact and coarse, with exact counts equal to jsdiff on the whole texts', () => {
    const line = fc.constantFrom('a', 'b', 'c', '', 'a\r', ' b');
    const text = fc
      .tuple(fc.array(line, { maxLength: 14 }), fc.boolean())
      .map(([lines, end]) => lines.join('\n') + (end && lines.length > 0 ? '\n' : ''));
    fc.assert(
      fc.property(text, text, (from, to) => {
        const exact = diffTexts('x v1', 'x v2', from, to);
        expectValid(from, to, exact);
        expect(exact.exact).toBe(true);
        if (from !== to) expect({ added: exact.added, removed: exact.removed }).toEqual(jsdiffCounts(from, to));
        const coarse = diffTexts('x v1', 'x v2', from, to, COARSE);
        expectValid(from, to, coarse);
        expect(coarse.exact).toBe(from === to);
      }),
      { numRuns: 2000 },
    );
  });

  it('compares two different 2 MiB documents within the time bound, coarsely', () => {
    const doc = (seed: number) =>
      Array.from({ length: 30_000 }, (_, i) => `<tr><td>${i}</td><td>${(i * seed) % 9973}</td><td>row</td></tr>\n`)
        .join('')
        .padEnd(2 * 1024 * 1024, ' ');
    const [from, to] = [doc(7), doc(13)];
    const started = performance.now();
    const diff = diffTexts('big v1', 'big v2', from, to);
    const took = performance.now() - started;
    expect(diff.exact).toBe(false);
    expect(took).toBeLessThan(DIFF_BOUNDS.timeoutMs + 1500);
    expectValid(from, to, diff);
  });

  it('compares one 2 MiB line each, exactly, at once', () => {
    const from = 'x'.repeat(2 * 1024 * 1024);
    const to = `${from.slice(1)}y`;
    const diff = diffTexts('a', 'b', from, to);
    expect([diff.exact, diff.added, diff.removed]).toEqual([true, 1, 1]);
    expect(diff.unified.length).toBeGreaterThan(4 * 1024 * 1024);
  });
});
