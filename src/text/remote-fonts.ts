/**
 * The fonts kept in the FONTS R2 bucket (too large for the Worker bundle), by key, and the Debian files
 * `npm run dev` (local bucket) and `npm run deploy` (`wrangler r2 object put`) upload them from. No imports:
 * the Node scripts read this file too.
 */
export const FONTS_PACKAGE = "fonts-noto-cjk";

export const REMOTE_FONT_FILES = [
  { key: "NotoSansCJK-Regular.ttc", path: "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc" },
  { key: "NotoSansCJK-Bold.ttc", path: "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc" },
] as const;

/**
 * Colour emoji: not a font in R2 but the pictures of Debian's NotoColorEmoji.ttf (fonts-noto-color-emoji) cut
 * into one pack (scripts/lib/emoji-pack.ts) when `npm run dev` / `npm run deploy` upload, read by the Worker
 * one picture at a time (src/text/emoji.ts).
 */
export const EMOJI_PACKAGE = "fonts-noto-color-emoji";
export const EMOJI_FONT_PATH = "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf";
export const EMOJI_PACK_KEY = "NotoColorEmoji.pack";
