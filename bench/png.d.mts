/** Types of bench/png.mjs, for the tests that import it. */
export function rgbPng(width: number, height: number, rows: Buffer): Buffer;
export function solidPng(width: number, height: number, rgb: readonly [number, number, number]): Buffer;
