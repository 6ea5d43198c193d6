/** Names of the image inputs generate.ts writes in Node, shared with the workerd tests that fetch them. */

export const IMAGE_FIXTURES = {
  /** 64×32, eight 8 px wide vertical bars of COLOUR_BARS, as CMYK. */
  cmyk: "img-cmyk.jpg",
  /** ffmpeg's RGB24 decode of `cmyk`. */
  cmykRgb: "img-cmyk.rgb",
  /** 1400×1000 (1.4 MP) CMYK of COLOUR_BARS 175 px wide: over the Worker's CMYK limit, under its 2.2 MP. */
  cmykLarge: "img-cmyk-1400x1000.jpg",
  cmykLargeRgb: "img-cmyk-1400x1000.rgb",
  /** 64×32 COLOUR_BARS tagged with a Display P3 profile, in each format. */
  p3: { png: "img-p3.png", jpeg: "img-p3.jpg", webp: "img-p3.webp" },
  /** 64×32 CMYK with its CMYK profile embedded. */
  cmykWithProfile: "img-cmyk-icc.jpg",
  /** 64×32 grayscale (one component) ramp. */
  gray: "img-gray.jpg",
  /**
   * 26 bytes: a lossless WebP header claiming 11330×446 (5 MP, above the in-Worker limit) and 6 bytes of
   * data that do not decode, as mathiasbynens/small's webp.webp; too short for the engine's size sniff.
   */
  tinyWebp: "img-26-byte.webp",
  /** The first boxes of a HEIC still image (ftyp major brand heic, a meta box): what the sniff reads. */
  heicHead: "img-head.heic",
  /**
   * A 1600×1500 (2.4 MP, over the Worker's in-WASM limit: the engine's job) 8-bit RGB PNG whose IDAT is about
   * 1 MB of deflated zeros inflating to 1 GiB, 149 times the 7.2 MB its rows need: a decompression bomb
   * behind an honest header.
   */
  inflateBombLarge: "img-inflate-bomb-1600x1500.png",
} as const;

/** The bytes of IMAGE_FIXTURES.tinyWebp: RIFF, WEBP, a VP8L chunk of 6 bytes (signature 0x2f, 14-bit sizes − 1). */
export const TINY_WEBP = [
  ...[0x52, 0x49, 0x46, 0x46, 0x12, 0, 0, 0, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x4c],
  ...[0x06, 0, 0, 0, 0x2f, 0x41, 0x6c, 0x6f, 0x00, 0x6b],
] as const;

/** The bytes of IMAGE_FIXTURES.heicHead. */
export const HEIC_HEAD = [
  ...[0, 0, 0, 0x18, ..."ftypheic"].map((c) => (typeof c === "string" ? c.charCodeAt(0) : c)),
  ...[0, 0, 0, 0, ..."mif1heic"].map((c) => (typeof c === "string" ? c.charCodeAt(0) : c)),
  ...[0, 0, 0, 0x0c, ..."meta", 0, 0, 0, 0].map((c) => (typeof c === "string" ? c.charCodeAt(0) : c)),
];

export const COLOUR_BARS = [
  [220, 30, 30],
  [30, 180, 60],
  [40, 60, 200],
  [240, 220, 40],
  [128, 128, 128],
  [250, 250, 250],
  [10, 10, 10],
  [200, 120, 60],
] as const;

/** Corpus files (../shared/corpus) the image tests also run on. */
export const CORPUS_IMAGES = [
  "pil_sample_cmyk.jpg",
  "testimgari.jpg",
  "small-jpeg.jpg",
  "hopper_gray.jpg",
  "hopper_orientation_6.webp",
  "apng_num_plays.png",
  "iss634.webp",
  "transparent.webp",
  "rgb_trns.png",
  "small-webp.webp",
  "fixture-heic.heic",
  "fixture.gif",
] as const;
