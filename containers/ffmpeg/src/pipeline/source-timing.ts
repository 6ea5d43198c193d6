/**
 * Two timings of a source that ffmpeg 5.1 does not carry into a re-encode, measured on the source's packets
 * (ffprobe, no decoding) before the encode starts (decisions.md "Variable frame rate" and "Early first audio
 * packet"):
 * - the end of its video as presented: a filtergraph's frames carry no duration, so the output's last frame
 *   lasts one frame at the graph's rate, not the source's (a variable-rate recording whose last frame is
 *   shown 1.57 s loses those seconds);
 * - a first AAC packet that sits before a gap: some fragmented MP4 writers stretch the first sample's
 *   duration by the video's start offset, so ffmpeg reads that packet 80 ms before the rest, and a copy
 *   keeps the gap (its header then states 80 ms more than the audio that plays).
 */
import { runFfprobe } from "./ffmpeg.ts";
import type { Input, JobContext } from "./job.ts";
import { rateValue } from "./media-info.ts";
import { sec } from "./params.ts";

/** How the source's video ends, in seconds from the start ffmpeg gives the input (its format start time). */
export interface VideoEnd {
  /** Presentation time of the last frame. */
  last: number;
  /** Where that frame's showing ends: the stream's stated end, else the last packet's end. */
  end: number;
  /** First frame's presentation time. */
  first: number;
  /** Frames per second of the filtergraph's link (ffmpeg's guess from the stream's rates); 0 when unknown. */
  graphRate: number;
  /** With a window: the time of the first frame at or after its end (null when the video ends before it). */
  next: number | null;
}

/** Seconds of the source's tail whose packets are listed (its last frame is among them). */
const TAIL_SECONDS = 10;

const num = (v: string | undefined): number | null => {
  const n = Number(v);
  return v !== undefined && v !== "N/A" && v !== "" && Number.isFinite(n) ? n : null;
};

/**
 * The rate ffmpeg 5.1 gives a source's frames in a filtergraph (av_guess_frame_rate): the stream's
 * r_frame_rate, or its average where r_frame_rate is a time base's (above 210) and the average below 70.
 */
export function guessedRate(rFrameRate: string | undefined, avgFrameRate: string | undefined): number {
  const r = rateValue(rFrameRate);
  const avg = rateValue(avgFrameRate);
  return avg > 0 && r > 0 && avg < 70 && r > 210 ? avg : r > 0 ? r : avg;
}

interface TailPacket {
  pts_time?: string;
  dts_time?: string;
  duration_time?: string;
  flags?: string;
}

/**
 * A video packet's presentation time: its pts, else its dts where the container stores none (AVI: ffprobe
 * lists `pts_time=N/A` for every packet; without B-frames a frame is presented at its decode time), which
 * left a trim of an AVI without the shown frame and the end of the window (h264-pcm.avi of the media matrix).
 */
const presented = (p: TailPacket): number | null => num(p.pts_time) ?? num(p.dts_time);

/**
 * A video packet's duration, null when unknown: none listed, or a single tick of its time base, which ffmpeg
 * gives a Matroska block without one (an 8×8 WebM's lone frame, shown for the file's 1 s, "lasted" 1 ms).
 */
function frameDuration(packet: TailPacket, stream: { time_base?: string } | undefined): number | null {
  const d = num(packet.duration_time);
  const tb = /^(\d+)\/(\d+)$/.exec(stream?.time_base ?? "");
  const tick = tb === null ? 0 : Number(tb[1]) / Number(tb[2]);
  // A tick of a millisecond or less: no picture lasts that little (a tick of 1/25 s is an AVI frame's own).
  return d === null || (tick <= 0.001 && d <= tick * 1.5) ? null : d;
}

/** Seconds past a window's end whose packets are listed too: the frame after it may come later in decode order. */
const REORDER_SECONDS = 2;

/**
 * The end of the source's first video stream, or with `until` (seconds from the input's start) the end of
 * the video a window […, until) presents: its last frame before `until`, shown until the next frame or
 * `until`, whichever comes first (and not past the video's own end). Null when its packets do not say.
 */
export async function videoEnd(ctx: JobContext, input: Input, until?: number): Promise<VideoEnd | null> {
  const { duration, startTime } = input.info;
  // The last TAIL_SECONDS before the window's end, or before the media's.
  const tailEnd = until ?? duration;
  const from = tailEnd === null ? 0 : Math.max(0, startTime + tailEnd - TAIL_SECONDS);
  const interval =
    until === undefined ? `${sec(from)}%` : `${sec(from)}%${sec(startTime + until + REORDER_SECONDS)}`;
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    [
      ...["-select_streams", "v:0", "-read_intervals", interval],
      ...[
        "-show_entries",
        "packet=pts_time,dts_time,duration_time,flags:stream=r_frame_rate,avg_frame_rate,start_time,duration,time_base",
      ],
      ...input.args(),
    ],
    ctx.signal,
  );
  const stream = probe.streams?.[0];
  // Packets an edit list hides (flag D) are never shown.
  const packets = ((probe.packets ?? []) as TailPacket[]).filter((p) => !(p.flags ?? "").includes("D"));
  const times = packets.map(presented);
  if (stream === undefined || times.some((t) => t === null)) return null;
  // With a window: the frames before its end are the ones it shows, the first one after it ends the last.
  const limit = until === undefined ? Number.POSITIVE_INFINITY : startTime + until;
  const next = Math.min(...times.filter((t) => t! >= limit).map((t) => t!));
  let lastIndex = -1;
  times.forEach((t, i) => {
    if (t! < limit && (lastIndex < 0 || t! >= times[lastIndex]!)) lastIndex = i;
  });
  if (lastIndex < 0) return null;
  const last = times[lastIndex]!;
  const streamStart = num(stream.start_time);
  const streamDuration = num(stream.duration);
  const packetDuration = frameDuration(packets[lastIndex]!, stream);
  // The stream's stated end (an MP4's edit list or track duration) holds where packets carry no duration
  // (B-frames in MP4); Matroska states none, its blocks do.
  const videoEnds =
    streamStart !== null && streamDuration !== null && streamDuration > 0
      ? streamStart + streamDuration
      : packetDuration !== null && packetDuration > 0
        ? last + packetDuration
        : untimedLastEnds(times as number[], last, duration === null ? null : startTime + duration);
  const end = Number.isFinite(next)
    ? Math.min(next, limit)
    : videoEnds === null
      ? null
      : Math.min(videoEnds, limit);
  if (end === null || end <= last) return null;
  return {
    last: last - startTime,
    end: end - startTime,
    first: (streamStart ?? startTime) - startTime,
    graphRate: guessedRate(stream.r_frame_rate, stream.avg_frame_rate),
    next: Number.isFinite(next) ? next - startTime : null,
  };
}

/**
 * Where a last frame of unknown length (a Matroska block without a duration) stops being shown: at the
 * container's stated end (`containerEnd`, from ffmpeg's 0) when that is within two frames of it, or
 * wherever it is for a lone frame (an 8×8 WebM of one frame at 0 states 1 s, and a player shows it that
 * long); else unknown.
 */
function untimedLastEnds(times: readonly number[], last: number, containerEnd: number | null): number | null {
  if (containerEnd === null || containerEnd <= last) return null;
  const sorted = [...new Set(times)].sort((a, b) => a - b);
  const gaps = sorted
    .slice(1)
    .map((t, i) => t - sorted[i]!)
    .sort((a, b) => a - b);
  const gap = gaps.length === 0 ? Number.POSITIVE_INFINITY : gaps[Math.floor(gaps.length / 2)]!;
  return containerEnd - last <= 2 * gap ? containerEnd : null;
}

/** The frame a player shows at a time: its presentation time and the one of the frame before it. */
export interface ShownFrame {
  /** Seconds from the input's start. */
  time: number;
  /** The frame before it (null when it is the first listed), seconds from the input's start. */
  before: number | null;
  /**
   * Where an input `-ss` must point for the decode to start at a keyframe the shown frame is decoded from
   * (seekPoint), seconds from the input's start; null where a seek to the shown frame's time does that.
   */
  seek: number | null;
}

/** Seconds before a time whose packets are listed to find the frame shown then, widened to the start when none is. */
const SHOWN_LOOKBACK = 10;

/**
 * Demuxers whose seek is not to a keyframe: MPEG-TS has no index, and ffmpeg 5.1 finds a time by a binary
 * search over the byte positions of packets of any kind (mpegts_get_dts indexes every packet as a
 * keyframe), so `-ss` lands on the packet just before the time, mostly a predicted picture; the decoder
 * then drops every picture up to the next keyframe, after the time asked.
 */
const INEXACT_SEEK = new Set(["mpegts"]);

/** A listed video packet: its times from the input's start, and whether it is a keyframe. */
interface Listed {
  pts: number;
  dts: number;
  key: boolean;
}

/**
 * Where an input `-ss` must point (seconds from the input's start) so that the frame presented at `shown`
 * decodes: at the decode time of the last keyframe presented at or before it (a microsecond earlier; an
 * input seek lands on the last packet decoded at or before the time asked, so on that keyframe or before
 * it, whatever the demuxer). Null where `-ss shown` already decodes it: an indexed demuxer seeks to the last
 * keyframe decoded at or before the time, which is that keyframe unless a later one is decoded before
 * `shown` but presented after it (an open GOP's CRA picture, whose leading pictures, `shown` among them,
 * do not decode from it). Where no keyframe is listed at or before `shown` (a GOP longer than the listing),
 * an inexact demuxer decodes from the input's start (0).
 */
export function seekPoint(packets: readonly Listed[], shown: number, demuxer: string): number | null {
  const keys = packets.filter((p) => p.key);
  const anchor = keys
    .filter((k) => k.pts <= shown + 1e-6)
    .sort((a, b) => a.dts - b.dts)
    .at(-1);
  const inexact = INEXACT_SEEK.has(demuxer);
  if (anchor === undefined) return inexact ? 0 : null;
  const lands = keys
    .filter((k) => k.dts <= shown)
    .sort((a, b) => a.dts - b.dts)
    .at(-1);
  if (!inexact && (lands === undefined || lands.pts <= shown + 1e-6)) return null;
  return Math.max(0, anchor.dts - (inexact ? INEXACT_MARGIN : 1e-6));
}

/**
 * Seconds an inexact demuxer's seek points before the keyframe: a transport stream's audio is muxed up to
 * 0.7 s away from the video of the same time (ffmpeg's max_delay), and the decode's audio must reach back
 * to the keyframe's time too.
 */
const INEXACT_MARGIN = 1;

const listed = (packets: readonly TailPacket[], startTime: number): Listed[] =>
  packets.flatMap((p) => {
    const pts = presented(p);
    const dts = num(p.dts_time) ?? pts;
    return pts === null || dts === null
      ? []
      : [{ pts: pts - startTime, dts: dts - startTime, key: (p.flags ?? "").includes("K") }];
  });

/**
 * The frame the source shows at `at` (seconds from the input's start): the last one presented at or before
 * it, edit lists honoured (packets they hide are never shown), and where a seek must point to decode it
 * (seekPoint). Null when no frame is presented then (the video starts later, or has ended) or its packets
 * do not say.
 */
export async function frameShownAt(ctx: JobContext, input: Input, at: number): Promise<ShownFrame | null> {
  const { startTime } = input.info;
  const limit = startTime + at + 1e-6;
  for (const from of [Math.max(startTime, limit - SHOWN_LOOKBACK), startTime]) {
    const probe = await runFfprobe(
      ctx.config.binaries.ffprobe,
      [
        ...["-select_streams", "v:0", "-read_intervals", `${sec(from)}%${sec(limit + REORDER_SECONDS)}`],
        ...[
          "-show_entries",
          "packet=pts_time,dts_time,duration_time,flags:stream=time_base",
          ...input.args(),
        ],
      ],
      ctx.signal,
    );
    const packets = ((probe.packets ?? []) as TailPacket[]).filter((p) => !(p.flags ?? "").includes("D"));
    const all = packets.map(presented).filter((t): t is number => t !== null);
    const times = all.filter((t) => t <= limit).sort((a, b) => a - b);
    const time = times.at(-1);
    // The video's last frame, ended by its own duration before `at` (a file cut short): nothing is shown.
    const ownEnd = (t: number) => {
      const packet = packets.find((p) => presented(p) === t);
      const d = packet === undefined ? null : frameDuration(packet, probe.streams?.[0]);
      return d !== null && d > 0 ? t + d : Number.POSITIVE_INFINITY;
    };
    if (time !== undefined && !all.some((t) => t > limit) && ownEnd(time) <= limit) return null;
    // A listing that starts at its shown frame may not hold the one before it: read from the start then.
    if (time !== undefined && (times.length > 1 || from <= startTime)) {
      const before = times.length > 1 ? times.at(-2)! : null;
      const seek = seekPoint(listed(packets, startTime), time - startTime, input.sniffed.demuxer);
      return { time: time - startTime, before: before === null ? null : before - startTime, seek };
    }
    if (from <= startTime) break;
  }
  return null;
}

/**
 * For a demuxer whose seek is inexact (MPEG-TS), where an input `-ss` must point to decode the frame shown
 * at `at` (seekPoint; seconds from the input's start): its packets listed, not decoded. Null for the other
 * demuxers, which need no listing (a cover's one ffmpeg seeks by itself), and when the packets do not say.
 */
export async function inexactSeekPoint(ctx: JobContext, input: Input, at: number): Promise<number | null> {
  if (!INEXACT_SEEK.has(input.sniffed.demuxer)) return null;
  const { startTime } = input.info;
  const limit = startTime + at + 1e-6;
  const from = Math.max(startTime, limit - SHOWN_LOOKBACK);
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    [
      ...["-select_streams", "v:0", "-read_intervals", `${sec(from)}%${sec(limit + REORDER_SECONDS)}`],
      ...["-show_entries", "packet=pts_time,dts_time,flags", ...input.args()],
    ],
    ctx.signal,
  );
  const packets = ((probe.packets ?? []) as TailPacket[]).filter((p) => !(p.flags ?? "").includes("D"));
  const frames = listed(packets, startTime);
  const shown = frames
    .filter((f) => f.pts <= at + 1e-6)
    .sort((a, b) => a.pts - b.pts)
    .at(-1);
  return seekPoint(frames, shown?.pts ?? at, input.sniffed.demuxer);
}

/** A first audio packet placed before a gap: where it belongs (right before the second one). */
export interface EarlyAudio {
  /** Seconds the first packet is moved later. */
  gap: number;
  /** The same in the stream's time base (ticks), for the setts bitstream filter. */
  gapTicks: number;
  /** Presentation time of the first packet once moved, seconds from the input's start. */
  start: number;
}

/**
 * Whether the first packet of audio stream `index` stands before a gap (the second packet starts later than
 * the first one's length, that length taken from the second, as in AAC's fixed frames); null when not.
 */
export async function earlyFirstAudio(
  ctx: JobContext,
  input: Input,
  index: number,
): Promise<EarlyAudio | null> {
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    [
      ...["-select_streams", String(index), "-read_intervals", "%+#3"],
      ...["-show_entries", "packet=pts,duration:stream=time_base", ...input.args()],
    ],
    ctx.signal,
  );
  const stream = probe.streams?.[0] as { time_base?: string } | undefined;
  const tb = /^(\d+)\/(\d+)$/.exec(stream?.time_base ?? "");
  const packets = (probe.packets ?? []) as { pts?: string; duration?: string }[];
  const [p0, p1, d1] = [num(packets[0]?.pts), num(packets[1]?.pts), num(packets[1]?.duration)];
  if (tb === null || p0 === null || p1 === null || d1 === null || d1 <= 0) return null;
  const timeBase = Number(tb[1]) / Number(tb[2]);
  const gapTicks = p1 - p0 - d1;
  const gap = gapTicks * timeBase;
  // A millisecond's rounding is not a gap; a second or more is a real hole in the audio, kept.
  if (gap < 0.001 || gap >= 1) return null;
  return { gap, gapTicks, start: (p0 + gapTicks) * timeBase - input.info.startTime };
}
