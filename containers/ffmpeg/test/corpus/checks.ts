/**
 * The verdict on one answer of the engine: every field it reported checked against the produced file as a
 * player presents it (issue 12 "Build 2"), and the file checked against its source.
 */
import { stat } from "node:fs/promises";
import {
  audioPresented,
  type Bins,
  probe,
  type StreamsFacts,
  streamsFacts,
  thumbDiff,
  thumbnail,
  type VideoPresented,
  videoPresented,
} from "./measure.ts";
import type { Run } from "./table.ts";

/** What the harness measured of a source once, before any run. */
export interface SourceInfo {
  name: string;
  file: string;
  facts: StreamsFacts;
  /** Seconds as presented (the container's duration, else the span of its packets). */
  duration: number;
  /** Decoded audio (first audio stream), seconds. */
  audioSeconds: number | null;
  /** One audio frame of the source, seconds. */
  audioFrame: number;
  video: VideoPresented | null;
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
  mp3: /^mp3$/,
  wav: /^wav$/,
  flac: /^flac$/,
  opus: /^ogg$/,
  ogg: /^ogg$/,
  jpeg: /jpeg|mjpeg|image2/,
  png: /png/,
  webp: /webp/,
};

const near = (a: number, b: number, tol: number) => Math.abs(a - b) <= tol + 1e-6;
const f3 = (n: number) => n.toFixed(3);

/** The verdict on an answer that is not a 200. */
export function refusalVerdict(a: Answer): Verdict {
  const message = String(a.result.message ?? "");
  const detail = `${a.status} ${String(a.result.code ?? "")}: ${message}`;
  if (a.status >= 500 || a.status < 400) return { kind: "error", detail };
  if ((a.status === 415 || a.status === 413) && message !== "") return { kind: "ok-refused", detail };
  return { kind: "wrong", why: [`refused: ${detail}`] };
}

/** Checks a 200 answer. */
export async function answerVerdict(bins: Bins, src: SourceInfo, run: Run, a: Answer): Promise<Verdict> {
  const why: string[] = [];
  const notes: string[] = [];
  const videoOp = run.op !== "audio.trim" && run.op !== "video.extract-audio";
  if (videoOp && src.video !== null && src.video.frames === 0) {
    return { kind: "wrong", why: ["200 for a source whose video does not decode (415 expected)"] };
  }
  if (run.op === "video.probe") {
    checkProbe(src, a.result, why);
  } else {
    await checkFile(bins, src, run, a, why, notes);
  }
  return why.length === 0 ? { kind: "ok", notes } : { kind: "wrong", why };
}

function checkProbe(src: SourceInfo, body: Record<string, unknown>, why: string[]): void {
  const v = src.facts.video;
  if (v === null) {
    why.push("probe answered for a source without video");
    return;
  }
  const expect = { codec: v.codec, fps: v.fps, hasAlpha: v.hasAlpha, width: v.width, height: v.height };
  for (const [k, value] of Object.entries(expect)) {
    if (body[k] !== value) why.push(`${k} ${JSON.stringify(body[k])} ≠ ${JSON.stringify(value)}`);
  }
  const tol = Math.max(0.1, 2 / (v.fpsValue || 25));
  const reported = Number(body.durationSec);
  if (!near(reported, src.duration, tol)) why.push(`durationSec ${reported} ≠ ${f3(src.duration)}`);
}

/** Tolerance of a video's times: one frame (at most 0.2 s for very low rates). */
const frameSec = (src: SourceInfo) =>
  Math.min(0.2, 1 / (src.facts.video?.fpsValue || 25), src.video === null ? 1 : Number.POSITIVE_INFINITY);

async function checkFile(
  bins: Bins,
  src: SourceInfo,
  run: Run,
  a: Answer,
  why: string[],
  notes: string[],
): Promise<void> {
  const file = a.file!;
  const r = a.result;
  const size = (await stat(file)).size;
  if (r.size_bytes !== size) why.push(`size_bytes ${String(r.size_bytes)} ≠ file ${size}`);
  if (size === 0) {
    why.push("empty file");
    return;
  }
  const probed = await probe(bins, file);
  if (probed === null) {
    why.push("ffprobe cannot read the output");
    return;
  }
  const out = streamsFacts(probed);
  const format = String(r.format);
  if (!(FORMAT_NAMES[format]?.test(out.formatName) ?? false)) {
    why.push(`format ${format} but the file is ${out.formatName}`);
  }
  if (run.op === "video.extract-cover") {
    await checkCover(bins, src, run, file, out, r, why);
    return;
  }
  const isMp4 = /mp4/.test(out.formatName);
  const wantsVideo = run.op === "video.trim" || run.op === "video.watermark";
  if (wantsVideo) await checkVideo(bins, src, run, file, out, r, isMp4, why, notes);
  const wantsAudio = run.op === "audio.trim" || run.op === "video.extract-audio";
  if (wantsAudio || (wantsVideo && src.facts.audio !== null)) {
    await checkAudio(bins, src, run, file, out, r, isMp4, why, notes);
  }
}

async function checkCover(
  bins: Bins,
  src: SourceInfo,
  run: Run,
  file: string,
  out: StreamsFacts,
  r: Record<string, unknown>,
  why: string[],
): Promise<void> {
  const v = out.video;
  if (v === null) {
    why.push("no image in the output");
    return;
  }
  // Browsers show an image pixel for pixel (a JPEG's pixel density is ignored): square pixels expected.
  if (r.width !== v.codedWidth || r.height !== v.codedHeight) {
    why.push(`size ${String(r.width)}×${String(r.height)} ≠ image ${v.codedWidth}×${v.codedHeight}`);
  }
  if (v.sar !== 1) why.push(`image pixels not square (${v.sar.toFixed(4)})`);
  checkAspect(src, v.displayAspect, why);
  const asked = run.params.time as number | undefined;
  const time = asked ?? (src.duration < 2 ? src.duration / 2 : 1);
  await checkPixels(bins, src.file, time, file, null, why, "cover");
}

function checkAspect(src: SourceInfo, aspect: number, why: string[]): void {
  const want = src.facts.video!.displayAspect;
  if (Math.abs(aspect / want - 1) > 0.02)
    why.push(`aspect ${aspect.toFixed(3)} ≠ source's ${want.toFixed(3)}`);
}

/** The output's frame at `outTime` looks like the source's at `srcTime` (rows above `rows` only). */
async function checkPixels(
  bins: Bins,
  source: string,
  srcTime: number,
  output: string,
  outTime: number | null,
  why: string[],
  what: string,
  rows?: number,
): Promise<void> {
  const [a, b] = await Promise.all([thumbnail(bins, source, srcTime), thumbnail(bins, output, outTime)]);
  if (a === null || b === null) {
    if (b === null) why.push(`${what}: no frame decodes in the output at ${outTime ?? 0}`);
    return;
  }
  const diff = thumbDiff(a, b, 0, rows);
  if (diff > 20)
    why.push(`${what}: pixels differ from the source's at ${f3(srcTime)} s (mean |Δ| ${diff.toFixed(0)})`);
}

async function checkVideo(
  bins: Bins,
  src: SourceInfo,
  run: Run,
  file: string,
  out: StreamsFacts,
  r: Record<string, unknown>,
  isMp4: boolean,
  why: string[],
  notes: string[],
): Promise<void> {
  const v = out.video;
  if (v === null) {
    why.push("no video stream in the output");
    return;
  }
  // The size a player shows (pixel aspect ratio and rotation applied); a re-encode in square pixels.
  if (r.width !== v.width || r.height !== v.height) {
    why.push(`size ${String(r.width)}×${String(r.height)} ≠ file shown ${v.width}×${v.height}`);
  }
  const reencoded = run.op === "video.watermark" || run.params.mode !== "fast";
  if (reencoded && v.sar !== 1) why.push(`re-encode's pixels not square (${v.sar.toFixed(4)})`);
  checkAspect(src, v.displayAspect, why);
  const shown = await videoPresented(bins, file);
  if (shown === null || shown.frames === 0) {
    why.push("the video does not decode");
    return;
  }
  const tol = frameSec(src);
  const reported = Number(r.duration);
  // The file lasts as long as its longest stream.
  const audioShown = out.audio === null ? null : await audioPresented(bins, file);
  const fileShown = Math.max(shown.duration, audioShown ?? 0);
  const audioFrame =
    out.audio?.codec === "aac" && out.audio.sampleRate > 0 ? 1024 / out.audio.sampleRate : src.audioFrame;
  if (!near(reported, fileShown, Math.max(tol, audioShown === null ? 0 : audioFrame) + 0.002)) {
    why.push(
      `duration ${reported} ≠ shown ${f3(fileShown)} (video ${f3(shown.duration)}, audio ${audioShown === null ? "none" : f3(audioShown)})`,
    );
  }
  if (isMp4) {
    const raw = await videoPresented(bins, file, { ignoreEditlist: true });
    if (raw !== null && !near(raw.duration, shown.duration, tol)) {
      why.push(`video ignoring the edit list lasts ${f3(raw.duration)} s, ${f3(shown.duration)} s with it`);
    }
  }
  if (run.op === "video.watermark") {
    if (!near(shown.duration, src.video?.duration ?? src.duration, tol * 2)) {
      why.push(`video lasts ${f3(shown.duration)} s, source ${f3(src.video?.duration ?? src.duration)} s`);
    }
    if (src.video !== null && shown.frames < src.video.frames * 0.95) {
      why.push(`${shown.frames} frames for a source of ${src.video.frames}`);
    }
    const mid = shown.frames <= 2 ? 0 : shown.duration / 2;
    // The mark sits bottom-right by default: the top half must be the source's picture.
    await checkPixels(bins, src.file, mid, file, mid, why, "picture", 18);
    return;
  }
  // video.trim: the window ends where the asked end or the source's video does.
  const askedStart = run.params.start as number;
  const videoEnd =
    src.video === null ? src.duration : src.video.first - src.facts.startTime + src.video.duration;
  const askedEnd = Math.min(
    (run.params.end as number | undefined) ?? askedStart + (run.params.duration as number),
    videoEnd,
  );
  const start = Number(r.start);
  const end = Number(r.end);
  if (!near(end - start, reported, 0.002)) why.push(`end − start ${f3(end - start)} ≠ duration ${reported}`);
  if (run.params.mode === "fast") {
    if (start > askedStart + 0.001) why.push(`start ${start} after the asked ${askedStart}`);
    if (end < askedEnd - tol) why.push(`end ${end} before the asked ${f3(askedEnd)}`);
    if (askedStart - start > 0) notes.push(`from keyframe ${start}`);
  } else {
    if (!near(start, askedStart, 0.001)) why.push(`start ${start} ≠ asked ${askedStart}`);
    if (!near(shown.duration, askedEnd - askedStart, tol)) {
      why.push(`video shown ${f3(shown.duration)} s for [${askedStart}, ${f3(askedEnd)})`);
    }
  }
  const mid = shown.frames <= 2 ? 0 : Math.min(shown.duration / 2, 0.5);
  await checkPixels(bins, src.file, start + mid, file, mid, why, "picture");
}

async function checkAudio(
  bins: Bins,
  src: SourceInfo,
  run: Run,
  file: string,
  out: StreamsFacts,
  r: Record<string, unknown>,
  isMp4: boolean,
  why: string[],
  notes: string[],
): Promise<void> {
  if (out.audio === null) {
    why.push("no audio stream in the output");
    return;
  }
  const shown = await audioPresented(bins, file);
  if (shown === null) {
    why.push("the audio does not decode");
    return;
  }
  // One frame of the source's audio, or of the output's where it was re-encoded (AAC: 1024 samples, which
  // at 8 kHz is 128 ms); ffmpeg 5.1 plays a last AAC frame whole where the edit list ends it.
  const outFrame = out.audio.codec === "aac" && out.audio.sampleRate > 0 ? 1024 / out.audio.sampleRate : 0;
  const tol = Math.max(src.audioFrame, outFrame) + 0.002;
  if (isMp4) {
    // An edit list may hide the encoder's priming (AAC: up to 2112 samples), not audio that was cut away.
    const raw = await audioPresented(bins, file, { ignoreEditlist: true });
    if (raw !== null && !near(raw, shown, tol + 0.05)) {
      why.push(`audio ignoring the edit list lasts ${f3(raw)} s, ${f3(shown)} s with it`);
    }
  }
  if (run.op === "video.trim" || run.op === "video.watermark") {
    if (shown < Number(r.duration) - 2 * tol)
      why.push(`audio ${f3(shown)} s of a ${String(r.duration)} s video`);
    return;
  }
  const reported = Number(r.duration);
  if (!near(reported, shown, tol)) why.push(`duration ${reported} ≠ audio shown ${f3(shown)}`);
  if (run.op === "video.extract-audio") {
    const want = src.audioSeconds ?? src.duration;
    if (!near(shown, want, tol + 0.05)) why.push(`audio ${f3(shown)} s of a ${f3(want)} s source track`);
    return;
  }
  // audio.trim
  const askedStart = run.params.start as number;
  const sourceEnd = src.audioSeconds ?? src.duration;
  const askedEnd = Math.min(
    (run.params.end as number | undefined) ?? askedStart + (run.params.duration as number),
    sourceEnd,
  );
  const start = Number(r.start);
  const end = Number(r.end);
  if (!near(start, askedStart, 0.001)) why.push(`start ${start} ≠ asked ${askedStart}`);
  if (!near(end - start, reported, 0.002)) why.push(`end − start ${f3(end - start)} ≠ duration ${reported}`);
  if (!near(shown, askedEnd - askedStart, tol))
    why.push(`audio ${f3(shown)} s for [${askedStart}, ${f3(askedEnd)})`);
  if ("copied" in r) notes.push(r.copied === true ? "copied" : "re-encoded");
}
