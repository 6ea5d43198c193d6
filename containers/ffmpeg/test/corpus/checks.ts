/**
 * The verdict on one answer of the engine, from truth the checker computes from the source by its own route
 * (issue 29 "Build"): the source's decoded frame times (edit lists honoured) and samples give what a player
 * presents over [start, end); the produced file is decoded the same way and compared frame by frame (times,
 * then pixels of the frame shown at a few output times against the source frame shown at start + t) and
 * sample by sample (decoded length with the container's declared padding, position by cross-correlation
 * against the source at start). Every field of the answer is compared with what the decoders measure on the
 * file. Nothing here reads the engine's code or repeats its window arithmetic: the one rule used is the
 * semantics of docs/media-support.md ("What each operation does").
 *
 * Every reason a run is wrong starts with a tag in brackets (`[frames]`, `[end]`, `[pixels]`, …), so the
 * run can count them by kind (TAGS).
 */
import { stat } from "node:fs/promises";
import type { Bins } from "./measure.ts";
import {
  type AudioTrack,
  bestLag,
  decodedAudio,
  decodedFrames,
  type Frame,
  framesEnd,
  GRAY,
  grayFrames,
  keyPacketTimes,
  medianGap,
  mpegAudioLayer,
  PCM_RATE,
  type Probed,
  pcm8k,
  probe,
  psnr,
  type StreamsFacts,
  streamsFacts,
  timeBase,
} from "./measure.ts";
import { tablePresentation } from "./mp4-tables.ts";
import { vorbisDeclaredSamples } from "./ogg-pages.ts";
import type { Run } from "./table.ts";

/** The kinds of wrong, as the tags of Verdict.why. */
export const TAGS = {
  frames: "video frames not those a player shows over the window (times, count)",
  start: "first frame / reported start not the one the semantics give",
  end: "video or file runs past or stops short of the window's end",
  pixels: "a frame's picture is not the source's frame at start + t",
  "audio-length": "decoded audio (with declared padding) not the window's or the source's length",
  "audio-decoded":
    "ffmpeg 5.1 (which ignores an MP4's declared end padding) decodes over 25 ms more than the window or source",
  "audio-position": "audio not at the source's position (cross-correlation)",
  editlist: "the file decodes differently with the MP4 edit list ignored",
  codec: "codec or container not the promised one",
  reported: "a reported field differs from what the decoders measure on the file",
  probe: "probe field differs from the source as measured",
  size: "display size or aspect",
  refused: "refused although the source decodes what the operation needs",
  "5xx": "a server error",
} as const;
export type Tag = keyof typeof TAGS;

export interface VideoTruth {
  stream: number;
  /** Frames as presented, times from the file's start (format start_time subtracted). */
  frames: Frame[];
  /** Where the last frame stops being shown, from the file's start. */
  end: number;
  /** Key packet times (not behind an edit list), from the file's start. */
  keys: number[];
  tick: number;
  gap: number;
}

export interface AudioTruth {
  stream: number;
  track: AudioTrack;
  /**
   * Where the file's own tables end the track, on ffmpeg's timeline: an MP4's (stts, edit list), an Ogg
   * Vorbis stream's last granule position; else null.
   */
  tablesEnd: number | null;
  /** First and last presented sample's times from the file's start. */
  start: number;
  end: number;
  /** Mono 8 kHz, from the first sample. */
  pcm: Int16Array | null;
}

/** What the harness measured of a source once, before any run. */
export interface SourceInfo {
  name: string;
  file: string;
  facts: StreamsFacts;
  /** The file's time 0 (format start_time, at least 0); every time below counts from it. */
  origin: number;
  /** What a player plays: from the file's start to the end of its longest decoded stream. */
  duration: number;
  video: VideoTruth | null;
  audio: AudioTruth | null;
}

export type Verdict =
  | { kind: "ok"; notes: string[] }
  | { kind: "ok-refused"; detail: string }
  | { kind: "wrong"; why: string[] }
  | { kind: "error"; detail: string };

export interface Answer {
  status: number;
  /** X-Engine-Result (files) or the JSON body (probe, errors). */
  result: Record<string, unknown>;
  contentType: string;
  /** Saved body of a file answer. */
  file: string | null;
}

const FORMAT_NAMES: Record<string, RegExp> = {
  mp4: /mp4/,
  m4a: /mp4/,
  webm: /webm/,
  mkv: /matroska/,
  mka: /matroska/,
  "3gp": /3gp/,
  mp3: /^mp3$/,
  wav: /^wav$/,
  flac: /^flac$/,
  opus: /^ogg$/,
  ogg: /^ogg$/,
  aiff: /^aiff$/,
  caf: /^caf$/,
  jpeg: /jpeg|mjpeg|image2/,
  png: /png/,
  webp: /webp/,
};

/** The audio codec each extract-audio format promises (docs/media-support.md). */
const EXTRACT_CODEC: Record<string, RegExp> = {
  mp3: /^mp3$/,
  m4a: /^aac$/,
  wav: /^pcm_/,
  flac: /^flac$/,
  opus: /^opus$/,
};

const near = (a: number, b: number, tol: number) => Math.abs(a - b) <= tol + 1e-6;
const f3 = (n: number) => n.toFixed(3);
const isMp4Name = (formatName: string) => /mp4|mov/.test(formatName);

/**
 * Presented end of a decoded audio track, given where the file declares it ends (`declared`: below). A
 * decoder honouring the declared padding stops there. In MP4 that is where the file's own tables end the
 * track (stts sample durations in the track's time scale through the edit list, mp4-tables.ts), read here
 * without ffmpeg: ffmpeg 5.1's MOV demuxer takes an empty edit's length off the last packet's duration (an
 * AAC track after a 12 ms empty edit: last packet 448 ticks for 1,024), so its last pkt_duration is not the
 * declaration; where the tables cannot be read, the last frame's time plus its stated duration stands for
 * them (ffmpeg 5.1 decodes that frame whole). In Ogg Vorbis it is the last page's granule position
 * (ogg-pages.ts), which ffmpeg 5.1 does not apply to a stream of one audio page. Never past the decoded
 * samples: a player has nothing to present there. For a source, only a declaration that trims inside the
 * last frame counts: one far earlier is a broken timestamp (alac.m4a's 1-tick packets), and a player plays
 * the samples.
 */
function audioEnd(track: AudioTrack, declared: number | null, isSource: boolean): number {
  if (declared === null || declared >= track.decodedEnd) return track.decodedEnd;
  if (isSource && track.decodedEnd - declared > track.frameSec + 0.001) return track.decodedEnd;
  return declared;
}

export interface Media {
  facts: StreamsFacts;
  origin: number;
  duration: number;
  video: VideoTruth | null;
  audio: AudioTruth | null;
}

/** Measures a file as a player presents it, every time counted from its time 0 (below). */
export async function measureMedia(
  bins: Bins,
  file: string,
  role: "source" | "output" | "video-output",
): Promise<Media | null> {
  const probed = await probe(bins, file);
  if (probed === null) return null;
  const facts = streamsFacts(probed);
  const isSource = role === "source";
  const mp4 = isMp4Name(facts.formatName);
  const [vRaw, aRaw] = await Promise.all([
    facts.video === null
      ? null
      : Promise.all([
          decodedFrames(bins, file, { stream: facts.video.index }),
          keyPacketTimes(bins, file, facts.video.index),
          timeBase(bins, file, facts.video.index),
        ]),
    facts.audio === null
      ? null
      : Promise.all([
          decodedAudio(bins, file, { stream: facts.audio.index }),
          pcm8k(bins, file, facts.audio.index),
        ]),
  ]);
  const firstSample = aRaw?.[0]?.first ?? null;
  // Time 0: a video output's own 0 (it must begin there); an audio-only output's first sample; a source's
  // format start time, or 0 where that is negative (an Opus pre-skip or an AC-3 frame stored before 0 is not
  // shown; a player's timeline starts at 0 there). An MP4 track delayed by an empty edit still counts from 0.
  const zero =
    role === "video-output"
      ? 0
      : role === "output"
        ? (firstSample ?? facts.startTime)
        : Math.max(0, facts.startTime);
  let video: VideoTruth | null = null;
  if (facts.video !== null && vRaw !== null) {
    const [frames, keys, tick] = vRaw;
    const stream = facts.video.index;
    const shifted = (frames ?? []).map((f) => ({ ...f, t: f.t - zero }));
    // In an MP4/MOV the end is what its own tables present (stts, ctts, elst), read here without ffmpeg:
    // ffmpeg 5.1 takes an empty edit off the last sample's duration (fixture.webm's watermark: 0.039 s for
    // 0.042) and drops a sample an edit shows the tail of (fixture.mov: five frames ending 0.083 s for six
    // ending 0.099 s). Not a fragmented file's video: the frames' times here are ffmpeg's, and ffmpeg 5.1
    // presents some fragmented video later than its truns do (rotate-buck-bunny.mp4: trun version 1 with
    // negative composition offsets, no edit list, from 0.083 s where its tables say 0); its end from the
    // tables would not be the end of those frames.
    const tables = mp4 ? await tablePresentation(file, stream, false) : null;
    video = {
      stream,
      frames: shifted,
      end:
        tables !== null && tables.frames.length > 0 && shifted.length > 0
          ? tables.end - zero
          : videoEnd(shifted, statedVideoEnd(probed, stream, facts, zero), mp4),
      keys: keys.map((k) => k - zero),
      tick,
      gap: medianGap(shifted),
    };
  }
  let audio: AudioTruth | null = null;
  if (facts.audio !== null && aRaw !== null) {
    const [track, pcm] = aRaw;
    if (track !== null) {
      const stream = facts.audio.index;
      const tables = mp4 ? await tablePresentation(file, stream) : null;
      const vorbis = /ogg/.test(facts.formatName) && facts.audio.codec === "vorbis";
      const pages = vorbis ? await vorbisDeclaredSamples(file, track.frames) : null;
      const tablesEnd =
        tables !== null && tables.frames.length > 0
          ? tables.end
          : pages !== null
            ? track.first + pages / track.sampleRate
            : null;
      const declared = mp4 ? (tablesEnd ?? track.declaredEnd) : tablesEnd;
      const end = audioEnd(track, declared, isSource) - zero;
      audio = { stream, track, tablesEnd, start: track.first - zero, end, pcm };
    }
  }
  const ends = [video !== null && video.frames.length > 0 ? video.end : 0, audio?.end ?? 0];
  return { facts, origin: zero, duration: Math.max(...ends), video, audio };
}

export async function measureSource(bins: Bins, name: string, file: string): Promise<SourceInfo | null> {
  const m = await measureMedia(bins, file, "source");
  return m === null ? null : { name, file, ...m };
}

/** The end of a video stream as its container states it (the stream's own duration, else the file's). */
function statedVideoEnd(probed: Probed, stream: number, facts: StreamsFacts, zero: number): number | null {
  const s = probed.streams?.find((x) => x.index === stream);
  const start = Number(s?.start_time);
  const duration = Number(s?.duration);
  if (Number.isFinite(start) && Number.isFinite(duration) && s?.duration !== undefined)
    return start + duration - zero;
  return facts.duration === null ? null : facts.startTime + facts.duration - zero;
}

/**
 * Where the video stops being shown: the last frame's time plus its duration. A last frame without a stated
 * duration (Matroska without BlockDuration) lasts until the container's stated end when that is within two
 * frames of it (or, for a lone frame, wherever it is: a one-frame WebM says how long it is shown only there);
 * else a median frame. In MP4 an edit list that ends inside the last frame ends it there (ffprobe's stream
 * duration is the edit list's): a player honouring edit lists stops presenting at its end, and ffmpeg's
 * demuxer gives the frames of a track with composition offsets (B-frames) a duration guessed from the frame
 * rate, not their samples' own.
 */
function videoEnd(frames: readonly Frame[], containerEnd: number | null, mp4: boolean): number {
  const last = frames[frames.length - 1];
  if (mp4 && last !== undefined && containerEnd !== null && containerEnd > last.t) {
    return Math.min(framesEnd(frames), containerEnd);
  }
  if (last === undefined || last.d !== null || containerEnd === null || containerEnd <= last.t) {
    return framesEnd(frames);
  }
  const gap = frames.length > 1 ? medianGap(frames) : Number.POSITIVE_INFINITY;
  return containerEnd - last.t <= 2 * gap ? containerEnd : framesEnd(frames);
}

/**
 * The frame shown at `t` (the last one at or before it, within `tol`), or the first when none is yet. For
 * source frames `tol` is SHOWN_EPS: a player shows the frame whose stored time is at or before `t`, exactly.
 */
function shownAt(frames: readonly Frame[], t: number, tol: number): number {
  let k = 0;
  for (let i = 0; i < frames.length; i++) if (frames[i]!.t <= t + tol) k = i;
  return k;
}

/**
 * The rounding of a source frame's time as ffprobe prints it (6 decimals): the frame shown at `t` is the last
 * one whose stored time is at or before `t`, and a frame starting before `end` is shown (issue 29's
 * semantics); no tolerance of a fraction of a frame there, which took the next frame for the one shown at
 * `start` (short.ogv {1.728, …}: 1.7333 for 1.700) and left out a frame shown for the window's last
 * milliseconds (matroska-test5-short.mkv {…, 1.21}: the 1.208 s frame).
 */
const SHOWN_EPS = 1e-6;

/** What the output must present: source frame indices and the times they start at in the output. */
export interface Expected {
  /** Source frame index per output frame. */
  src: number[];
  /** Output times. */
  t: number[];
  end: number;
}

/**
 * [from, to) of the source's video shown from 0: the frame shown at `from` at 0, each later at t − from
 * (when no frame is shown yet at `from`, the first one at its own t − from).
 */
export function expectedWindow(v: Pick<VideoTruth, "frames" | "end">, from: number, to: number): Expected {
  const first = shownAt(v.frames, from, SHOWN_EPS);
  const src = [first];
  const t = [Math.max(0, v.frames[first]!.t - from)];
  for (let i = first + 1; i < v.frames.length && v.frames[i]!.t < to - SHOWN_EPS; i++) {
    src.push(i);
    t.push(v.frames[i]!.t - from);
  }
  return { src, t, end: Math.min(to, v.end) - from };
}

/** A refusal: ok when it is a clear, documented 4xx; wrong when the source holds what the operation needs. */
export function refusalVerdict(src: SourceInfo | null, run: Run, a: Answer): Verdict {
  const message = String(a.result.message ?? "");
  const detail = `${a.status} ${String(a.result.code ?? "")}: ${message}`;
  if (a.status >= 500 || a.status < 400) return { kind: "error", detail };
  const decodable = src === null ? null : whatDecodes(src, run);
  if (a.status === 400) {
    const start = Number(run.params.start ?? run.params.time);
    if (decodable !== null && Number.isFinite(start) && start < (src?.duration ?? 0) - 0.001) {
      return { kind: "wrong", why: [`[refused] ${detail}, but the source plays ${f3(src!.duration)} s`] };
    }
    return { kind: "ok-refused", detail };
  }
  if ((a.status === 415 || a.status === 413) && message !== "") {
    if (a.status === 415 && decodable !== null && !/not a supported/.test(message)) {
      return { kind: "wrong", why: [`[refused] ${detail}, but ${decodable}`] };
    }
    return { kind: "ok-refused", detail };
  }
  return { kind: "wrong", why: [`[refused] ${detail}`] };
}

/** What the source measurably holds for the run, as words (null when it does not hold it). */
function whatDecodes(src: SourceInfo, run: Run): string | null {
  const window = windowOf(run);
  if (run.op === "audio.trim" || run.op === "video.extract-audio") {
    const a = src.audio;
    if (a === null || a.track.samples === 0) return null;
    if (window !== null && (window.start >= a.end || window.end <= a.start)) return null;
    return `its audio decodes ${f3(a.end - a.start)} s${window === null ? "" : ` from ${f3(a.start)}`}`;
  }
  if (run.op === "video.probe") return null;
  const v = src.video;
  if (v === null || v.frames.length === 0) return null;
  if (window !== null) {
    if (window.start >= v.end - 1e-6) return null;
    const k = shownAt(v.frames, window.start, 0);
    return `source frame at ${f3(v.frames[k]!.t)} s is shown at ${window.start} (video until ${f3(v.end)})`;
  }
  return `its video decodes ${v.frames.length} frames`;
}

function windowOf(run: Run): { start: number; end: number } | null {
  if (run.op !== "video.trim" && run.op !== "audio.trim") return null;
  const start = Number(run.params.start);
  const end =
    run.params.end !== undefined ? Number(run.params.end) : start + Number(run.params.duration ?? Number.NaN);
  return { start, end };
}

export class Findings {
  why: string[] = [];
  notes: string[] = [];
  fail(tag: Tag, msg: string) {
    this.why.push(`[${tag}] ${msg}`);
  }
}

/** Checks a 200 answer. */
export async function answerVerdict(bins: Bins, src: SourceInfo, run: Run, a: Answer): Promise<Verdict> {
  const f = new Findings();
  const videoOp = run.op !== "audio.trim" && run.op !== "video.extract-audio";
  if (videoOp && (src.video === null || src.video.frames.length === 0)) {
    return { kind: "wrong", why: ["[refused] 200 for a source whose video does not decode (415 expected)"] };
  }
  if (run.op === "video.probe") checkProbe(src, a.result, f);
  else await checkFile(bins, src, run, a, f);
  return f.why.length === 0 ? { kind: "ok", notes: f.notes } : { kind: "wrong", why: f.why };
}

function checkProbe(src: SourceInfo, body: Record<string, unknown>, f: Findings): void {
  const v = src.facts.video;
  if (v === null) {
    f.fail("probe", "probe answered for a source without video");
    return;
  }
  const expect = { codec: v.codec, fps: v.fps, hasAlpha: v.hasAlpha, width: v.width, height: v.height };
  for (const [k, value] of Object.entries(expect)) {
    if (body[k] !== value) f.fail("probe", `${k} ${JSON.stringify(body[k])} ≠ ${JSON.stringify(value)}`);
  }
  // The playable length: from the file's start to the end of its longest decoded stream.
  const tol = Math.max(src.video?.gap ?? 0, src.audio?.track.frameSec ?? 0) + 0.005;
  const reported = Number(body.durationSec);
  if (!near(reported, src.duration, tol)) {
    f.fail("probe", `durationSec ${reported} ≠ ${f3(src.duration)} s decoded (tolerance ${f3(tol)})`);
  }
}

async function checkFile(bins: Bins, src: SourceInfo, run: Run, a: Answer, f: Findings): Promise<void> {
  const file = a.file!;
  const r = a.result;
  const size = (await stat(file)).size;
  if (r.size_bytes !== size) f.fail("reported", `size_bytes ${String(r.size_bytes)} ≠ file ${size}`);
  if (size === 0) {
    f.fail("reported", "empty file");
    return;
  }
  if (run.op === "video.extract-cover") {
    await checkCover(bins, src, run, file, r, f);
    return;
  }
  const videoOut = run.op === "video.trim" || run.op === "video.watermark";
  const out = await measureMedia(bins, file, videoOut ? "video-output" : "output");
  if (out === null) {
    f.fail("codec", "ffprobe cannot read the output");
    return;
  }
  const format = String(r.format);
  if (!(FORMAT_NAMES[format]?.test(out.facts.formatName) ?? false)) {
    f.fail("codec", `format ${format} but the file is ${out.facts.formatName}`);
  }
  if (run.op === "video.trim" || run.op === "video.watermark")
    await checkVideoOp(bins, src, run, file, out, r, f);
  else await checkAudioOp(bins, src, run, file, out, r, f);
}

async function checkCover(
  bins: Bins,
  src: SourceInfo,
  run: Run,
  file: string,
  r: Record<string, unknown>,
  f: Findings,
): Promise<void> {
  const probed = await probe(bins, file);
  const v = probed === null ? null : streamsFacts(probed).video;
  if (v === null) {
    f.fail("codec", "no image in the output");
    return;
  }
  // Browsers show an image pixel for pixel (a JPEG's pixel density is ignored): square pixels expected.
  if (r.width !== v.codedWidth || r.height !== v.codedHeight) {
    f.fail(
      "reported",
      `size ${String(r.width)}×${String(r.height)} ≠ image ${v.codedWidth}×${v.codedHeight}`,
    );
  }
  if (v.sar !== 1) f.fail("size", `image pixels not square (${v.sar.toFixed(4)})`);
  checkAspect(src, v.displayAspect, f);
  const sv = src.video!;
  const time = (run.params.time as number | undefined) ?? (src.duration < 2 ? src.duration / 2 : 1);
  const k = shownAt(sv.frames, time, 0.0005);
  const [img] = [(await grayFrames(bins, file, [0])).get(0)];
  if (img === undefined) {
    f.fail("pixels", "the image does not decode");
    return;
  }
  await comparePictures(bins, src, [{ at: time, out: img, srcIndex: k }], f, GRAY.height, "cover");
}

function checkAspect(src: SourceInfo, aspect: number, f: Findings): void {
  const want = src.facts.video!.displayAspect;
  if (Math.abs(aspect / want - 1) > 0.02)
    f.fail("size", `aspect ${aspect.toFixed(3)} ≠ source's ${want.toFixed(3)}`);
}

interface Sample {
  /** Output time (for the message). */
  at: number;
  out: Buffer;
  srcIndex: number;
}

/**
 * Each output picture against the source frame the semantics say it shows and that frame's neighbours: wrong
 * when a neighbour that looks different matches clearly better (a missing or shifted frame), or when nothing
 * near matches at all.
 */
async function comparePictures(
  bins: Bins,
  src: SourceInfo,
  samples: readonly Sample[],
  f: Findings,
  rows: number,
  what: string,
): Promise<void> {
  const v = src.video!;
  const around = (i: number) => [i - 1, i, i + 1].filter((j) => j >= 0 && j < v.frames.length);
  const ns = samples.flatMap((s) => around(s.srcIndex).map((j) => v.frames[j]!.n));
  const pics = await grayFrames(bins, src.file, ns, v.stream);
  for (const s of samples) {
    const want = pics.get(v.frames[s.srcIndex]!.n);
    if (want === undefined) continue;
    const expected = psnr(s.out, want, rows);
    let better: { j: number; db: number } | null = null;
    for (const j of around(s.srcIndex)) {
      if (j === s.srcIndex) continue;
      const other = pics.get(v.frames[j]!.n);
      if (other === undefined) continue;
      const db = psnr(s.out, other, rows);
      const distinct = psnr(want, other, rows) < 40;
      if (distinct && db > expected + 3 && db > (better?.db ?? 0)) better = { j, db };
    }
    const srcT = (j: number) => f3(v.frames[j]!.t);
    if (better !== null) {
      f.fail(
        "pixels",
        `${what} at ${f3(s.at)} s shows the source's ${srcT(better.j)} s frame (${better.db.toFixed(1)} dB), ` +
          `not its ${srcT(s.srcIndex)} s frame (${expected.toFixed(1)} dB)`,
      );
    } else if (expected < 18) {
      f.fail(
        "pixels",
        `${what} at ${f3(s.at)} s: ${expected.toFixed(1)} dB against the source's ${srcT(s.srcIndex)} s frame`,
      );
    }
  }
}

async function checkVideoOp(
  bins: Bins,
  src: SourceInfo,
  run: Run,
  file: string,
  out: Media,
  r: Record<string, unknown>,
  f: Findings,
): Promise<void> {
  const sv = src.video!;
  const ov = out.video;
  const fast = run.op === "video.trim" && run.params.mode === "fast";
  const copied = fast && r.copied === true;
  if (ov === null || ov.frames.length === 0) {
    f.fail("frames", ov === null ? "no video stream in the output" : "the output's video does not decode");
    return;
  }
  // Codecs: re-encodes are H.264 (+ AAC); a fast copy keeps the source's video codec.
  const wantVideo = copied ? src.facts.video!.codec : "h264";
  if (out.facts.video!.codec !== wantVideo)
    f.fail("codec", `video ${out.facts.video!.codec}, promised ${wantVideo}`);
  if (!fast && src.audio !== null && out.facts.audio !== null && out.facts.audio.codec !== "aac") {
    f.fail("codec", `audio ${out.facts.audio.codec}, promised aac`);
  }
  // The size a player shows (pixel aspect ratio and rotation applied); a re-encode in square pixels.
  const shown = out.facts.video!;
  if (r.width !== shown.width || r.height !== shown.height) {
    f.fail(
      "reported",
      `size ${String(r.width)}×${String(r.height)} ≠ file shown ${shown.width}×${shown.height}`,
    );
  }
  if (!copied && shown.sar !== 1) f.fail("size", `re-encode's pixels not square (${shown.sar.toFixed(4)})`);
  checkAspect(src, shown.displayAspect, f);

  // Half a millisecond of rounding on each side plus a tick of each time base, but never a quarter frame
  // (a time base of 1/10 s would otherwise hide a missing frame).
  const tol = Math.min(0.0015 + sv.tick + ov.tick, sv.gap / 4);
  // The window in source time: trims [start, end) (fast copies from the keyframe at or before start);
  // the watermark the whole video.
  let from = 0;
  let to = sv.end;
  if (run.op === "video.trim") {
    const w = windowOf(run)!;
    from = w.start;
    to = Math.min(w.end, sv.end);
    if (copied) {
      const keys = sv.keys.filter((k) => k <= w.start + tol);
      const key = keys.length === 0 ? (sv.keys[0] ?? 0) : keys[keys.length - 1]!;
      from = key;
      if (!near(Number(r.start), key, tol)) {
        f.fail(
          "start",
          `copied from start ${String(r.start)}, but the keyframe at or before ${w.start} is at ${f3(key)} s`,
        );
      }
      if (key < w.start - tol) f.notes.push(`from keyframe ${f3(key)}`);
    } else if (!near(Number(r.start), w.start, 0.001)) {
      f.fail("start", `start ${String(r.start)} ≠ asked ${w.start}`);
    }
  }
  const exp = expectedWindow(sv, from, to);
  compareFrames(sv, ov, exp, tol, f);

  // With the edit list ignored a player must see the same frames (no frames hidden behind it).
  if (isMp4Name(out.facts.formatName)) {
    const decoded = await decodedFrames(bins, file, { ignoreEditlist: true, stream: ov.stream });
    // docs/media-support.md promises fast trims' MP4 shows the same from its first frame (no hiding edit
    // list); for every MP4 no frame may be hidden, except, in a copy, frames presented at or after the
    // window's end: a copied B-frame tail keeps the reference frames that frames before `end` are predicted
    // from, and its edit list ends the presentation at `end` (the exact end issue 29 asks for).
    const pastEnd = (t: number) => copied && pastWindowEnd(t, exp, tol);
    const raw = decoded?.filter((fr) => !pastEnd(fr.t)) ?? null;
    const hidden = (decoded?.length ?? 0) - (raw?.length ?? 0);
    if (hidden > 0) f.notes.push(`${hidden} frames past the end behind the edit list`);
    const shifted = fast && !near(raw?.[0]?.t ?? 0, ov.frames[0]!.t, tol);
    if (raw !== null && (raw.length !== ov.frames.length || shifted)) {
      f.fail(
        "editlist",
        `ignoring the edit list: ${raw.length} frames from ${f3(raw[0]?.t ?? 0)} s; with it ${ov.frames.length} from ${f3(ov.frames[0]!.t)} s`,
      );
    }
  }

  // Pictures: the output frame shown at a few times against the source frame shown at from + t.
  const pick = [...new Set([0, 1, Math.floor(exp.t.length / 2), exp.t.length - 1])].filter(
    (i) => i < exp.t.length,
  );
  const outPics = await grayFrames(
    bins,
    file,
    pick.map((i) => ov.frames[shownAt(ov.frames, exp.t[i]!, tol)]!.n),
    ov.stream,
  );
  const samples: Sample[] = [];
  for (const i of pick) {
    const pic = outPics.get(ov.frames[shownAt(ov.frames, exp.t[i]!, tol)]!.n);
    if (pic !== undefined) samples.push({ at: exp.t[i]!, out: pic, srcIndex: exp.src[i]! });
  }
  // The mark sits bottom-right by default: the top half of a watermarked picture is the source's.
  const rows = run.op === "video.watermark" ? GRAY.height / 2 : GRAY.height;
  await comparePictures(bins, src, samples, f, rows, "picture");

  // Audio: present when the source has some, over the same window, at the source's position.
  const fileEnd = Math.max(ov.end, out.audio?.end ?? 0);
  if (src.audio !== null) {
    if (out.audio === null) f.fail("audio-length", "no audio in the output; the source has audio");
    else {
      const audioTo = run.op === "video.watermark" ? Math.max(to, src.audio.end) : to;
      await checkAudioTrack(bins, src, out, file, from, audioTo, f, "audio");
    }
  }
  const reported = Number(r.duration);
  if (!near(reported, fileEnd, tol + 0.001)) {
    f.fail(
      "reported",
      `duration ${reported} ≠ file ${f3(fileEnd)} (video ${f3(ov.end)}, audio ${out.audio === null ? "none" : f3(out.audio.end)})`,
    );
  }
  if (run.op === "video.trim" && !near(Number(r.end) - Number(r.start), reported, 0.002)) {
    f.fail("reported", `end − start ${f3(Number(r.end) - Number(r.start))} ≠ duration ${reported}`);
  }
}

/**
 * Whether a frame at output time `t` (decoded with the MP4 edit list ignored) lies past the window: at or
 * after its end, and not one of the frames it presents. A copy's edit list may hide only such frames (the
 * reference frames a B-frame tail is predicted from); a frame the window shows, if only for its last
 * millisecond (h264-ac3.mp4 fast `{0.901, 1.801}` of the media matrix: the 1.800 s frame), is not one of them.
 */
export function pastWindowEnd(t: number, exp: Expected, tol: number): boolean {
  return t >= exp.end - tol && !exp.t.some((e) => near(e, t, tol));
}

/** Output frames against the expected ones: count, each time, the end. */
export function compareFrames(
  sv: Pick<VideoTruth, "frames">,
  ov: Pick<VideoTruth, "frames" | "end">,
  exp: Expected,
  tol: number,
  f: Findings,
): void {
  const got = ov.frames;
  const srcT = (i: number) => f3(sv.frames[exp.src[i]!]!.t);
  const firstOff = exp.t.findIndex((t, i) => i >= got.length || !near(got[i]!.t, t, tol));
  if (firstOff === 0) {
    f.fail(
      "start",
      `first frame at ${f3(got[0]!.t)} s; expected the source's ${srcT(0)} s frame at ${f3(exp.t[0]!)}` +
        (got.length > 1 && exp.t.length > 1 && near(got[0]!.t, exp.t[1]!, tol) ? " (it is missing)" : ""),
    );
  } else if (firstOff > 0) {
    const g = got[firstOff];
    f.fail(
      "frames",
      `frame ${firstOff} ${g === undefined ? "missing" : `at ${f3(g.t)} s`}, expected the source's ${srcT(firstOff)} s frame at ${f3(exp.t[firstOff]!)} s (${got.length} frames for ${exp.t.length})`,
    );
  }
  if (firstOff === -1 && got.length > exp.t.length) {
    // Frames past the last expected one: repeats that hold it are allowed only inside the window.
    const extra = got.slice(exp.t.length);
    if (extra.some((g) => g.t >= exp.end - tol)) {
      f.fail(
        "frames",
        `${extra.length} frames more than the source's ${exp.t.length}, from ${f3(extra[0]!.t)} s`,
      );
    } else {
      f.notes.push(`last frame held by ${extra.length} repeats`);
    }
  }
  if (!near(ov.end, exp.end, Math.max(tol, 0.002))) {
    f.fail("end", `video shown until ${f3(ov.end)} s, the window ends at ${f3(exp.end)} s`);
  }
}

/**
 * An output audio track against the source's [from, to): decoded length (declared padding honoured), then
 * position: the output's first stretch and one from its middle cross-correlated with the source's.
 */
/**
 * How much longer than the truth ffmpeg 5.1 may decode an MP4's audio whose end padding is declared: one AAC
 * frame at 44.1 kHz (23 ms) and rounding.
 */
const DECODED_SLACK = 0.025;

export async function checkAudioTrack(
  bins: Bins,
  src: SourceInfo,
  out: Media,
  file: string,
  from: number,
  to: number,
  f: Findings,
  what: string,
): Promise<void> {
  const sa = src.audio!;
  const oa = out.audio!;
  // The source's samples in [from, to) belong at t − from in the output.
  const wantStart = Math.max(0, sa.start - from);
  const wantEnd = Math.min(to, sa.end) - from;
  const tol = 0.003 + 2 / oa.track.sampleRate + 2 / sa.track.sampleRate;
  const mp4 = isMp4Name(out.facts.formatName);
  if (!near(oa.start, wantStart, tol)) {
    f.fail("audio-position", `${what} starts at ${f3(oa.start)} s in the file, expected ${f3(wantStart)}`);
  }
  if (!near(oa.end, wantEnd, tol)) {
    const raw = mp4 ? await decodedAudio(bins, file, { ignoreEditlist: true, stream: oa.stream }) : null;
    f.fail(
      "audio-length",
      `${what} ends at ${f3(oa.end)} s, decoding ${f3(oa.track.decodedEnd - oa.track.first)} s` +
        (oa.tablesEnd !== null
          ? ` (its tables: ${f3(oa.tablesEnd - oa.track.first)})`
          : oa.track.declaredEnd !== null && mp4
            ? ` (declared ${f3(oa.track.declaredEnd - oa.track.first)})`
            : "") +
        (raw === null ? "" : ` (edit list ignored: ${f3(raw.decodedEnd - raw.first)})`) +
        `; the source's [${f3(from)}, ${f3(Math.min(to, sa.end))}) ends at ${f3(wantEnd)}`,
    );
  } else if (mp4 && oa.track.decodedEnd - oa.track.first - (wantEnd - wantStart) > DECODED_SLACK) {
    // The tested decoder plays the last AAC frame whole: at 8–22 kHz that is 46–128 ms of padding.
    f.fail(
      "audio-decoded",
      `${what}: ffmpeg decodes ${f3(oa.track.decodedEnd - oa.track.first)} s (the file declares ${f3(oa.end - oa.start)}) for ${f3(wantEnd - wantStart)} s`,
    );
  } else if (mp4) {
    // Ignoring the edit list a player may hear the encoder's priming and padding (AAC: 2112 + 1024
    // samples), never audio from outside the window.
    const raw = await decodedAudio(bins, file, { ignoreEditlist: true, stream: oa.stream });
    const length = oa.end - oa.start;
    const slack = (3200 / oa.track.sampleRate) * 1.05 + oa.track.frameSec;
    if (raw !== null && raw.decodedEnd - raw.first - length > slack) {
      f.fail(
        "editlist",
        `${what} ignoring the edit list decodes ${f3(raw.decodedEnd - raw.first)} s, ${f3(length)} with it`,
      );
    }
  }
  if (sa.pcm === null || oa.pcm === null) return;
  const length = oa.end - oa.start;
  const span = Math.round(Math.min(0.5, length / 2) * PCM_RATE);
  for (const rel of [...new Set([0, Math.max(0, length / 2 - 0.25)])]) {
    const at = oa.start + rel;
    const outIndex = Math.round(rel * PCM_RATE);
    const part = oa.pcm.subarray(outIndex, outIndex + span);
    if (part.length < 400) continue;
    const srcAt = Math.round((from + at - sa.start) * PCM_RATE);
    const m = bestLag(sa.pcm, srcAt, part, Math.round(0.2 * PCM_RATE), Math.round(0.003 * PCM_RATE));
    if (m === null || m.corr < 0.6) continue;
    const ms = (m.lag / PCM_RATE) * 1000;
    // Off by more than 3 ms, unless the expected position matches as well (a periodic signal).
    if (Math.abs(ms) > 3 && m.near < m.corr - 0.01) {
      f.fail(
        "audio-position",
        `${what} at ${f3(at)} s is the source's ${f3(from + at + m.lag / PCM_RATE)} s, expected ${f3(from + at)} (${ms.toFixed(0)} ms, r=${m.corr.toFixed(2)})`,
      );
    }
  }
}

/**
 * A file's audio codec as ffprobe names it, except MPEG audio in MP4, named by the layer its frames hold
 * (mpegAudioLayer): the MP4 object type does not say, and ffmpeg 5.1 calls Layer II mp3 there.
 */
async function audioCodec(bins: Bins, file: string, facts: StreamsFacts): Promise<string> {
  const { codec, index } = facts.audio!;
  if (!/^mp[123]$/.test(codec) || !isMp4Name(facts.formatName)) return codec;
  return (await mpegAudioLayer(bins, file, index)) ?? codec;
}

async function checkAudioOp(
  bins: Bins,
  src: SourceInfo,
  run: Run,
  file: string,
  out: Media,
  r: Record<string, unknown>,
  f: Findings,
): Promise<void> {
  const sa = src.audio;
  if (out.audio === null || sa === null) {
    f.fail(
      "audio-length",
      out.audio === null ? "no audio stream in the output" : "the source's audio does not decode",
    );
    return;
  }
  const codec = await audioCodec(bins, file, out.facts);
  const srcCodec = await audioCodec(bins, src.file, src.facts);
  if (run.op === "audio.trim" || run.params.format === "original") {
    if (codec !== srcCodec) f.fail("codec", `audio ${codec}, the source's is ${srcCodec} (promised kept)`);
  } else {
    const format = String(run.params.format ?? "mp3");
    if (!(EXTRACT_CODEC[format]?.test(codec) ?? true)) f.fail("codec", `audio ${codec} for format ${format}`);
  }
  let from = sa.start;
  let to = sa.end;
  if (run.op === "audio.trim") {
    const w = windowOf(run)!;
    from = w.start;
    to = Math.min(w.end, sa.end);
    if (!near(Number(r.start), w.start, 0.001))
      f.fail("start", `start ${String(r.start)} ≠ asked ${w.start}`);
    if (!near(Number(r.end) - Number(r.start), Number(r.duration), 0.002)) {
      f.fail(
        "reported",
        `end − start ${f3(Number(r.end) - Number(r.start))} ≠ duration ${String(r.duration)}`,
      );
    }
    if ("copied" in r) f.notes.push(r.copied === true ? "copied" : "re-encoded");
  }
  await checkAudioTrack(bins, src, out, file, from, to, f, "audio");
  const length = out.audio.end;
  const reported = Number(r.duration);
  if (!near(reported, length, 0.002 + 1 / out.audio.track.sampleRate)) {
    f.fail("reported", `duration ${reported} ≠ ${f3(length)} s decoded`);
  }
}
