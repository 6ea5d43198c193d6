/**
 * A quick reading of an MP4/MOV index (the moov box) in Node, in the shape of the input probe: streams,
 * codecs, sizes, duration and the video keyframes. It is only ever a guess that lets ffmpeg start while
 * ffprobe still runs (see speculate.ts); ffprobe stays the authority, and a command built from this guess
 * is used only when the command built from ffprobe's answer is the same. So it may be incomplete: anything
 * unusual (moov after mdat, unknown codecs, QuickTime sound versions, several edits) gives no guess at all.
 */
import type { MediaInfo, VideoInfo } from "./media-info.ts";
import { displaySize, rateValue, reduceRate, sampleAspect } from "./media-info.ts";
import { type Box, boxes, child, path, timing } from "./mp4-boxes.ts";

const VIDEO_CODECS: Record<string, string> = {
  avc1: "h264",
  avc3: "h264",
  hvc1: "hevc",
  hev1: "hevc",
  av01: "av1",
  vp09: "vp9",
};

const AUDIO_CODECS: Record<string, string> = {
  ".mp3": "mp3",
  "ac-3": "ac3",
  "ec-3": "eac3",
  Opus: "opus",
  fLaC: "flac",
  alac: "alac",
};

/** objectTypeIndication of an esds (ISO 14496-1 ES_Descriptor → DecoderConfigDescriptor). */
function esdsObjectType(buf: Buffer, esds: Box): number | null {
  let i = esds.start + 4;
  const readLength = () => {
    let length = 0;
    for (let k = 0; k < 4 && i < esds.end; k++) {
      const b = buf[i++]!;
      length = (length << 7) | (b & 0x7f);
      if ((b & 0x80) === 0) break;
    }
    return length;
  };
  if (buf[i++] !== 0x03) return null;
  readLength();
  i += 2; // ES_ID
  const flags = buf[i++] ?? 0;
  if (flags & 0x80) i += 2;
  if (flags & 0x40) i += 1 + (buf[i] ?? 0);
  if (flags & 0x20) i += 2;
  if (buf[i++] !== 0x04) return null;
  readLength();
  return i < esds.end ? buf[i]! : null;
}

function audioCodec(buf: Buffer, entry: Box): string | null {
  const fourcc = entry.type;
  if (fourcc === "mp4a") {
    const esds = [...boxes(buf, entry.start + 28, entry.end)].find((b) => b.type === "esds");
    if (esds === undefined) return null;
    const ot = esdsObjectType(buf, esds);
    if (ot === 0x40 || ot === 0x66 || ot === 0x67 || ot === 0x68) return "aac";
    if (ot === 0x69 || ot === 0x6b) return "mp3";
    return null;
  }
  return AUDIO_CODECS[fourcc] ?? null;
}

/** [count, value] runs of stts/ctts; ctts version 1 offsets are signed. */
function runs(buf: Buffer, box: Box | undefined, signed = false): [number, number][] {
  if (box === undefined) return [];
  const n = buf.readUInt32BE(box.start + 4);
  const out: [number, number][] = [];
  for (let k = 0, o = box.start + 8; k < n && o + 8 <= box.end; k++, o += 8) {
    out.push([buf.readUInt32BE(o), signed ? buf.readInt32BE(o + 4) : buf.readUInt32BE(o + 4)]);
  }
  return out;
}

/** The run value at a 0-based sample number, and the sum of the values of all samples before it. */
class RunCursor {
  private run = 0;
  private first = 0; // first sample of the current run
  private before = 0; // sum of values before the current run
  private readonly list: [number, number][];
  constructor(list: [number, number][]) {
    this.list = list;
  }
  at(sample: number): { value: number; sum: number } | null {
    while (this.run < this.list.length && sample >= this.first + this.list[this.run]![0]) {
      const [count, value] = this.list[this.run]!;
      this.before += count * value;
      this.first += count;
      this.run++;
    }
    const entry = this.list[this.run];
    if (entry === undefined) return null;
    return { value: entry[1], sum: this.before + (sample - this.first) * entry[1] };
  }
}

const MAX_MOOV_BYTES = 32 * 1024 * 1024;
const round6 = (s: number) => Math.round(s * 1e6) / 1e6;

/**
 * The guess for an MP4/MOV whose moov comes before its media data (faststart), or null. `read` returns
 * bytes at an offset (fewer at the end of the file).
 */
export async function guessMp4Info(
  read: (offset: number, length: number) => Promise<Uint8Array>,
  total: number,
): Promise<MediaInfo | null> {
  let offset = 0;
  for (let n = 0; n < 32 && offset + 8 <= total; n++) {
    const head = Buffer.from(await read(offset, 16));
    if (head.length < 8) return null;
    let size = head.readUInt32BE(0);
    if (size === 1) size = head.length >= 16 ? Number(head.readBigUInt64BE(8)) : 0;
    const type = head.toString("latin1", 4, 8);
    if (type === "mdat" || size < 8) return null;
    if (type === "moov") {
      if (size > MAX_MOOV_BYTES || offset + size > total) return null;
      const moov = Buffer.from(await read(offset, size));
      if (moov.length < size) return null;
      try {
        return parseMoov(moov);
      } catch {
        return null;
      }
    }
    offset += size;
  }
  return null;
}

function parseMoov(moov: Buffer): MediaInfo | null {
  const root: Box = { type: "moov", start: 8, end: moov.length };
  const mvhd = child(moov, root, "mvhd");
  if (mvhd === undefined) return null;
  const [movieScale] = timing(moov, mvhd);
  if (movieScale === 0) return null;
  let video: VideoInfo | null = null;
  let audio: MediaInfo["audio"] = null;
  let keyframes: { dts: number; pts: number }[] | undefined;
  let duration = 0;
  let startTime = Number.POSITIVE_INFINITY;
  let index = -1;
  for (const trak of boxes(moov, root.start, root.end)) {
    if (trak.type !== "trak") continue;
    index++;
    const mdia = child(moov, trak, "mdia");
    const mdhd = child(moov, mdia, "mdhd");
    const hdlr = child(moov, mdia, "hdlr");
    const stbl = path(moov, mdia, "minf", "stbl");
    const stsd = child(moov, stbl, "stsd");
    const tkhd = child(moov, trak, "tkhd");
    if (mdhd === undefined || hdlr === undefined || stbl === undefined || stsd === undefined) return null;
    const handler = moov.toString("latin1", hdlr.start + 8, hdlr.start + 12);
    if (handler !== "vide" && handler !== "soun") continue;
    const [scale, mediaDuration] = timing(moov, mdhd);
    if (scale === 0) return null;
    // One edit (or none) that starts the track at media_time: the common case; anything else, no guess.
    const elst = path(moov, trak, "edts", "elst");
    let mediaTime = 0;
    let trackDuration = mediaDuration / scale;
    if (elst !== undefined) {
      const ev1 = moov[elst.start] === 1;
      const entries = moov.readUInt32BE(elst.start + 4);
      if (entries !== 1) return null;
      const e = elst.start + 8;
      const segment = ev1 ? Number(moov.readBigUInt64BE(e)) : moov.readUInt32BE(e);
      mediaTime = ev1 ? Number(moov.readBigInt64BE(e + 8)) : moov.readInt32BE(e + 4);
      if (mediaTime < 0) return null;
      if (segment > 0) trackDuration = segment / movieScale;
    }
    const entry = [...boxes(moov, stsd.start + 8, stsd.end)][0];
    if (entry === undefined) return null;
    const stts = runs(moov, child(moov, stbl, "stts"));
    const cttsBox = child(moov, stbl, "ctts");
    const ctts = runs(moov, cttsBox, cttsBox !== undefined && moov[cttsBox.start] === 1);
    const firstPts = ((ctts[0]?.[1] ?? 0) - mediaTime) / scale;
    startTime = Math.min(startTime, elst !== undefined ? 0 : Math.max(0, firstPts));
    duration = Math.max(duration, trackDuration);
    if (handler === "vide") {
      const codec = VIDEO_CODECS[entry.type];
      if (codec === undefined) return null;
      const width = moov.readUInt16BE(entry.start + 24);
      const height = moov.readUInt16BE(entry.start + 26);
      if (video !== null || width === 0) continue;
      // The pixel aspect ratio (pasp after the 78 bytes of the visual sample entry), as ffprobe applies it.
      const pasp = [...boxes(moov, entry.start + 78, entry.end)].find((b) => b.type === "pasp");
      const sar =
        pasp === undefined
          ? 1
          : sampleAspect(`${moov.readUInt32BE(pasp.start)}:${moov.readUInt32BE(pasp.start + 4)}`);
      const shown = displaySize(width, height, sar);
      let quarter = false;
      if (tkhd !== undefined) {
        const base = tkhd.start + (moov[tkhd.start] === 1 ? 36 : 24) + 16;
        quarter = moov.readInt32BE(base) === 0 && moov.readInt32BE(base + 4) !== 0;
      }
      const samples = stts.reduce((sum, [count]) => sum + count, 0);
      const ticks = stts.reduce((sum, [count, delta]) => sum + count * delta, 0);
      const fps = (ticks > 0 ? reduceRate(`${samples * scale}/${ticks}`) : null) ?? "0/1";
      video = {
        index,
        codec,
        width: quarter ? shown.height : shown.width,
        height: quarter ? shown.width : shown.height,
        codedWidth: quarter ? height : width,
        codedHeight: quarter ? width : height,
        sar,
        fps,
        fpsValue: rateValue(fps),
        // One sample duration throughout (but the last sample's: it is where the track ends).
        steadyRate:
          ticks > 0 &&
          new Set((stts.at(-1)?.[0] === 1 ? stts.slice(0, -1) : stts).map(([, delta]) => delta)).size <= 1,
        hasAlpha: false,
        pixFmt: "",
      };
      keyframes = syncSamples(moov, stbl, stts, ctts, mediaTime, scale);
    } else if (audio === null) {
      const codec = audioCodec(moov, entry);
      if (codec === null || moov.readUInt16BE(entry.start + 8) !== 0) return null;
      audio = {
        index,
        codec,
        sampleRate: moov.readUInt32BE(entry.start + 24) >>> 16,
        channels: moov.readUInt16BE(entry.start + 16),
      };
    }
  }
  if (video === null && audio === null) return null;
  return {
    duration: round6(duration),
    startTime: Number.isFinite(startTime) ? round6(startTime) : 0,
    video,
    audio,
    packets: [],
    ...(keyframes === undefined ? {} : { keyframes }),
  };
}

/** Decode and presentation times (seconds, after the edit) of the sync samples, in decode order. */
function syncSamples(
  moov: Buffer,
  stbl: Box,
  stts: [number, number][],
  ctts: [number, number][],
  mediaTime: number,
  scale: number,
): { dts: number; pts: number }[] | undefined {
  const stss = child(moov, stbl, "stss");
  const samples = stts.reduce((sum, [count]) => sum + count, 0);
  const numbers: number[] = [];
  if (stss === undefined) {
    if (samples > 100_000) return undefined;
    for (let k = 0; k < samples; k++) numbers.push(k);
  } else {
    const n = moov.readUInt32BE(stss.start + 4);
    if (n > 1_000_000) return undefined;
    for (let k = 0, o = stss.start + 8; k < n && o + 4 <= stss.end; k++, o += 4) {
      numbers.push(moov.readUInt32BE(o) - 1);
    }
  }
  const dtsAt = new RunCursor(stts);
  const offsetAt = new RunCursor(ctts);
  const out: { dts: number; pts: number }[] = [];
  for (const sample of numbers) {
    const dts = dtsAt.at(sample);
    if (dts === null) break;
    const offset = ctts.length === 0 ? 0 : (offsetAt.at(sample)?.value ?? 0);
    out.push({ dts: (dts.sum - mediaTime) / scale, pts: (dts.sum + offset - mediaTime) / scale });
  }
  return out;
}
