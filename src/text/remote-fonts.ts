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
