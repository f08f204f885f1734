/**
 * The service's icon, /favicon.ico: a white drop on the accent colour, drawn once at start-up into a 32x32 ICO
 * (one uncompressed 32-bit bitmap), so the repository holds no binary file and the page chrome no external request.
 */

const SIZE = 32;
/** Samples per pixel along each axis, for smooth edges. */
const SUPERSAMPLE = 4;
const ACCENT = { r: 0x37, g: 0x58, b: 0xf9 };

/** Coverage of the rounded square background at a point (0 or 1). */
function inBackground(x: number, y: number): boolean {
  const radius = 7;
  const cx = Math.min(Math.max(x, radius), SIZE - radius);
  const cy = Math.min(Math.max(y, radius), SIZE - radius);
  return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2;
}

/** A drop: a circle and the cone from its tip that touches the circle. */
function inDrop(x: number, y: number): boolean {
  const cx = 16;
  const cy = 19.5;
  const r = 8;
  const tipY = 4.5;
  if ((x - cx) ** 2 + (y - cy) ** 2 <= r ** 2) return true;
  const d = cy - tipY;
  const tangentY = cy - (r * r) / d;
  if (y < tipY || y > tangentY) return false;
  const halfWidthPerY = r / Math.sqrt(d * d - r * r);
  return Math.abs(x - cx) <= (y - tipY) * halfWidthPerY;
}

function renderIco(): Buffer {
  const pixels = Buffer.alloc(SIZE * SIZE * 4);
  const samples = SUPERSAMPLE * SUPERSAMPLE;
  for (let py = 0; py < SIZE; py++) {
    for (let px = 0; px < SIZE; px++) {
      let background = 0;
      let drop = 0;
      for (let sy = 0; sy < SUPERSAMPLE; sy++) {
        for (let sx = 0; sx < SUPERSAMPLE; sx++) {
          const x = px + (sx + 0.5) / SUPERSAMPLE;
          const y = py + (sy + 0.5) / SUPERSAMPLE;
          if (inBackground(x, y)) {
            background++;
            if (inDrop(x, y)) drop++;
          }
        }
      }
      const alpha = background / samples;
      const white = background === 0 ? 0 : drop / background;
      // ICO bitmaps are stored bottom-up, in BGRA order.
      const at = ((SIZE - 1 - py) * SIZE + px) * 4;
      pixels[at] = Math.round(ACCENT.b + (255 - ACCENT.b) * white);
      pixels[at + 1] = Math.round(ACCENT.g + (255 - ACCENT.g) * white);
      pixels[at + 2] = Math.round(ACCENT.r + (255 - ACCENT.r) * white);
      pixels[at + 3] = Math.round(alpha * 255);
    }
  }
  const andMask = Buffer.alloc((SIZE / 8) * SIZE); // all zero: the alpha channel decides
  const info = Buffer.alloc(40);
  info.writeUInt32LE(40, 0); // BITMAPINFOHEADER size
  info.writeInt32LE(SIZE, 4);
  info.writeInt32LE(SIZE * 2, 8); // colour bitmap + AND mask
  info.writeUInt16LE(1, 12); // planes
  info.writeUInt16LE(32, 14); // bits per pixel
  info.writeUInt32LE(pixels.length + andMask.length, 20);
  const image = Buffer.concat([info, pixels, andMask]);
  const header = Buffer.alloc(6 + 16);
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(1, 4); // one image
  header.writeUInt8(SIZE, 6);
  header.writeUInt8(SIZE, 7);
  header.writeUInt16LE(1, 10); // planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(header.length, 18); // offset of the image
  return Buffer.concat([header, image]);
}

let cached: Buffer | undefined;

/** The icon's bytes (`image/x-icon`), rendered on first use. */
export function faviconIco(): Buffer {
  cached ??= renderIco();
  return cached;
}
