/**
 * Accuracy of the look before publishing (docs/decisions/0034-a-look-before-publishing.md), measured on the corpus
 * of bench/scan-corpus.mjs and asserted as thresholds: at least 95% of the secrets and of the personal data found at
 * the right line, and at most 1% of 300 ordinary documents with any finding. The figures are printed for
 * bench/README.md.
 */
import { describe, expect, it } from 'vitest';
import type { CorpusCase } from '../../../bench/scan-corpus.mjs';
import { ordinaryDocuments, personalCases, secretCases } from '../../../bench/scan-corpus.mjs';
import { createScanner } from '../src/scan/scanner.js';

const scanner = createScanner();
const findingsOf = (html: string) => scanner.scan([{ where: 'html', text: html }]);

/** The cases found: a finding of the right kind at the case's line in the html. */
async function found(cases: readonly CorpusCase[], kind: 'secret' | 'personal_data') {
  const missed: string[] = [];
  for (const c of cases) {
    const findings = await findingsOf(c.html);
    if (!findings.some((f) => f.kind === kind && f.where === 'html' && f.line === c.line)) missed.push(c.kind);
  }
  return { recall: (cases.length - missed.length) / cases.length, missed };
}

describe('the corpus', () => {
  it('finds at least 95% of at least 60 secrets of at least 20 kinds, at the right line, never echoing one', async () => {
    const cases = secretCases();
    expect(cases.length).toBeGreaterThanOrEqual(60);
    expect(new Set(cases.map((c) => c.kind)).size).toBeGreaterThanOrEqual(20);
    const { recall, missed } = await found(cases, 'secret');
    console.log(
      `secrets: ${cases.length} of ${new Set(cases.map((c) => c.kind)).size} kinds, recall ${(recall * 100).toFixed(1)}%, missed: ${missed.join(', ') || 'none'}`,
    );
    expect(recall).toBeGreaterThanOrEqual(0.95);
    for (const c of cases) {
      const answered = JSON.stringify(await findingsOf(c.html));
      expect(answered).not.toContain(c.secret ?? '');
    }
  });

  it('finds at least 95% of the personal data (cards, IBANs, lists of addresses and phone numbers)', async () => {
    const cases = personalCases();
    const { recall, missed } = await found(cases, 'personal_data');
    console.log(
      `personal data: ${cases.length} cases, recall ${(recall * 100).toFixed(1)}%, missed: ${missed.join(', ') || 'none'}`,
    );
    expect(recall).toBeGreaterThanOrEqual(0.95);
  });

  it('reports something in at most 1% of 300 ordinary agent-made documents', async () => {
    const documents = ordinaryDocuments();
    expect(documents.length).toBe(300);
    const flagged: string[] = [];
    for (const [i, html] of documents.entries()) {
      const findings = await findingsOf(html);
      if (findings.length > 0) flagged.push(`${i}: ${findings.map((f) => f.rule).join(', ')}`);
    }
    console.log(
      `ordinary documents: ${flagged.length} of ${documents.length} with a finding${flagged.length ? `: ${flagged.join('; ')}` : ''}`,
    );
    expect(flagged.length / documents.length).toBeLessThanOrEqual(0.01);
  });
});
