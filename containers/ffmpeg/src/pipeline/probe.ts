/** video.probe: codec, duration, frame rate, alpha and size of the first video stream (interface.md). */
import { type ProbeResult, unsupported } from "../protocol.ts";
import { packetSpan, packetsEnd, runFfprobe } from "./ffmpeg.ts";
import type { Input, JobContext, PreparedJob } from "./job.ts";
import { playerLead } from "./media-info.ts";
import { earlyFirstAudio } from "./source-timing.ts";

/**
 * The duration of a source whose container states none (a live Matroska, raw Annex-B H.264): the span of
 * its video packets, listed without decoding.
 */
const packetDuration = (ctx: JobContext, input: Input): Promise<number | null> =>
  packetSpan(ctx.config.binaries.ffmpeg, input.args(), `0:${input.info.video!.index}`, ctx.signal);

/** What the packets say of a source's length (playable). */
interface Measured {
  /** Seconds from the source's start to the end of its last packet. */
  seconds: number;
  /** The last packet is a video frame of unknown length (PacketsEnd.open): shown until the header's end. */
  open: boolean;
}

/**
 * An MP4's playable length: its index times every sample and sniffing refuses one cut short (sniff.ts), so
 * its header is not checked against the file's tail (which a probe would otherwise wait for); its stated
 * duration counts an empty edit before the first sample (a timeline that starts at 300 s states 310 s)
 * and a first AAC packet placed before a gap (earlyAudio).
 */
async function mp4Duration(ctx: JobContext, input: Input): Promise<number | null> {
  const { startTime, duration } = input.info;
  if (duration === null) return null;
  return duration - Math.max(0, startTime) - (await earlyAudio(ctx, input));
}

/** Seconds before an FLV's stated end from which its packets are read (FLV_TAIL). */
const FLV_TAIL = 10;

/**
 * Seconds from a player's 0 (the source's start, or 0 where that is below it: playerLead) to the end of
 * its last video or audio packet, read at the end of the file: what a player can play, whatever the header
 * says (a Matroska file cut short still states its whole length). An FLV's seek past its end lists no
 * packet: it is read from FLV_TAIL before its stated end, and whole when that finds none.
 */
async function playable(ctx: JobContext, input: Input): Promise<Measured | null> {
  const { video, audio, startTime, duration } = input.info;
  const maps = [video, audio].flatMap((s) => (s === null ? [] : [`0:${s.index}`]));
  const read = (from?: number) =>
    packetsEnd(ctx.config.binaries.ffmpeg, (before) => input.args(before), maps, ctx.signal, from);
  const flv = input.sniffed.demuxer === "flv";
  const tail = flv ? Math.max(0, (duration ?? 0) - startTime - FLV_TAIL) : undefined;
  let end = await read(tail);
  if (end === null && flv && tail !== 0) end = await read(0);
  const zero = startTime + playerLead(input.info);
  return end === null || end.end <= zero ? null : { seconds: end.end - zero, open: end.open };
}

/**
 * Seconds an MP4's stated duration overstates because its first AAC packet sits before a gap
 * (earlyFirstAudio: fragmented.mp4 states 5.136 s, its audio 0.080 s early, for video to 5.080 and
 * 5.056 s of audio), where the audio outlasts the video by that much: 0 otherwise.
 */
async function earlyAudio(ctx: JobContext, input: Input): Promise<number> {
  const { audio } = input.info;
  if (audio?.codec !== "aac") return 0;
  const early = await earlyFirstAudio(ctx, input, audio.index).catch(() => null);
  if (early === null) return 0;
  const ends = await streamEnds(ctx, input).catch(() => null);
  if (ends === null) return 0;
  const { video: v, audio: a } = ends;
  return a <= v ? 0 : Math.min(early.gap, a - v);
}

/** Where an MP4's video and audio streams end by its header (start + duration), seconds. */
async function streamEnds(ctx: JobContext, input: Input): Promise<{ video: number; audio: number } | null> {
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    ["-show_entries", "stream=index,start_time,duration", ...input.args()],
    ctx.signal,
  );
  const end = (index: number | undefined) => {
    const s = probe.streams?.find((x) => x.index === index);
    const [start, length] = [Number(s?.start_time), Number(s?.duration)];
    return Number.isFinite(start) && Number.isFinite(length) ? start + length : null;
  };
  const [v, a] = [end(input.info.video?.index), end(input.info.audio?.index)];
  return v === null || a === null ? null : { video: v, audio: a };
}

/** Seconds past the header's duration that the packets must reach to count (AVI states only its video). */
const LONGER_THAN_STATED = 0.02;

/**
 * The header's duration unless the packets say otherwise: a header may state the length it was meant to
 * have (fixture2.mkv, cut short: 1132 s for 1.7 s), count a subtitle that outlasts the audio and video
 * (3.4 s for 2.0 s), give the end of a timeline that starts late (310 s for 10 s from 300 s), or count only
 * the video (an AVI stating 0.042 s for 0.092 s of audio). Shorter by less than a rounding, the header wins
 * (an edit list may end inside the last packet), and so it does when the packets end in a video frame of
 * unknown length (a WebM's single picture, shown until the header's 1.0 s).
 */
export function presentedDuration(stated: number | null, measured: Measured | null): number | null {
  if (measured === null) return stated;
  if (stated === null) return measured.seconds;
  if (measured.seconds > stated + LONGER_THAN_STATED) return measured.seconds;
  if (measured.open) return stated;
  return stated - measured.seconds > Math.max(0.25, 0.02 * measured.seconds) ? measured.seconds : stated;
}

/**
 * Demuxers whose duration ffmpeg takes from the header as the muxer wrote it: where the last packet ends on
 * the file's timeline from 0 (Matroska's Segment Duration, FLV's onMetaData duration), not a length from the
 * first timestamp as it estimates for MPEG-TS or Ogg. A file whose timeline starts at 0.110 s (an FLV whose
 * H.264 B-frames start at 0.133 s, its AAC 23 ms before) stated 110 ms more than plays.
 */
const STATES_END = new Set(["matroska", "flv"]);

/** The source's length on a player's timeline, by its container's kind; null when nothing says. */
async function playedSeconds(ctx: JobContext, input: Input): Promise<number | null> {
  const { duration: header, startTime } = input.info;
  const { demuxer } = input.sniffed;
  if (demuxer === "mov") return mp4Duration(ctx, input);
  // From 0, not from a timestamp below it (playerLead); from the start, where the header states an end.
  const late = STATES_END.has(demuxer) ? Math.max(0, startTime) : 0;
  const stated = header === null ? null : header - playerLead(input.info) - late;
  // An FLV's onMetaData duration is a hint its writer may leave out or get wrong, and cannot state the
  // padding of its last AAC frame, which every decoder plays (h264-aac.flv of the media matrix states its
  // video's end, 18 ms before its audio's): the packets are what plays, unless the last one is a video
  // frame of unknown length.
  if (demuxer === "flv") {
    const measured = await playable(ctx, input);
    return measured === null || measured.open ? stated : measured.seconds;
  }
  // An Ogg states no duration: ffmpeg's is the granule position of its last page, the end of what is there
  // (a file cut short too). Its packets after a seek to the end are not to be trusted: 0.239 s late, the
  // last one's duration negative (short.ogv: 5.988 s or 97397 s for 5.759).
  if (input.sniffed.demuxer === "ogg") return stated;
  return presentedDuration(stated, await playable(ctx, input));
}

export function videoProbe(): PreparedJob {
  return {
    probeArgs: [],
    async run(ctx, input) {
      const video = input.info.video;
      if (video === null) throw unsupported("the source has no video stream");
      const duration = (await playedSeconds(ctx, input)) ?? (await packetDuration(ctx, input));
      if (duration === null) throw unsupported("the source's video stream holds no frames");
      const body: ProbeResult = {
        codec: video.codec,
        durationSec: Math.round(duration * 1e6) / 1e6,
        fps: video.fps,
        hasAlpha: video.hasAlpha,
        width: video.width,
        height: video.height,
      };
      return { kind: "json", body };
    },
  };
}
