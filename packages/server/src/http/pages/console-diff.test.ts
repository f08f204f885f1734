/** The console's diff table (pages/console-diff.ts): line numbers from the hunk headers, escaping, and the cuts. */
import { describe, expect, it } from 'vitest';
import { diffTexts } from '../../domain/diff.js';
import { diffRows, MAX_LINE_CHARS, MAX_SHOWN_LINES } from './console-diff.js';

const numbers = (rows: string) =>
  [...rows.matchAll(/<td class="ln">(\d*)<\/td><td class="ln">(\d*)<\/td>/g)].map((m) => `${m[1]}:${m[2]}`);

describe('diffRows', () => {
  it('numbers each line in both versions from the hunk headers, and escapes the HTML', () => {
    const from = '<a>\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n';
    const to = '<a>\n2\n3\n4\n5\n<b>\n7\n8\n9\n10\n11\n12\n13';
    const { rows, omitted } = diffRows(diffTexts('x v1', 'x v2', from, to).unified);
    expect(omitted).toBe(0);
    expect(numbers(rows)).toEqual([
      '3:3',
      '4:4',
      '5:5',
      '6:',
      ':6',
      '7:7',
      '8:8',
      '9:9',
      '10:10',
      '11:11',
      '12:12',
      ':13',
    ]);
    expect(rows).toContain('<tr class="hunk"><td colspan="3">@@ -3,10 +3,11 @@</td></tr>');
    expect(rows).toContain('<span class="sr-only">added: </span>&lt;b&gt;</ins>');
    expect(rows).toContain(
      '<tr class="note"><td colspan="2"></td><td class="code">\\ No newline at end of file</td></tr>',
    );
  });

  it('shows at most MAX_SHOWN_LINES lines and counts the rest; cuts long lines', () => {
    const to = Array.from({ length: MAX_SHOWN_LINES + 10 }, (_, i) => `${i}\n`).join('');
    const { rows, omitted } = diffRows(diffTexts('x v1', 'x v2', '', to).unified);
    expect((rows.match(/<tr/g) ?? []).length).toBe(MAX_SHOWN_LINES);
    expect(omitted).toBe(11);
    const long = diffRows(diffTexts('x v1', 'x v2', 'a\n', `${'y'.repeat(MAX_LINE_CHARS + 5)}\n`).unified);
    expect(long.rows).toContain(`${'y'.repeat(MAX_LINE_CHARS)}<span class="muted"> … (5 more characters)</span>`);
  });
});
