/** Version bodies encoded in the worker thread, and in-process when the worker is busy or cannot run. */
import { describe, expect, it } from 'vitest';
import { decodeBody, encodeBody } from './bodies.js';
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
