/**
 * Test media generated with ffmpeg (never checked in): every fixture the engine suite and the bench need.
 */
import { execFile } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { publish, writeFileAtomic } from "./fixture-files.ts";
import { generateCodecFixtures } from "./media-codecs.ts";

const exec = promisify(execFile);

export const FIXTURES = {
  /** H.264/AAC MP4, 640x360, 30 fps, 6 s, a keyframe every second, faststart. */
  av: "av.mp4",
  /** The same content without faststart (index at the end). */
  avTail: "av-tail.mp4",
  /** 29.97 fps (30000/1001) H.264, 2 s. */
  ntsc: "ntsc.mp4",
  /** VP9 with alpha (yuva420p) in WebM, 320x240, 2 s. */
  alpha: "alpha.webm",
  mp3: "audio.mp3",
  wav: "audio.wav",
  /** H.264 without audio, 3 s. */
  noAudio: "noaudio.mp4",
  /** 1.5 s video (cover default is the middle). */
  short: "short.mp4",
  /** 20 s, 320x180: long enough to be aborted mid-run. */
  long: "long.mp4",
  /** av-tail.mp4 cut at 60 %: the index is missing. */
  truncated: "truncated.mp4",
  /** av.mp4 cut at 60 %: the index is there, the data is not. */
  truncatedFaststart: "truncated-faststart.mp4",
  /** A text file named .mp4. */
  textAsMp4: "text.mp4",
  /** 160x80 PNG logo with alpha: opaque red left half, transparent right half. */
  logo: "logo.png",
  jpeg: "photo.jpg",
  webp: "photo.webp",
  /** 2048x1536 JPEG (3.1 MP): above the Worker's in-WASM limit, so image.watermark runs on the engine. */
  photo3mp: "photo-3mp.jpg",
  /** 4000x3000 JPEG (12 MP), within the 16.8 MP limit. */
  photo12mp: "photo-12mp.jpg",
  /** A PNG whose header claims 10000x10000 (100 MP), followed by 2 MiB of filler: never decoded. */
  bombPng: "bomb.png",
  /** A 1x1 RGB PNG whose IDAT is 1 MB of deflated zeros: it inflates to 1 GiB (a decompression bomb). */
  inflateBombPng: "inflate-bomb.png",
  /** One black 16384x8192 H.264 frame (134 MP, ~400 KB): beyond the engine's video pixel cap. */
  hugeVideo: "huge-16384x8192.mp4",
  /** The same, faststart: its index (and so its frame size) is readable before the rest arrives. */
  hugeVideoFaststart: "huge-16384x8192-faststart.mp4",
  /** 64x64 H.264 at 1200 fps, 0.2 s: beyond the engine's frame-rate cap. */
  fastVideo: "fast-1200fps.mp4",
  /** A WebP header with the animation flag (VP8X). */
  animatedWebp: "animated.webp",
  /** av.mp4 whose index (the avc1 sample entry) claims 400 px width; the H.264 stream says 640. */
  lyingIndex: "lying-index.mp4",
} as const;

/** video.probe's answer for FIXTURES.av (interface.md's fields exactly). */
export const AV_PROBE = {
  codec: "h264",
  durationSec: 6,
  fps: "30/1",
  hasAlpha: false,
  width: 640,
  height: 360,
} as const;

/** A PNG chunk: length, type, data, CRC. */
function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

function bombPng(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(10_000, 0);
  ihdr.writeUInt32BE(10_000, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", Buffer.alloc(2 * 1024 * 1024, 0x5a)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

async function inflateBombPng(): Promise<Buffer> {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0);
  ihdr.writeUInt32BE(1, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB: 4 bytes of image data (filter byte + one pixel)
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

function animatedWebp(): Buffer {
  const vp8x = Buffer.alloc(18);
  vp8x.write("VP8X", 0, "latin1");
  vp8x.writeUInt32LE(10, 4);
  vp8x[8] = 0x02 | 0x10; // animation, alpha
  vp8x.writeUIntLE(99, 12, 3); // 100 wide
  vp8x.writeUIntLE(99, 15, 3); // 100 high
  const anim = Buffer.concat([Buffer.from("ANIM", "latin1"), Buffer.from([6, 0, 0, 0, 0, 0, 0, 0, 0, 0])]);
  const body = Buffer.concat([Buffer.from("WEBP", "latin1"), vp8x, anim]);
  const riff = Buffer.alloc(8);
  riff.write("RIFF", 0, "latin1");
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

/** Runs ffmpeg; its output, the last argument, appears whole or not at all (fixture-files.ts). */
async function ff(ffmpeg: string, args: string[]): Promise<void> {
  const output = args.at(-1)!;
  await publish(output, (partial) =>
    exec(ffmpeg, ["-hide_banner", "-loglevel", "error", "-y", ...args.slice(0, -1), partial]),
  );
}

const AV_SOURCE = (seconds: number, size: string, rate = "30") => [
  "-f",
  "lavfi",
  "-i",
  `testsrc2=size=${size}:rate=${rate}:duration=${seconds}`,
  "-f",
  "lavfi",
  "-i",
  `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
];
const H264 = [
  "-c:v",
  "libx264",
  "-preset",
  "veryfast",
  "-pix_fmt",
  "yuv420p",
  "-g",
  "30",
  "-keyint_min",
  "30",
  "-sc_threshold",
  "0",
];

async function cut(from: string, to: string, fraction: number): Promise<void> {
  const bytes = await readFile(from);
  await writeFileAtomic(to, bytes.subarray(0, Math.floor(bytes.length * fraction)));
}

/** Generates every fixture into `dir` (skipping those already there), each written whole or not at all. */
export async function generateFixtures(ffmpeg: string, dir: string): Promise<void> {
  const out = (name: string) => path.join(dir, name);
  const jobs: [string, () => Promise<void>][] = [
    [
      FIXTURES.av,
      () =>
        ff(ffmpeg, [
          ...AV_SOURCE(6, "640x360"),
          ...H264,
          "-c:a",
          "aac",
          "-b:a",
          "128k",
          "-shortest",
          "-movflags",
          "+faststart",
          out(FIXTURES.av),
        ]),
    ],
    [
      FIXTURES.avTail,
      () =>
        ff(ffmpeg, [
          ...AV_SOURCE(6, "640x360"),
          ...H264,
          "-c:a",
          "aac",
          "-b:a",
          "128k",
          "-shortest",
          out(FIXTURES.avTail),
        ]),
    ],
    [
      FIXTURES.ntsc,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "testsrc2=size=320x180:rate=30000/1001:duration=2",
          ...H264,
          out(FIXTURES.ntsc),
        ]),
    ],
    [
      FIXTURES.alpha,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "testsrc2=size=320x240:rate=25:duration=2,format=yuva420p,geq=lum='lum(X,Y)':cb='cb(X,Y)':cr='cr(X,Y)':a='if(lt(X,160),255,64)'",
          ...[
            "-c:v",
            "libvpx-vp9",
            "-pix_fmt",
            "yuva420p",
            "-deadline",
            "realtime",
            "-cpu-used",
            "8",
            "-b:v",
            "400k",
            "-auto-alt-ref",
            "0",
          ],
          out(FIXTURES.alpha),
        ]),
    ],
    [
      FIXTURES.mp3,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "sine=frequency=440:sample_rate=44100:duration=5",
          "-c:a",
          "libmp3lame",
          "-b:a",
          "128k",
          out(FIXTURES.mp3),
        ]),
    ],
    [
      FIXTURES.wav,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "sine=frequency=330:sample_rate=48000:duration=5",
          "-ac",
          "2",
          "-c:a",
          "pcm_s16le",
          out(FIXTURES.wav),
        ]),
    ],
    [
      FIXTURES.noAudio,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "testsrc2=size=640x360:rate=30:duration=3",
          ...H264,
          "-movflags",
          "+faststart",
          out(FIXTURES.noAudio),
        ]),
    ],
    [
      FIXTURES.short,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "testsrc2=size=320x180:rate=30:duration=1.5",
          ...H264,
          out(FIXTURES.short),
        ]),
    ],
    [
      FIXTURES.long,
      () =>
        ff(ffmpeg, [
          ...AV_SOURCE(20, "320x180"),
          "-c:v",
          "libx264",
          "-preset",
          "ultrafast",
          "-pix_fmt",
          "yuv420p",
          "-c:a",
          "aac",
          "-shortest",
          "-movflags",
          "+faststart",
          out(FIXTURES.long),
        ]),
    ],
    [
      FIXTURES.logo,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "color=c=red:size=160x80,format=rgba,geq=r='255':g='0':b='0':a='if(lt(X,80),255,0)'",
          "-frames:v",
          "1",
          out(FIXTURES.logo),
        ]),
    ],
    [
      FIXTURES.jpeg,
      () => ff(ffmpeg, ["-f", "lavfi", "-i", "testsrc2=size=300x200", "-frames:v", "1", out(FIXTURES.jpeg)]),
    ],
    [
      FIXTURES.webp,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "testsrc2=size=300x200",
          "-frames:v",
          "1",
          "-c:v",
          "libwebp",
          out(FIXTURES.webp),
        ]),
    ],
    [
      FIXTURES.photo3mp,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "testsrc2=size=2048x1536",
          "-frames:v",
          "1",
          out(FIXTURES.photo3mp),
        ]),
    ],
    [
      FIXTURES.photo12mp,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "testsrc2=size=4000x3000",
          "-frames:v",
          "1",
          out(FIXTURES.photo12mp),
        ]),
    ],
    [FIXTURES.bombPng, () => writeFileAtomic(out(FIXTURES.bombPng), bombPng())],
    [
      FIXTURES.inflateBombPng,
      async () => writeFileAtomic(out(FIXTURES.inflateBombPng), await inflateBombPng()),
    ],
    [
      FIXTURES.hugeVideo,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "color=c=black:s=16384x8192:r=1:d=1",
          "-frames:v",
          "1",
          "-c:v",
          "libx264",
          "-preset",
          "ultrafast",
          "-pix_fmt",
          "yuv420p",
          out(FIXTURES.hugeVideo),
        ]),
    ],
    [
      FIXTURES.fastVideo,
      () =>
        ff(ffmpeg, [
          "-f",
          "lavfi",
          "-i",
          "testsrc2=size=64x64:rate=1200:duration=0.2",
          "-c:v",
          "libx264",
          "-preset",
          "ultrafast",
          "-pix_fmt",
          "yuv420p",
          out(FIXTURES.fastVideo),
        ]),
    ],
    [FIXTURES.animatedWebp, () => writeFileAtomic(out(FIXTURES.animatedWebp), animatedWebp())],
    [
      FIXTURES.textAsMp4,
      () =>
        writeFileAtomic(out(FIXTURES.textAsMp4), "This is not a video, whatever its name says.\n".repeat(40)),
    ],
  ];
  const pending = jobs.filter(([name]) => !existsSync(out(name)));
  // Two at a time: the machine has two cores.
  for (let i = 0; i < pending.length; i += 2)
    await Promise.all(pending.slice(i, i + 2).map(([, job]) => job()));
  if (!existsSync(out(FIXTURES.truncated))) await cut(out(FIXTURES.avTail), out(FIXTURES.truncated), 0.6);
  if (!existsSync(out(FIXTURES.truncatedFaststart))) {
    await cut(out(FIXTURES.av), out(FIXTURES.truncatedFaststart), 0.6);
  }
  if (!existsSync(out(FIXTURES.hugeVideoFaststart))) {
    const args = ["-i", out(FIXTURES.hugeVideo), "-c", "copy", "-movflags", "+faststart"];
    await ff(ffmpeg, [...args, out(FIXTURES.hugeVideoFaststart)]);
  }
  if (!existsSync(out(FIXTURES.lyingIndex))) {
    const bytes = await readFile(out(FIXTURES.av));
    const entry = bytes.indexOf("avc1", bytes.indexOf("stsd"), "latin1");
    bytes.writeUInt16BE(400, entry + 4 + 24); // VisualSampleEntry width
    await writeFileAtomic(out(FIXTURES.lyingIndex), bytes);
  }
  await generateCodecFixtures(ffmpeg, dir);
}
