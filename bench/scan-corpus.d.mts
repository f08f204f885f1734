/** Types of bench/scan-corpus.mjs, for the tests that import it. */
export interface CorpusCase {
  readonly kind: string;
  readonly html: string;
  /** Where the value starts (from 1). */
  readonly line: number;
  readonly secret?: string;
}
export function createRandom(seed: number): () => number;
export function lineAt(text: string, offset: number): number;
export const SECRET_KINDS: ReadonlyArray<readonly [string, (rand: () => number) => unknown]>;
export function secretCases(seed?: number): CorpusCase[];
export function personalCases(seed?: number): CorpusCase[];
export function ordinaryDocuments(count?: number, seed?: number): string[];
