/** Version bodies encoded in the worker thread, and in-process when the worker is busy or cannot run. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { textOfHtml } from '../domain/plain-text.js';
import { indexedContent } from '../domain/search.js';
import { bodyHash, decodeBody, decodeBodyBytes, encodeBody, type FileToEncode, unpackText } from './bodies.js';
import { createBodyEncoder } from './body-encoder.js';

const html = (i: number) => `<!doctype html><title>${i}</title>${'<p>é 漢字 😀 report</p>'.repeat(200 + i)}`;

describe('body encoder', () => {
  it('encodes in the worker exactly as in-process, in order, also beyond its queue', async () => {
    const encoder = createBodyEncoder({ maxPending: 4 });
    try {
      const bodies = await Promise.all(Array.from({ length: 12 }, (_, i) => encoder.encode(html(i))));
      for (const [i, body] of bodies.entries()) {
        const expected = await encodeBody(html(i));
        expect(body.hash).toBe(expected.hash);
        expect(body.sizeBytes).toBe(expected.sizeBytes);
        expect(Buffer.isBuffer(body.data)).toBe(true);
        expect(await decodeBody(body.codec, body.data)).toBe(html(i));
      }
    } finally {
      await encoder.close();
    }
  });

  it("makes a document's indexed text in the same job, the same in the worker and in-process", async () => {
    const encoder = createBodyEncoder({ maxPending: 2 });
    try {
      const page = (i: number) => `<script>hidden${i}()</script><p>Crème ${i} brûlée</p>${html(i)}`;
      const documents = await Promise.all(Array.from({ length: 6 }, (_, i) => encoder.encodeDocument(page(i))));
      for (const [i, { body, content }] of documents.entries()) {
        expect(await decodeBody(body.codec, body.data)).toBe(page(i));
        expect(content).toEqual(indexedContent(textOfHtml(page(i))));
        expect(content.words.startsWith(`creme ${i} brulee`)).toBe(true);
        expect(content.words).not.toContain('hidden');
      }
    } finally {
      await encoder.close();
    }
  });

  it('packs the text for SQLite when asked, in the worker and in-process alike', async () => {
    const packing = createBodyEncoder({ maxPending: 2, packText: true });
    const plain = createBodyEncoder();
    try {
      const documents = await Promise.all(Array.from({ length: 6 }, (_, i) => packing.encodeDocument(html(i))));
      for (const { content, packedText } of documents) {
        expect(Buffer.isBuffer(packedText)).toBe(true);
        expect(unpackText(packedText as Buffer)).toBe(content.text);
      }
      expect((await plain.encodeDocument(html(1))).packedText).toBeUndefined();
    } finally {
      await packing.close();
      await plain.close();
    }
  });

  it('stops an idle worker and starts another for the next document', async () => {
    const encoder = createBodyEncoder({ idleStopMs: 20 });
    try {
      expect(await decodeBody('br', (await encoder.encode(html(1))).data)).toBe(html(1));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await decodeBody('br', (await encoder.encode(html(2))).data)).toBe(html(2));
    } finally {
      await encoder.close();
    }
  });

  /** A text file, bytes that do not compress (random: a PNG's are alike), a tiny file, and a text file not tried. */
  const files: FileToEncode[] = [
    { bytes: Buffer.from('.row{display:flex}'.repeat(500)), compress: true },
    { bytes: randomBytes(50_000), compress: true },
    { bytes: Buffer.from('ok'), compress: true },
    { bytes: Buffer.from('abc'.repeat(1000)), compress: false },
  ];

  async function expectFiles(encoded: Awaited<ReturnType<ReturnType<typeof createBodyEncoder>['encodeFiles']>>) {
    expect(encoded.map((body) => body.codec)).toEqual(['br', 'identity', 'identity', 'identity']);
    for (const [i, body] of encoded.entries()) {
      const bytes = (files[i] as FileToEncode).bytes;
      expect(body.hash).toBe(bodyHash(Buffer.from(bytes)));
      expect(body.sizeBytes).toBe(bytes.length);
      expect((await decodeBodyBytes(body.codec, body.data)).equals(bytes)).toBe(true);
    }
    expect((encoded[0]?.data.length ?? 0) * 10).toBeLessThan(files[0]?.bytes.length ?? 0);
  }

  it('encodes a version’s files as one job, compressing only what pays, in the worker and in-process alike', async () => {
    const encoder = createBodyEncoder();
    const fallback = createBodyEncoder({ workerUrl: new URL('./no-such-worker.js', import.meta.url) });
    try {
      await expectFiles(await encoder.encodeFiles(files));
      await expectFiles(await fallback.encodeFiles(files));
      expect(await encoder.encodeFiles([])).toEqual([]);
    } finally {
      await encoder.close();
      await fallback.close();
    }
  });

  it('falls back to in-process encoding when the worker cannot start', async () => {
    const encoder = createBodyEncoder({ workerUrl: new URL('./no-such-worker.js', import.meta.url) });
    try {
      const first = await encoder.encode(html(1));
      const second = await encoder.encode(html(2));
      expect(await decodeBody(first.codec, first.data)).toBe(html(1));
      expect(await decodeBody(second.codec, second.data)).toBe(html(2));
    } finally {
      await encoder.close();
    }
  });
});
