/**
 * Duration and size of a produced file, read from its own headers (MP4 moov, WAV, FLAC, MP3 Info/Xing,
 * Ogg Opus, image headers) so that a short job does not pay for one more ffprobe process. Anything else
 * falls back to ffprobe. The tests compare these readings with ffprobe's.
 */
import { type FileHandle, open } from "node:fs/promises";
import { imageSize } from "@p6/contract/sniff";
import type { OutputFormat } from "../protocol.ts";
import { decodedSeconds, runFfprobe } from "./ffmpeg.ts";
import { mediaInfo } from "./media-info.ts";
import { type Box, boxes, child, timing } from "./mp4-boxes.ts";

export interface OutputInfo {
  duration?: number;
  width?: number;
  height?: number;
}

async function readAt(fh: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, offset);
  return buf.subarray(0, bytesRead);
}

async function mp4Info(fh: FileHandle, size: number): Promise<OutputInfo | null> {
  let offset = 0;
  while (offset + 8 <= size) {
    const head = await readAt(fh, offset, 16);
    let boxSize = head.readUInt32BE(0);
    if (boxSize === 1) boxSize = Number(head.readBigUInt64BE(8));
    else if (boxSize === 0) boxSize = size - offset;
    if (boxSize < 8) return null;
    if (head.toString("latin1", 4, 8) === "moov") {
      if (boxSize > 64 * 1024 * 1024) return null;
      const moov = await readAt(fh, offset, boxSize);
      const root: Box = { type: "moov", start: 8, end: moov.length };
      const mvhd = child(moov, root, "mvhd");
      if (mvhd === undefined) return null;
      const [scale, dur] = timing(moov, mvhd);
      const info: OutputInfo = { duration: scale > 0 ? dur / scale : 0 };
      for (const trak of boxes(moov, root.start, root.end)) {
        if (trak.type !== "trak") continue;
        const mdia = child(moov, trak, "mdia");
        const hdlr = mdia && child(moov, mdia, "hdlr");
        const tkhd = child(moov, trak, "tkhd");
        if (
          hdlr === undefined ||
          tkhd === undefined ||
          moov.toString("latin1", hdlr.start + 8, hdlr.start + 12) !== "vide"
        ) {
          continue;
        }
        // tkhd: version/flags, times, track id, duration, then 16 bytes (reserved, layer, group, volume) before the matrix
        const base = tkhd.start + (moov[tkhd.start] === 1 ? 36 : 24) + 16;
        const matrixA = moov.readInt32BE(base);
        const w = Math.round(moov.readUInt32BE(base + 36) / 65536);
        const h = Math.round(moov.readUInt32BE(base + 40) / 65536);
        const quarter = matrixA === 0;
        info.width = quarter ? h : w;
        info.height = quarter ? w : h;
        break;
      }
      return info;
    }
    offset += boxSize;
  }
  return null;
}

/** WAVE format tags of PCM: integer, float, A-law, µ-law, extensible (which this engine writes for PCM only). */
const PCM_TAGS = new Set([1, 3, 6, 7, 0xfffe]);

async function wavInfo(fh: FileHandle): Promise<OutputInfo | null> {
  const head = await readAt(fh, 0, 4096);
  let byteRate = 0;
  for (let off = 12; off + 8 <= head.length; ) {
    const id = head.toString("latin1", off, off + 4);
    const len = head.readUInt32LE(off + 4);
    // Only PCM (integer, float, A-law, µ-law, or extensible) has an exact byte rate; ADPCM's is rounded.
    if (id === "fmt " && PCM_TAGS.has(head.readUInt16LE(off + 8))) byteRate = head.readUInt32LE(off + 16);
    if (id === "data") return byteRate > 0 ? { duration: len / byteRate } : null;
    off += 8 + len + (len % 2);
  }
  return null;
}

async function flacInfo(fh: FileHandle): Promise<OutputInfo | null> {
  const head = await readAt(fh, 0, 42);
  if (head.toString("latin1", 0, 4) !== "fLaC" || (head[4]! & 0x7f) !== 0) return null;
  const s = 8; // STREAMINFO payload
  const rate = (head[s + 10]! << 12) | (head[s + 11]! << 4) | (head[s + 12]! >> 4);
  const samples = (head[s + 13]! & 0x0f) * 2 ** 32 + head.readUInt32BE(s + 14);
  return rate > 0 && samples > 0 ? { duration: samples / rate } : null;
}

const MP3_RATES = [
  [11025, 12000, 8000], // MPEG 2.5
  [0, 0, 0],
  [22050, 24000, 16000], // MPEG 2
  [44100, 48000, 32000], // MPEG 1
];

async function mp3Info(fh: FileHandle): Promise<OutputInfo | null> {
  const head = await readAt(fh, 0, 64 * 1024);
  let i = 0;
  if (head.toString("latin1", 0, 3) === "ID3") {
    i =
      10 +
      (((head[6]! & 0x7f) << 21) | ((head[7]! & 0x7f) << 14) | ((head[8]! & 0x7f) << 7) | (head[9]! & 0x7f));
  }
  if (i + 4 > head.length || head[i] !== 0xff || (head[i + 1]! & 0xe0) !== 0xe0) return null;
  const version = (head[i + 1]! >> 3) & 3;
  const rate = MP3_RATES[version]?.[(head[i + 2]! >> 2) & 3] ?? 0;
  const mono = head[i + 3]! >> 6 === 3;
  const side = version === 3 ? (mono ? 17 : 32) : mono ? 9 : 17;
  const x = i + 4 + side;
  const tag = head.toString("latin1", x, x + 4);
  if ((tag !== "Xing" && tag !== "Info") || rate === 0) return null;
  const flags = head.readUInt32BE(x + 4);
  if ((flags & 1) === 0) return null;
  const frames = head.readUInt32BE(x + 8);
  const samplesPerFrame = version === 3 ? 1152 : 576;
  // The LAME/Lavc extension after the Xing fields gives encoder delay and padding, which decoders drop.
  const lame = x + 12 + (flags & 2 ? 4 : 0) + (flags & 4 ? 100 : 0) + (flags & 8 ? 4 : 0);
  let trim = 0;
  if (lame + 24 <= head.length && /^(LAME|Lavc|Lavf)/.test(head.toString("latin1", lame, lame + 4))) {
    const d = head.readUIntBE(lame + 21, 3);
    trim = (d >> 12) + (d & 0xfff);
  }
  return { duration: (frames * samplesPerFrame - trim) / rate };
}

async function opusInfo(fh: FileHandle, size: number): Promise<OutputInfo | null> {
  const head = await readAt(fh, 0, 64);
  const h = head.indexOf("OpusHead");
  if (h < 0) return null;
  const preSkip = head.readUInt16LE(h + 10);
  const tailStart = Math.max(0, size - 65536);
  const tail = await readAt(fh, tailStart, size - tailStart);
  const last = tail.lastIndexOf("OggS");
  if (last < 0 || last + 14 > tail.length) return null;
  const granule = Number(tail.readBigInt64LE(last + 6));
  return { duration: Math.max(0, granule - preSkip) / 48000 };
}

async function probeInfo(ffprobe: string, path: string, signal: AbortSignal): Promise<OutputInfo> {
  const info = mediaInfo(
    await runFfprobe(ffprobe, ["-show_format", "-show_streams", `file:${path}`], signal),
  );
  const out: OutputInfo = {};
  if (info.duration !== null) out.duration = info.duration;
  if (info.video !== null) {
    out.width = info.video.width;
    out.height = info.video.height;
  }
  return out;
}

/** Reads duration (and width/height for video and images) of an output file. */
export async function outputInfo(
  path: string,
  format: OutputFormat,
  ffprobe: string,
  signal: AbortSignal,
): Promise<OutputInfo> {
  const fh = await open(path, "r");
  let info: OutputInfo | null = null;
  try {
    const { size } = await fh.stat();
    if (format === "jpeg" || format === "png" || format === "webp") {
      const size2 = imageSize(await readAt(fh, 0, 256 * 1024));
      return size2 ?? {};
    }
    if (format === "mp4" || format === "m4a") info = await mp4Info(fh, size);
    else if (format === "wav") info = await wavInfo(fh);
    else if (format === "flac") info = await flacInfo(fh);
    else if (format === "mp3") info = await mp3Info(fh);
    else if (format === "opus") info = await opusInfo(fh, size);
  } catch {
    info = null;
  } finally {
    await fh.close();
  }
  return info ?? (await probeInfo(ffprobe, path, signal));
}

/**
 * Seconds of audio in a stream copy (extract-audio `original`, a whole-stream audio.trim), measured by
 * decoding it, or null when nothing decodes. A copy carries the source's timestamps and stream header, which
 * may not describe its samples: a FLAC STREAMINFO counting samples the file does not hold, Matroska lacing
 * with a wrong frame duration (ALAC stated 4.8 s for 5.6 s of samples), a fragmented MP4 whose first audio
 * packet sits 80 ms before the rest; and a copy of audio that does not decode copies without an error.
 * In M4A the padding its last sample's duration declares (an AAC encoder's, kept by the copy) is not
 * presented: the length then ends there, as in a player that honours it (edts.mp4: 9.000 s, of which ffmpeg
 * 5.1 decodes 9.008). Decoding costs CPU: 0.9 s for 10 minutes of stereo AAC here.
 */
export async function copiedAudioDuration(
  path: string,
  format: OutputFormat,
  binaries: { ffmpeg: string; ffprobe: string },
  signal: AbortSignal,
): Promise<number | null> {
  if (format === "m4a" || format === "3gp") return presentedMp4Audio(binaries.ffprobe, path, signal);
  const input = ["-protocol_whitelist", "file", "-i", `file:${path}`];
  return decodedSeconds(binaries.ffmpeg, input, "0:a:0", signal);
}

interface DecodedFrame {
  best_effort_timestamp_time?: string;
  pkt_duration_time?: string;
  nb_samples?: number;
}

/** The audio an MP4 presents: its decoded samples, ended where the last frame's stated duration ends it. */
async function presentedMp4Audio(ffprobe: string, path: string, signal: AbortSignal): Promise<number | null> {
  const probe = await runFfprobe(
    ffprobe,
    [
      ...["-select_streams", "a:0", "-show_entries"],
      ...["frame=best_effort_timestamp_time,pkt_duration_time,nb_samples:stream=sample_rate", `file:${path}`],
    ],
    signal,
  );
  const rate = Number(probe.streams?.[0]?.sample_rate ?? 0);
  const frames = ((probe as { frames?: DecodedFrame[] }).frames ?? []) as DecodedFrame[];
  const num = (v: string | undefined) => (v === undefined || v === "N/A" ? Number.NaN : Number(v));
  const samples = frames.reduce((n, f) => n + (f.nb_samples ?? 0), 0);
  if (rate <= 0 || samples === 0) return null;
  const first = num(frames[0]?.best_effort_timestamp_time);
  const declared = Math.max(
    ...frames
      .map((f) => num(f.best_effort_timestamp_time) + num(f.pkt_duration_time))
      .filter(Number.isFinite),
  );
  const decoded = samples / rate;
  return Number.isFinite(first) && Number.isFinite(declared) && declared - first < decoded
    ? declared - first
    : decoded;
}
