/**
 * Image inputs the workerd tests cannot make themselves (no sharp or ffmpeg inside workerd), written by the
 * worker project's global setup (in Node) into the directory the fixture server serves at /media/<name>:
 * a CMYK JPEG (Adobe inverted inks, no colour profile, as sharp writes it) with the RGB a browser shows for
 * it (ffmpeg's decode: the same naive conversion Chromium applies without a profile), and a grayscale JPEG.
 * Also copies the few real-world files of ../shared/corpus the image tests read, when the corpus is there
 * (as corpus-<name>; the tests skip those checks with a message otherwise). Nothing is copied into the repo.
 * Each file is written whole or not at all (fixture-files.ts): runs and clones share the folder.
 */
import { execFile } from "node:child_process";
import { once } from "node:events";
import { copyFile, stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import sharp from "sharp";
import { publish, writeFileAtomic } from "../../containers/ffmpeg/test/support/fixture-files.ts";
import { COLOUR_BARS, CORPUS_IMAGES, HEIC_HEAD, IMAGE_FIXTURES, TINY_WEBP } from "./generated.ts";

const exec = promisify(execFile);

export async function generateImageFixtures(ffmpeg: string, dir: string): Promise<void> {
  const out = (name: string) => path.join(dir, name);
  await cmykBars(ffmpeg, 64, 32, out(IMAGE_FIXTURES.cmyk), out(IMAGE_FIXTURES.cmykRgb));
  await cmykBars(ffmpeg, 1400, 1000, out(IMAGE_FIXTURES.cmykLarge), out(IMAGE_FIXTURES.cmykLargeRgb));
  const bars = barsOf(64, 32);
  const raw = { raw: { width: 64, height: 32, channels: 3 as const } };
  await publish(out(IMAGE_FIXTURES.cmykWithProfile), (to) =>
    sharp(bars, raw).toColourspace("cmyk").keepIccProfile().jpeg().toFile(to),
  );
  for (const format of ["png", "jpeg", "webp"] as const) {
    await publish(out(IMAGE_FIXTURES.p3[format]), (to) =>
      sharp(bars, raw).withIccProfile("p3").toFormat(format).toFile(to),
    );
  }
  const [w, h] = [64, 32];
  const ramp = Buffer.alloc(w * h);
  for (let i = 0; i < w * h; i++) ramp[i] = 20 + (i % w) * 3;
  await publish(out(IMAGE_FIXTURES.gray), (to) =>
    sharp(ramp, { raw: { width: w, height: h, channels: 1 } })
      .toColourspace("b-w")
      .jpeg({ quality: 95 })
      .toFile(to),
  );
  await writeFileAtomic(out(IMAGE_FIXTURES.tinyWebp), Uint8Array.from(TINY_WEBP));
  await writeFileAtomic(out(IMAGE_FIXTURES.heicHead), Uint8Array.from(HEIC_HEAD));
  // Deflating 1 GiB takes seconds: made once per fixture directory.
  if (!(await stat(out(IMAGE_FIXTURES.inflateBombLarge)).catch(() => null)))
    await writeFileAtomic(out(IMAGE_FIXTURES.inflateBombLarge), await inflateBomb(1600, 1500));

  const corpus = path.join(import.meta.dirname, "../../../shared/corpus");
  for (const name of CORPUS_IMAGES) {
    const from = path.join(corpus, name);
    if (await stat(from).catch(() => null)) await publish(out(`corpus-${name}`), (to) => copyFile(from, to));
  }
}

/** A CMYK JPEG of COLOUR_BARS (eight vertical bars) and ffmpeg's RGB24 decode of it. */
async function cmykBars(ffmpeg: string, width: number, height: number, jpeg: string, rgb: string) {
  await publish(jpeg, (to) =>
    sharp(barsOf(width, height), { raw: { width, height, channels: 3 } })
      .toColourspace("cmyk")
      .jpeg({ quality: 95 })
      .toFile(to),
  );
  const { stdout } = await exec(
    ffmpeg,
    ["-v", "error", "-i", jpeg, "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"],
    { encoding: "buffer", maxBuffer: 1 << 26 },
  );
  await writeFileAtomic(rgb, stdout);
}

/** RGB24 pixels of COLOUR_BARS, eight vertical bars. */
function barsOf(width: number, height: number): Buffer {
  const bars = Buffer.alloc(width * height * 3);
  const barWidth = width / COLOUR_BARS.length;
  for (let i = 0; i < width * height; i++) bars.set(COLOUR_BARS[Math.floor((i % width) / barWidth)]!, i * 3);
  return bars;
}

/** A PNG chunk: length, type, data, CRC. */
function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A `width`×`height` 8-bit RGB PNG whose one IDAT is 1 GiB of zeros, deflated (about 1 MB). */
async function inflateBomb(width: number, height: number): Promise<Buffer> {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const zeros = Buffer.alloc(1024 * 1024);
  const deflate = zlib.createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on("data", (part: Buffer) => parts.push(part));
  const ended = once(deflate, "end");
  for (let i = 0; i < 1024; i++) if (!deflate.write(zeros)) await once(deflate, "drain");
  deflate.end();
  await ended;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", Buffer.concat(parts)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}
