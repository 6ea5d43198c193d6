/**
 * AMR (NB and WB) copied into 3GP exactly: no encoder here writes AMR (Debian's ffmpeg 5.1 and the engine's
 * image only decode it), so a window of it is its frames copied, and the 3GP edit list (ISO 14496-12 8.6.6)
 * says which of their samples play: its media time starts inside the first frame copied, at `start`, and
 * the last frame's sample duration ends at `end`. ffmpeg 5.1 skips the start sample-exactly and states the
 * end; a player that ignores edit lists hears at most one frame (20 ms) more at each end.
 *
 * The window is found by sample positions, not by the source's timestamps: an AMR track's may not follow its
 * frames (fixture.3gp's stts has deltas of 12, 232, 305 between 160-sample frames, so a seek by time cut it
 * 5–18 ms off). The stream is copied to raw AMR (RFC 4867 §5 storage format: each frame is its one header
 * byte, whose mode gives its size, and its payload), the frames of the window taken from it by count, and
 * muxed into 3GP stamped by their samples.
 */
import { randomUUID } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { statedAudioEnd } from "./audio-encode.ts";
import { CONTAINERS } from "./containers.ts";
import { runFfprobe } from "./ffmpeg.ts";
import { emptyOutput, type Input, type JobContext, outputPath, preferSourceError } from "./job.ts";
import { joinAll } from "./join.ts";
import type { AudioInfo } from "./media-info.ts";
import { sec } from "./params.ts";

interface AmrKind {
  /** Magic of the raw storage format. */
  magic: string;
  /** Samples per frame (20 ms). */
  frame: number;
  rate: number;
  /** Bytes of a frame (its header byte included) by its mode, the header's bits 3–6 (RFC 4867 §5.3). */
  sizes: readonly number[];
}

const AMR: Record<string, AmrKind> = {
  amr_nb: {
    magic: "#!AMR\n",
    frame: 160,
    rate: 8000,
    sizes: [13, 14, 16, 18, 20, 21, 27, 32, 6, 1, 1, 1, 1, 1, 1, 1],
  },
  amr_wb: {
    magic: "#!AMR-WB\n",
    frame: 320,
    rate: 16000,
    sizes: [18, 24, 33, 37, 41, 47, 51, 59, 61, 6, 1, 1, 1, 1, 1, 1],
  },
};

/** Whether `codec` is cut here (AMR: no encoder, so by its frames). */
export const isAmr = (codec: string): boolean => AMR[codec] !== undefined;

/** The frames of a raw AMR file, in order (a truncated last frame is dropped). */
export function amrFrames(raw: Buffer, kind: Pick<AmrKind, "magic" | "sizes">): Buffer[] {
  if (raw.toString("latin1", 0, kind.magic.length) !== kind.magic) return [];
  const frames: Buffer[] = [];
  for (let at = kind.magic.length; at < raw.length; ) {
    const size = kind.sizes[(raw[at]! >> 3) & 15]!;
    if (at + size > raw.length) break;
    frames.push(raw.subarray(at, at + size));
    at += size;
  }
  return frames;
}

/**
 * Where the decoded samples start: the samples the decoder skips from the first packet on (an MP4/3GP edit
 * list starting inside a frame, fixture.3gp's 27 samples, or frames after it: the demuxer still gives the
 * packets it hides, marked discarded, and a copy keeps them; the first packet carries the whole skip), and
 * the time of the first sample decoded (the first packet's time plus that skip).
 */
async function decodeStart(
  ctx: JobContext,
  input: Input,
  index: number,
  rate: number,
): Promise<{ time: number; skip: number }> {
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    [
      ...["-select_streams", String(index), "-read_intervals", "%+#1"],
      ...["-show_entries", "packet=pts_time:packet_side_data=skip_samples", ...input.args()],
    ],
    ctx.signal,
  ).catch((err: unknown) => preferSourceError(input, err));
  const first = (probe as { packets?: { pts_time?: string; side_data_list?: { skip_samples?: number }[] }[] })
    .packets?.[0];
  const skip = Math.max(0, ...(first?.side_data_list ?? []).map((d) => Number(d.skip_samples ?? 0)));
  const pts = Number(first?.pts_time);
  return { time: (Number.isFinite(pts) ? pts : 0) + skip / rate, skip: Number.isFinite(skip) ? skip : 0 };
}

/**
 * Writes the AMR of `audio` over the timeline's [start, end) (the whole stream when `window` is null) into
 * a 3GP file (the job's output file unless `out` is given), exactly: the frames that hold the window, the
 * edit list starting at `start` inside the first and the last one's duration ending at `end` (or where the
 * source's own edit list ends it). Returns the file's path and the time on the source's timeline of its
 * first sample (`start`, or later where the audio starts later).
 */
export async function amrInto3gp(
  ctx: JobContext,
  input: Input,
  audio: AudioInfo,
  window: { start: number; end: number } | null,
  out: string = outputPath(ctx, CONTAINERS["3gp"].ext),
): Promise<{ path: string; start: number }> {
  const kind = AMR[audio.codec];
  if (kind === undefined) throw new Error(`not AMR: ${audio.codec}`);
  const why =
    window === null
      ? "the source's audio stream holds no decodable audio"
      : "the source has no decodable audio between start and end";
  const raw = path.join(ctx.dir, "source-audio.amr");
  const map = ["-map", `0:${audio.index}`, "-vn", "-sn", "-dn"];
  const [first, stated] = await joinAll([
    decodeStart(ctx, input, audio.index, kind.rate),
    statedAudioEnd(ctx, input, audio.index),
    ctx
      .runFfmpeg([...input.args(), ...map, "-c:a", "copy", "-f", "amr", raw], { signal: ctx.signal })
      .catch((err: unknown) => preferSourceError(input, err)),
  ]);
  const frames = amrFrames(await readFile(raw), kind);
  const total = frames.length * kind.frame;
  // Sample positions in the copied frames: the timeline's time t is the decoded sample (t − first) · rate,
  // and the decode skipped `skip` samples of the first frame.
  const origin = Math.max(0, input.info.startTime);
  const at = (t: number) => Math.round((t + origin - first.time) * kind.rate) + first.skip;
  const sourceEnd = stated === null ? total : Math.min(total, at(stated + input.info.startTime - origin));
  const from = Math.min(sourceEnd, Math.max(first.skip, window === null ? 0 : at(window.start)));
  const to = Math.min(sourceEnd, window === null ? total : at(window.end));
  if (to <= from) throw emptyOutput(input, why);
  const k0 = Math.floor(from / kind.frame);
  const k1 = Math.ceil(to / kind.frame);
  // A name of its own: a speculative pass of the same job (speculate.ts) may write its cut here too.
  const cut = path.join(ctx.dir, `cut-audio-${randomUUID()}.amr`);
  await writeFile(cut, Buffer.concat([Buffer.from(kind.magic, "latin1"), ...frames.slice(k0, k1)]));
  // Stamped by samples: the first frame starts `offset` before 0 (the muxer's edit list starts there), the
  // last one lasts until `to`.
  const offset = from - k0 * kind.frame;
  const last = k1 - k0 - 1;
  const lastDuration = to - (k1 - 1) * kind.frame;
  const container = CONTAINERS["3gp"];
  const stamp = `setts=ts=N*${kind.frame}-${offset}:duration=if(eq(N\\,${last})\\,${lastDuration}\\,${kind.frame})`;
  await ctx.runFfmpeg(
    [
      ...["-protocol_whitelist", "file", "-f", "amr", "-i", `file:${cut}`],
      ...["-map", "0:a:0", "-c:a", "copy", "-bsf:a", stamp, ...container.options, "-f", container.muxer, out],
    ],
    { signal: ctx.signal, durationSec: (to - from) / kind.rate },
  );
  return { path: out, start: (from - first.skip) / kind.rate + first.time - origin };
}

/**
 * For an AMR source, the input arguments of a video operation's audio read from `seek` seconds of the
 * timeline: the whole stream copied into 3GP stamped by its samples (amrInto3gp), whose stream 0 is the
 * audio. AMR's timestamps may not follow its frames (fixture.3gp: a cut by them was 12–18 ms early, the
 * samples counted from the source's start). Null for other codecs: their audio is read from the source.
 */
export async function amrAudioInput(ctx: JobContext, input: Input, seek: number): Promise<string[] | null> {
  const audio = input.info.audio;
  if (audio === null || !isAmr(audio.codec)) return null;
  const copy = await amrInto3gp(ctx, input, audio, null, path.join(ctx.dir, "source-audio.3gp"));
  // An audio stream that starts after the timeline's 0 starts as late in this input.
  const late = copy.start > 0 ? ["-itsoffset", sec(copy.start)] : [];
  const seekArgs = seek > 0 ? ["-ss", sec(seek)] : [];
  return [...late, ...seekArgs, "-protocol_whitelist", "file", "-f", "mov", "-i", `file:${copy.path}`];
}
