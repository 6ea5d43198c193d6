import { env } from "cloudflare:test";
import { inject } from "vitest";
import { EMOJI_PACK_KEY, REMOTE_FONT_FILES } from "../../src/text/remote-fonts";

/**
 * Puts the R2 fonts (CJK, the Indic scripts not bundled) into the test FONTS bucket as `npm run dev` does
 * locally, from Debian's fonts-noto-cjk and fonts-noto-core. Returns false, with the reason, when a package is
 * not installed on this machine.
 */
export async function seedRemoteFonts(): Promise<{ ok: true } | { ok: false; reason: string }> {
  for (const { key, package: debian } of REMOTE_FONT_FILES) {
    if (await env.FONTS.head(key)) continue;
    const response = await fetch(`${inject("fontsUrl")}/fonts/${key}`);
    if (response.status === 404)
      return { ok: false, reason: `${key}: ${await response.text()} (apt-get install ${debian})` };
    if (!response.ok) throw new Error(`fonts server: ${response.status} ${await response.text()}`);
    await env.FONTS.put(key, await response.arrayBuffer());
  }
  return { ok: true };
}

/** Puts the colour emoji pack into the test FONTS bucket, built from Debian's fonts-noto-color-emoji. */
export async function seedEmojiPack(): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (await env.FONTS.head(EMOJI_PACK_KEY)) return { ok: true };
  const response = await fetch(`${inject("fontsUrl")}/emoji-pack`);
  if (response.status === 404)
    return { ok: false, reason: `${await response.text()} (apt-get install fonts-noto-color-emoji)` };
  if (!response.ok) throw new Error(`fonts server: ${response.status} ${await response.text()}`);
  await env.FONTS.put(EMOJI_PACK_KEY, await response.arrayBuffer());
  return { ok: true };
}

/**
 * The bucket with its first read held until `release()`, counting reads: shows whether a second caller waits on
 * the first one's pending read (in workerd that read belongs to the first caller's request).
 */
export function heldBucket(bucket: R2Bucket) {
  let reads = 0;
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const get: R2Bucket["get"] = async (...args: Parameters<R2Bucket["get"]>) => {
    reads++;
    if (reads === 1) await held;
    return bucket.get(...args);
  };
  return { bucket: { get } as unknown as R2Bucket, reads: () => reads, release };
}
