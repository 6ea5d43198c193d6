/** Decoded pixels: 8-bit RGBA, row-major, not premultiplied (the shape of the web's ImageData). */
export type Rgba = { data: Uint8ClampedArray; width: number; height: number };
