/**
 * Image inputs the workerd tests cannot make themselves (no sharp or ffmpeg inside workerd), written by the
 * worker project's global setup (in Node) into the directory the fixture server serves at /media/<name>:
 * a CMYK JPEG (Adobe inverted inks, no colour profile, as sharp writes it) with the RGB a browser shows for
 * it (ffmpeg's decode: the same naive conversion Chromium applies without a profile), and a grayscale JPEG.
 * Also copies the few real-world files of ../shared/corpus the image tests read, when the corpus is there
 * (as corpus-<name>; the tests skip those checks with a message otherwise). Nothing is copied into the repo.
 */
import { execFile } from "node:child_process";
import { copyFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";
import { COLOUR_BARS, CORPUS_IMAGES, IMAGE_FIXTURES } from "./generated.ts";

const exec = promisify(execFile);

export async function generateImageFixtures(ffmpeg: string, dir: string): Promise<void> {
  const out = (name: string) => path.join(dir, name);
  const [w, h] = [64, 32];
  const bars = Buffer.alloc(w * h * 3);
  for (let i = 0; i < w * h; i++) bars.set(COLOUR_BARS[Math.floor((i % w) / 8)]!, i * 3);
  const raw = { raw: { width: w, height: h, channels: 3 as const } };
  await sharp(bars, raw).toColourspace("cmyk").jpeg({ quality: 95 }).toFile(out(IMAGE_FIXTURES.cmyk));
  const { stdout } = await exec(
    ffmpeg,
    ["-v", "error", "-i", out(IMAGE_FIXTURES.cmyk), "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"],
    { encoding: "buffer" },
  );
  await writeFile(out(IMAGE_FIXTURES.cmykRgb), stdout);
  const ramp = Buffer.alloc(w * h);
  for (let i = 0; i < w * h; i++) ramp[i] = 20 + (i % w) * 3;
  await sharp(ramp, { raw: { width: w, height: h, channels: 1 } })
    .toColourspace("b-w")
    .jpeg({ quality: 95 })
    .toFile(out(IMAGE_FIXTURES.gray));

  const corpus = path.join(import.meta.dirname, "../../../shared/corpus");
  for (const name of CORPUS_IMAGES) {
    const from = path.join(corpus, name);
    if (await stat(from).catch(() => null)) await copyFile(from, out(`corpus-${name}`));
  }
}
