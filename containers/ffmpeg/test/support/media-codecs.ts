/**
 * Generated media shaped like the real-world files that broke operations (issue 12,
 * ../shared/notes/corpus-findings.md): one per codec/container path. Their audio is a 440 Hz tone whose
 * amplitude grows with time (0.2 × t), so the loudness of a cut tells where in the source it comes from.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { resolveBinaries } from "../../src/config.ts";
import { publish } from "./fixture-files.ts";

const exec = promisify(execFile);

export const CODEC_FIXTURES = {
  /** H.264 (keyframes at 0 and 2 s) + AAC in MP4, 4 s. */
  aacMp4: "ramp-av.mp4",
  flac: "ramp.flac",
  opus: "ramp.opus",
  vorbis: "ramp.ogg",
  alac: "ramp-alac.m4a",
  mp3: "ramp.mp3",
  /** MJPEG + unsigned 8-bit PCM in MOV (like a camera's). */
  mjpegPcmMov: "mjpeg-pcm.mov",
  /** H.264 + AC-3 5.1(side) in Matroska. */
  ac3Side: "ac3-side.mkv",
  /** H.264 in Matroska written as a live stream: no duration in the container. */
  mkvNoDuration: "no-duration.mkv",
  /** The first half of a 4 s H.264/AAC Matroska file: its header still says 4 s. */
  mkvCut: "cut-in-half.mkv",
  /** ramp.flac whose STREAMINFO claims 100 times the samples it holds. */
  flacLying: "lying-streaminfo.flac",
  /** ALAC in Matroska. */
  alacMka: "alac.mka",
} as const;

/** Seconds of every fixture here. */
export const CODEC_FIXTURE_SECONDS = 4;

/** Amplitude of the ramp tone at `t` seconds (a sine's RMS is this / √2). */
export const rampAmplitude = (t: number): number => 0.2 * t;

/** Seconds of audio the file's first audio stream decodes to (ffmpeg of the machine: PATH or FFMPEG_PATH). */
export async function decodedSeconds(file: string): Promise<number> {
  const { stdout } = await exec(
    resolveBinaries(process.env).ffmpeg,
    ["-v", "error", "-i", file, "-map", "0:a:0", "-ac", "1", "-ar", "48000", "-f", "s16le", "pipe:1"],
    { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout.length / 2 / 48000;
}

/** RMS of the first channel over [from, from + length) seconds of a file as decoded. */
export async function decodedRms(
  ffmpeg: string,
  file: string,
  from: number,
  length: number,
): Promise<number> {
  const { stdout } = await exec(
    ffmpeg,
    [
      ...["-v", "error", "-i", file, "-af", `pan=mono|c0=c0,atrim=${from}:${from + length}`],
      ...["-ar", "48000", "-f", "f32le", "pipe:1"],
    ],
    { encoding: "buffer", maxBuffer: 16 * 1024 * 1024 },
  );
  const samples = new Float32Array(stdout.buffer, stdout.byteOffset, stdout.length / 4);
  return Math.sqrt(samples.reduce((s, x) => s + x * x, 0) / samples.length);
}

function ramp(channels: number, layout: string, rate = 48000): string[] {
  const one = "0.2*t*sin(2*PI*440*t)";
  const exprs = Array.from({ length: channels }, () => one).join("|");
  return ["-f", "lavfi", "-i", `aevalsrc=${exprs}:c=${layout}:s=${rate}:d=${CODEC_FIXTURE_SECONDS}`];
}

const video = (rate = 30, size = "320x180") => [
  ...["-f", "lavfi", "-i", `testsrc2=size=${size}:rate=${rate}:duration=${CODEC_FIXTURE_SECONDS}`],
];
const H264 = [
  "-c:v",
  "libx264",
  "-preset",
  "veryfast",
  "-pix_fmt",
  "yuv420p",
  "-g",
  "60",
  "-sc_threshold",
  "0",
];

/**
 * Generates the fixtures above into `dir` (skipping those already there), two at a time, each written whole or
 * not at all (fixture-files.ts): made under a partial name, changed there if need be, then renamed.
 */
export async function generateCodecFixtures(ffmpeg: string, dir: string): Promise<void> {
  const out = (name: string) => path.join(dir, name);
  const encode = (args: string[], to: string) =>
    exec(ffmpeg, ["-hide_banner", "-loglevel", "error", "-y", ...args, to]);
  const ff = (name: string, args: string[]) => () => publish(out(name), (partial) => encode(args, partial));
  const F = CODEC_FIXTURES;
  const jobs: [string, () => Promise<void>][] = [
    [
      F.aacMp4,
      ff(F.aacMp4, [...video(), ...ramp(2, "stereo"), ...H264, "-c:a", "aac", "-b:a", "128k", "-shortest"]),
    ],
    [F.flac, ff(F.flac, [...ramp(2, "stereo", 44100), "-c:a", "flac"])],
    [F.opus, ff(F.opus, [...ramp(2, "stereo"), "-c:a", "libopus", "-b:a", "96k"])],
    [F.vorbis, ff(F.vorbis, [...ramp(2, "stereo", 44100), "-c:a", "libvorbis", "-q:a", "4"])],
    [F.alac, ff(F.alac, [...ramp(2, "stereo", 44100), "-c:a", "alac"])],
    [F.mp3, ff(F.mp3, [...ramp(2, "stereo", 44100), "-c:a", "libmp3lame", "-b:a", "128k"])],
    [
      F.mjpegPcmMov,
      ff(F.mjpegPcmMov, [
        ...video(15, "160x120"),
        ...ramp(1, "mono", 11025),
        ...["-c:v", "mjpeg", "-q:v", "5", "-pix_fmt", "yuvj420p"],
        ...["-c:a", "pcm_u8", "-shortest", "-f", "mov"],
      ]),
    ],
    [
      F.ac3Side,
      ff(F.ac3Side, [...video(25, "160x120"), ...ramp(6, "5.1(side)"), ...H264, "-c:a", "ac3", "-shortest"]),
    ],
    [
      F.mkvNoDuration,
      ff(F.mkvNoDuration, [...video(25, "160x120"), ...H264, "-f", "matroska", "-live", "1"]),
    ],
    [
      F.mkvCut,
      () =>
        publish(out(F.mkvCut), async (partial) => {
          await encode(
            [...video(25, "160x120"), ...ramp(2, "stereo"), ...H264, "-c:a", "aac", "-shortest"],
            partial,
          );
          const bytes = await readFile(partial);
          await writeFile(partial, bytes.subarray(0, Math.floor(bytes.length / 2)));
        }),
    ],
    [F.alacMka, ff(F.alacMka, [...ramp(2, "stereo", 44100), "-c:a", "alac", "-f", "matroska"])],
    [
      F.flacLying,
      () =>
        publish(out(F.flacLying), async (partial) => {
          await encode([...ramp(2, "stereo", 44100), "-c:a", "flac"], partial);
          const bytes = await readFile(partial);
          // STREAMINFO (after "fLaC" and its 4-byte block header): total samples in the low 36 bits at 13..17.
          const at = 8 + 13;
          const samples = (bytes[at]! & 0x0f) * 2 ** 32 + bytes.readUInt32BE(at + 1);
          const lie = samples * 100;
          bytes[at] = (bytes[at]! & 0xf0) | Math.floor(lie / 2 ** 32);
          bytes.writeUInt32BE(lie % 2 ** 32, at + 1);
          await writeFile(partial, bytes);
        }),
    ],
  ];
  const pending = jobs.filter(([name]) => !existsSync(out(name)));
  for (let i = 0; i < pending.length; i += 2)
    await Promise.all(pending.slice(i, i + 2).map(([, job]) => job()));
}
