/**
 * The fonts kept in the FONTS R2 bucket (too large for the Worker bundle together), by key, and the Debian files
 * `npm run dev` (local bucket) and `npm run deploy` (`wrangler r2 object put`) upload them from. No imports:
 * the Node scripts read this file too.
 */

/**
 * Indic scripts drawn by a font from R2, not bundled (the bundle is over 3 MB gzip already; Devanagari,
 * Bengali and Tamil are bundled): `Noto Sans <script>` of Debian's fonts-noto-core, and the Unicode blocks
 * worth reading it for (src/text/fonts.ts REMOTE_FONTS).
 */
export const REMOTE_SCRIPTS: readonly { script: string; blocks: readonly (readonly [number, number])[] }[] = [
  { script: "Gurmukhi", blocks: [[0x0a00, 0x0a7f]] },
  { script: "Gujarati", blocks: [[0x0a80, 0x0aff]] },
  { script: "Oriya", blocks: [[0x0b00, 0x0b7f]] },
  { script: "Telugu", blocks: [[0x0c00, 0x0c7f]] },
  { script: "Kannada", blocks: [[0x0c80, 0x0cff]] },
  { script: "Malayalam", blocks: [[0x0d00, 0x0d7f]] },
  // Sinhala Archaic Numbers too (the font has U+111E1–U+111F4).
  {
    script: "Sinhala",
    blocks: [
      [0x0d80, 0x0dff],
      [0x111e0, 0x111ff],
    ],
  },
];

/** The R2 key of a script's font (REMOTE_SCRIPTS), a Debian file name. */
export function scriptFontKey(script: string, weight: "regular" | "bold"): string {
  return `NotoSans${script}-${weight === "bold" ? "Bold" : "Regular"}.ttf`;
}

export type RemoteFontFile = { key: string; path: string; package: string };

/** Every R2 font, CJK first (bench/text-watermark.ts times the first one). */
export const REMOTE_FONT_FILES: readonly [RemoteFontFile, RemoteFontFile, ...RemoteFontFile[]] = [
  {
    key: "NotoSansCJK-Regular.ttc",
    path: "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    package: "fonts-noto-cjk",
  },
  {
    key: "NotoSansCJK-Bold.ttc",
    path: "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc",
    package: "fonts-noto-cjk",
  },
  ...REMOTE_SCRIPTS.flatMap(({ script }) =>
    (["regular", "bold"] as const).map((weight) => {
      const key = scriptFontKey(script, weight);
      return { key, path: `/usr/share/fonts/truetype/noto/${key}`, package: "fonts-noto-core" };
    }),
  ),
];

/** The Debian packages the R2 fonts come from (apt-get install them when missing). */
export const FONTS_PACKAGES = [...new Set(REMOTE_FONT_FILES.map((file) => file.package))];

/**
 * Colour emoji: not a font in R2 but the pictures of Debian's NotoColorEmoji.ttf (fonts-noto-color-emoji) cut
 * into one pack (scripts/lib/emoji-pack.ts) when `npm run dev` / `npm run deploy` upload, read by the Worker
 * one picture at a time (src/text/emoji.ts).
 */
export const EMOJI_PACKAGE = "fonts-noto-color-emoji";
export const EMOJI_FONT_PATH = "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf";
export const EMOJI_PACK_KEY = "NotoColorEmoji.pack";
