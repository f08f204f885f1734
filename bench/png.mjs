/**
 * Real PNG images (RFC 2083) for the benchmarks and the browser tests: a signature, an IHDR for 8-bit RGB, one IDAT
 * and an IEND. Written here once so that every place that needs a picture Chromium will decode builds it the same way.
 */
import { crc32, deflateSync } from 'node:zlib';

/** @param {string} type @param {Buffer} data */
function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * An 8-bit RGB PNG from its rows as PNG filters them: each row a filter type byte, then `width` × 3 bytes.
 * @param {number} width
 * @param {number} height
 * @param {Buffer} rows
 */
export function rgbPng(width, height, rows) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows, { level: 1 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A PNG of one colour.
 * @param {number} width
 * @param {number} height
 * @param {readonly [number, number, number]} rgb
 */
export function solidPng(width, height, rgb) {
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => [...rgb]).flat())]);
  return rgbPng(width, height, Buffer.concat(Array.from({ length: height }, () => row)));
}
