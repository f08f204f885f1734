/**
 * A small PNG reader for tests (8-bit RGB or RGBA, not interlaced: what resvg and Chromium write): the size and the
 * pixels, to tell a rendered page from a title card without an image library.
 */
import { inflateSync } from 'node:zlib';

export interface DecodedPng {
  readonly width: number;
  readonly height: number;
  /** RGBA, 4 bytes per pixel, row by row. */
  readonly rgba: Buffer;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function decodePng(bytes: Buffer): DecodedPng {
  if (!bytes.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  for (let at = 8; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const body = bytes.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, color, , , interlace] = [body[8], body[9], body[10], body[11], body[12]];
      if (depth !== 8 || interlace !== 0 || (color !== 2 && color !== 6)) throw new Error('unsupported PNG');
      channels = color === 6 ? 4 : 3;
    } else if (type === 'IDAT') data.push(body);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const out = Buffer.alloc(width * height * 4);
  let previous = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? (line[x - channels] as number) : 0;
      const b = previous[x] as number;
      const c = x >= channels ? (previous[x - channels] as number) : 0;
      let add = 0;
      if (filter === 1) add = a;
      else if (filter === 2) add = b;
      else if (filter === 3) add = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        add = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      line[x] = ((line[x] as number) + add) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 4; k++)
        out[(y * width + x) * 4 + k] = k < channels ? (line[x * channels + k] as number) : 255;
    }
    previous = line;
  }
  return { width, height, rgba: out };
}

/** The share of pixels whose colour differs between two images of one size (0 to 1). */
export function differingShare(a: DecodedPng, b: DecodedPng): number {
  if (a.width !== b.width || a.height !== b.height) return 1;
  let differing = 0;
  for (let i = 0; i < a.rgba.length; i += 4) {
    if (a.rgba.readUInt32BE(i) !== b.rgba.readUInt32BE(i)) differing++;
  }
  return differing / (a.width * a.height);
}

/** The colour at (x, y), as [r, g, b]. */
export function pixelAt(image: DecodedPng, x: number, y: number): [number, number, number] {
  const i = (y * image.width + x) * 4;
  return [image.rgba[i] as number, image.rgba[i + 1] as number, image.rgba[i + 2] as number];
}
