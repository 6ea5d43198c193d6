/**
 * video.trim `fast`: the video stream copied from the keyframe at or before `start`, and the audio cut to
 * exactly the interval that copied video presents.
 *
 * A stream copy of the audio cannot follow the video: ffmpeg drops the audio packets before the asked time
 * (so the audio starts frames after the keyframe), cuts audio and video by decode time (so a B-frame video
 * ends frames after its audio) and keeps whole packets. So the video is copied first, its presented span
 * measured on the file, and the audio of exactly that span re-encoded beside it (in the source's codec where
 * the container holds it). A copy that would hold frames from before the keyframe (a keyframe hidden behind
 * the source's edit list, open-GOP leading frames) presents more than the interval to a player that ignores
 * edit lists: then there is nothing exact to copy and the caller re-encodes.
 *
 * Keyframe flags are checked against the pictures: when every packet of the copy claims a keyframe and its
 * pictures are not all intra (an inter codec), a player seeking in the output would decode from a predicted
 * picture. If the source itself flags every packet a keyframe (an MP4/3GP without stss), the start may be a
 * predicted picture and nothing marks the output's seek points: re-encoded. If only the copy lost the
 * source's flags (H.263 read back from Matroska), the output takes its video from the source.
 */
import path from "node:path";
import { amrAudioInput } from "./amr-cut.ts";
import { countAudio, countSamples, frameAligned } from "./audio-encode.ts";
import { audioCutEncoding, CONTAINERS, type Container, type EncoderFrame } from "./containers.ts";
import { type ProbePacket, runFfprobe } from "./ffmpeg.ts";
import { emptyOutput, type Input, type JobContext, outputPath, preferSourceError } from "./job.ts";
import { mediaInfo } from "./media-info.ts";
import { discardMatroskaAudioEnd, endMatroskaVideoAt } from "./mkv-end.ts";
import { endVideoAt } from "./mp4-end.ts";
import { sec } from "./params.ts";
import { inexactSeekPoint, videoEnd } from "./source-timing.ts";

/** Packets read after seeking to find the keyframe at or before start. */
const KEYFRAME_SCAN = "+#64";

export function keyframeProbeArgs(absoluteStart: number): string[] {
  return [
    "-show_packets",
    "-show_entries",
    "packet=stream_index,pts_time,flags",
    "-read_intervals",
    `${sec(absoluteStart)}%${KEYFRAME_SCAN}`,
  ];
}

/** Seconds before `start` listed again when a probe's packets hold no keyframe at or before it. */
const KEY_LOOKBACK = [2, 10, 60, Number.POSITIVE_INFINITY];

/**
 * The last keyframe presented at or before `start` (seconds from the input's start), by presentation time:
 * the picture a copy from it shows first. A probe's seek can land past `start` (an intra-only MJPEG MOV lands
 * on the frame after it) or long before it, so the keyframe is chosen among the packets listed, and the list
 * is read again from further back while it holds none. `start` itself when none is found: the copy is then
 * checked (copiedVideo) and re-encoded if it does not begin at a keyframe at 0.
 */
async function keyframeAtOrBefore(ctx: JobContext, input: Input, start: number): Promise<number> {
  const video = input.info.video!;
  const { keyframes, startTime } = input.info;
  const at = start + startTime + 1e-6;
  if (keyframes !== undefined && startTime === 0) {
    // Read from the MP4 index (a guess, see speculate.ts).
    const key = keyframes.filter((k) => k.pts <= at).at(-1);
    return key === undefined ? start : Math.max(0, key.pts);
  }
  const lastKey = (packets: ProbePacket[]) =>
    packets
      .filter((p) => p.stream_index === video.index && (p.flags ?? "").startsWith("K"))
      .map((p) => Number(p.pts_time))
      .filter((t) => Number.isFinite(t) && t <= at)
      .reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
  // The first probe (keyframeProbeArgs) assumed the file starts at 0; it is used only when it does.
  let key = startTime === 0 ? lastKey(input.info.packets) : Number.NEGATIVE_INFINITY;
  for (const back of KEY_LOOKBACK) {
    if (Number.isFinite(key)) break;
    const from = Math.max(startTime, at - back);
    // Read past `start`: a listing's end is checked on every stream's packets, and an interleaved audio chunk
    // timed after `start` would end it before the video packets up to `start`. From the file's start it is
    // read without a seek: an MPEG-TS's seek there lands after a first keyframe decoded before the start
    // time (its dts before the first pts), which was then never found (longgop.ts of the media matrix).
    const interval = from <= startTime ? `%${sec(at + 2)}` : `${sec(from)}%${sec(at + 2)}`;
    const probe = await runFfprobe(
      ctx.config.binaries.ffprobe,
      [
        ...["-show_packets", "-show_entries", "packet=stream_index,pts_time,flags"],
        ...["-read_intervals", interval, ...input.args()],
      ],
      ctx.signal,
    );
    key = lastKey(mediaInfo(probe).packets);
    if (from <= startTime) break;
  }
  return Number.isFinite(key) ? Math.min(start, Math.max(0, key - startTime)) : start;
}

/** Codecs the MP4 muxer takes as they are (no PCM, H.263, AMR, …; FLAC in MP4 is still experimental in 5.1). */
const MP4_CODECS = new Set([
  "h264",
  "hevc",
  "av1",
  "vp9",
  "mpeg4",
  "mjpeg",
  "aac",
  "mp3",
  "alac",
  "opus",
  "ac3",
  "eac3",
]);

/**
 * The container a stream copy goes into: the source's family when it holds the copied codecs (MP4 for
 * MP4/MOV/3GP, WebM for WebM), Matroska otherwise (it holds them all: a camera's MJPEG with PCM, a phone's
 * H.263 with AMR).
 */
function copyContainer(input: Input): Container {
  const codecs = [input.info.video?.codec, input.info.audio?.codec].filter((c) => c !== undefined);
  if (input.sniffed.demuxer === "mov" && codecs.every((c) => MP4_CODECS.has(c))) return CONTAINERS.mp4;
  if (input.sniffed.format === "webm") return CONTAINERS.webm;
  return CONTAINERS.mkv;
}

/**
 * Muxer options of a trim: an MP4's B-frames get negative composition offsets (ctts version 1) instead of an
 * edit list, so a player that ignores edit lists shows the first frame at 0 as well.
 */
export function trimMuxOptions(container: Container): string[] {
  return container.muxer === "mp4" ? ["-movflags", "+faststart+negative_cts_offsets"] : container.options;
}

/**
 * The encoder of the cut audio: the source's codec where the container holds it (audio.trim's choice, with
 * the delay an MP4 edit list hides for AC-3: `frame`), else the container's usual one (AAC in MP4, Opus in
 * WebM).
 */
function audioEncoding(input: Input, container: Container): { codec: string[]; frame?: EncoderFrame } {
  const audio = input.info.audio!;
  if (container.muxer === "mp4" && !MP4_CODECS.has(audio.codec)) {
    return { codec: ["-c:a", "aac", "-b:a", "192k"] };
  }
  if (container.muxer === "webm" && audio.codec !== "opus" && audio.codec !== "vorbis") {
    return { codec: ["-c:a", "libopus", "-b:a", "128k"] };
  }
  const { codec, frame } = audioCutEncoding(audio);
  if (container.muxer === "mp4") return { codec, ...(frame === undefined ? {} : { frame }) };
  // Every lossy encoder here starts with a delay (AAC's priming is 1024 samples, 128 ms at 8 kHz; LAME's 1105;
  // Opus, MP2, AC-3 and Vorbis a few ms), and ffmpeg 5.1's Matroska muxer keeps no delay for any of them: it
  // shifts every stream by it, so the copied video started that late (docs/media-support.md). FLAC has none and
  // Matroska holds it (AMR from a phone's 3GP, AAC beside H.263, MP3 from an AVI); 16 bits, as much as a lossy
  // source's decode carries (FLAC would otherwise take 24 from the decoder's floats).
  const lossless = /^(flac|alac|pcm_)/.test(codec[1] ?? "");
  if (container.muxer === "matroska" && !lossless && audio.channels <= 8) {
    return { codec: ["-c:a", "flac", "-sample_fmt", "s16"] };
  }
  return { codec };
}

/** `codec` with the cut's filter put before any filter of its own (one -af per output). */
function withAudioFilter(filter: string, codec: readonly string[]): string[] {
  const i = codec.indexOf("-af");
  if (i < 0) return ["-af", filter, ...codec];
  return [...codec.slice(0, i), "-af", `${filter},${codec[i + 1]}`, ...codec.slice(i + 2)];
}

/** Packets read from the head of a copy, and seconds from its tail, to measure it. */
const HEAD_PACKETS = 64;
const TAIL_SECONDS = 5;

interface CopiedVideo {
  /** Seconds presented, from the keyframe (at 0) to the end of the last frame. */
  span: number;
  /** Whether every packet of its head (more than one) claims to be a keyframe: an intra-only codec, or flags that lie. */
  everyKey: boolean;
}

/**
 * What the copied video presents; null when the file holds frames before its keyframe (an earlier keyframe,
 * frames behind an edit list, leading frames of an open GOP) or times ffprobe cannot read (negative ones in
 * Matroska).
 */
async function copiedVideo(ctx: JobContext, file: string, length: number): Promise<CopiedVideo | null> {
  // Only the head (where frames before the keyframe would be) and the tail (whose packets hold the last
  // frame, reordered or not): a long copy's every packet would outgrow the probe's output limit.
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    [
      ...["-select_streams", "v:0", "-show_entries", "packet=pts_time,duration_time,flags"],
      ...["-read_intervals", `%+#${HEAD_PACKETS},${sec(Math.max(0, length - TAIL_SECONDS))}%`],
      ...["-protocol_whitelist", "file", `file:${file}`],
    ],
    ctx.signal,
  );
  const packets = (probe.packets ?? []) as (ProbePacket & { duration_time?: string })[];
  const first = packets[0];
  if (first === undefined || !(first.flags ?? "").startsWith("K")) return null;
  const times = packets.map((p) => Number(p.pts_time));
  if (times.some((t) => !Number.isFinite(t))) return null;
  const keyTime = times[0]!;
  // The keyframe asked for sits at 0; anything before it (an earlier keyframe the seek landed on, frames
  // an edit list hides) is more than the interval.
  if (Math.abs(keyTime) > 0.002) return null;
  const hidden = packets.some((p, i) => (p.flags ?? "").includes("D") || times[i]! < keyTime - 0.001);
  if (hidden) return null;
  const sorted = [...times].sort((a, b) => a - b);
  const last = sorted.at(-1)!;
  const lastPacket = packets[times.indexOf(last)]!;
  const gap = sorted.length > 1 ? last - sorted.at(-2)! : 0;
  const lastDuration = Number(lastPacket.duration_time);
  const span = last + (Number.isFinite(lastDuration) && lastDuration > 0 ? lastDuration : gap) - keyTime;
  const head = packets.slice(0, HEAD_PACKETS);
  return { span, everyKey: head.length > 1 && head.every((p) => (p.flags ?? "").startsWith("K")) };
}

interface Tail {
  /** Output options of the second copy ([] when the first one already ends right). */
  options: string[];
  /**
   * The last frame kept lasts past `end` (MP4: or frames are presented at or past it, kept for frames before
   * it to decode): the file written is ended there, by its edit list (MP4) or its last frame's BlockDuration.
   */
  editEnd: boolean;
}

/**
 * How a copy (`file`, its keyframe at 0) ends at `end` seconds: ffmpeg's `-t` cuts by decode time, which keeps
 * a B-frame stream's next reference frames (2 to 4 frames shown past `end`) and a variable-rate source's long
 * frame whole (1.5 s past it). Null when its packets cannot be read, or when no cut of them ends exactly at
 * `end` (Matroska, below).
 *
 * MP4: every packet is kept, in decode order, up to the last one presented before `end` (so every frame shown
 * before `end` has the frames it references, even those presented after `end`), and the file's edit list
 * then ends the presentation at `end` (mp4-end.ts), the last frame shown until there.
 *
 * Matroska and WebM have no edit list: no packet is kept from the first one, in decode order, whose frame is
 * presented at or after `end`, and the last kept frame is given a BlockDuration that ends there, whether it
 * lasted past `end` or ended before it: mkv-end.ts. ffmpeg 5.1's Matroska muxer writes no duration for video
 * blocks, whatever the packet's, so the frame lasted the track's DefaultDuration. When a frame shown before
 * `end` comes after that packet in decode order (a B-frame predicted from a reference frame presented at or
 * after `end`: matroska-test5-short.mkv {0.605, 1.21} lost its 1.208 s frame), the copy would either end early
 * or show that reference frame past `end` (no Matroska element hides a decoded frame, and ffmpeg 5.1 ignores a
 * block's invisible flag): null, and the caller encodes the window again.
 */
async function copyTail(ctx: JobContext, file: string, end: number, mp4: boolean): Promise<Tail | null> {
  // A copy that holds no video packet (a seek that found no keyframe to start from) is no copy: it is
  // encoded again, not refused as a broken source.
  const total = await videoPackets(ctx, file).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    return Number.NaN;
  });
  if (!(total > 0)) return null;
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    [
      ...["-select_streams", "v:0", "-show_entries", "packet=pts_time,duration_time"],
      ...["-read_intervals", `${sec(Math.max(0, end - TAIL_SECONDS))}%`],
      ...["-protocol_whitelist", "file", `file:${file}`],
    ],
    ctx.signal,
  );
  const packets = (probe.packets ?? []) as { pts_time?: string; duration_time?: string }[];
  const times = packets.map((p) => Number(p.pts_time));
  if (!Number.isInteger(total) || packets.length > total || times.some((t) => !Number.isFinite(t)))
    return null;
  // The listing runs to the file's end: its first packet is the copy's packet number total - length.
  const offset = total - packets.length;
  const durations = packets.map((p) => Number(p.duration_time));
  const lasts = (i: number) => times[i]! + Math.max(durations[i]! || 0, 0) > end + 1e-6;
  if (mp4) {
    const kept = times.findLastIndex((t) => t < end - 1e-6) + 1;
    const options = kept < packets.length ? ["-frames:v", String(offset + kept)] : [];
    const editEnd = times.slice(0, kept).some((t, i) => t >= end - 1e-6 || lasts(i));
    return { options, editEnd };
  }
  const firstPast = times.findIndex((t) => t >= end - 1e-6);
  const kept = firstPast < 0 ? packets.length : firstPast;
  let lastIndex = -1;
  for (let i = 0; i < kept; i++) if (lastIndex < 0 || times[i]! > times[lastIndex]!) lastIndex = i;
  const options = firstPast < 0 ? [] : ["-frames:v", String(offset + kept)];
  // A frame shown before `end` that would go with the packets dropped (a B-frame after a reference frame
  // presented at or after `end`): no copy ends exactly at `end`.
  if (firstPast >= 0 && times.slice(firstPast).some((t) => t < end - 1e-6)) return null;
  // The last frame kept is what a player shows until `end`: it is held there even when its own duration ends
  // before (fixture.flv: the 0.400 s frame lasted 16 ms, the next comes at 0.433 s).
  const short = (i: number) => times[i]! + Math.max(durations[i]! || 0, 0) < end - 5e-4;
  return { options, editEnd: lastIndex >= 0 && (lasts(lastIndex) || short(lastIndex)) };
}

/** Pictures decoded from the head of a stream whose every packet claims a keyframe. */
const PICTURES_CHECKED = 16;

/**
 * Whether the first pictures of a video (`inputArgs` names it, seeked or not) are all intra pictures, read
 * from the bitstream (pict_type), not from the container's keyframe flags: true for an intra-only codec
 * (MJPEG), false for an inter codec whose every packet claims a keyframe.
 */
async function intraPictures(ctx: JobContext, inputArgs: string[]): Promise<boolean> {
  // A head that does not decode is not known to be intra: the caller then copies nothing it cannot vouch for.
  const probe = (await runFfprobe(
    ctx.config.binaries.ffprobe,
    [
      ...["-select_streams", "v:0", "-show_entries", "frame=pict_type"],
      ...["-read_intervals", `%+#${PICTURES_CHECKED}`, ...inputArgs],
    ],
    ctx.signal,
  ).catch(() => ({}))) as { frames?: { pict_type?: string }[] };
  const frames = probe.frames ?? [];
  return frames.length > 0 && frames.every((f) => f.pict_type === "I");
}

/**
 * Whether the source's own packets from the keyframe at `start` tell keyframes from predicted frames (some
 * packet is not flagged a keyframe). An MP4 without a sync-sample table (stss) flags every sample a keyframe.
 */
async function sourceFlagsPredicted(ctx: JobContext, input: Input, start: number): Promise<boolean> {
  const video = input.info.video!;
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    [...keyframeProbeArgs(start + input.info.startTime), ...input.args()],
    ctx.signal,
  );
  const flags = (probe.packets ?? []).filter((p) => p.stream_index === video.index).map((p) => p.flags ?? "");
  return flags.some((f) => !f.startsWith("K"));
}

/** Video packets in a file (demuxed, not decoded). */
async function videoPackets(ctx: JobContext, file: string): Promise<number> {
  const probe = await runFfprobe(
    ctx.config.binaries.ffprobe,
    [
      ...["-count_packets", "-select_streams", "v:0", "-show_entries", "stream=nb_read_packets"],
      ...["-protocol_whitelist", "file", `file:${file}`],
    ],
    ctx.signal,
  );
  return Number((probe.streams?.[0] as { nb_read_packets?: string } | undefined)?.nb_read_packets);
}

/** Seeking this far past the keyframe (and shifting back by as much) can never land on the keyframe before it. */
const PAST_KEY = 0.001;

/**
 * Seconds of audio decoded before the cut and dropped: a decoder that starts cold at a seek point outputs a
 * faded first frame (as in audio-trim.ts).
 */
const AUDIO_PREROLL = 0.5;

/** libopus's lookahead, in seconds at every sample rate (312 samples at 48 kHz): its initial padding. */
const OPUS_LOOKAHEAD = 0.0065;

export interface Cut {
  path: string;
  container: Container;
  /** The keyframe the copy starts at, seconds from the source's presented start. */
  start: number;
}

/**
 * The fast cut of [start, end) into the job's output file; null when a copy cannot present exactly what it
 * reports (see the top of this file), and the caller re-encodes.
 */
export async function copyCut(
  ctx: JobContext,
  input: Input,
  presentedStart: number,
  presentedEnd: number,
): Promise<Cut | null> {
  // A file whose first timestamp is negative (an Opus or AAC encoder delay, read as a start of -7 or -21 ms)
  // presents from its time 0: the samples before it are dropped by the decoder, and a player's clock starts at
  // 0. The window counts from there; ffmpeg's -ss and the probes below count from the file's first timestamp.
  const shift = Math.max(0, -input.info.startTime);
  const cut = await copyCutFromFirst(ctx, input, presentedStart + shift, presentedEnd + shift);
  return cut === null ? null : { ...cut, start: Math.max(0, cut.start - shift) };
}

async function copyCutFromFirst(
  ctx: JobContext,
  input: Input,
  askedStart: number,
  end: number,
): Promise<Cut | null> {
  const video = input.info.video!;
  const { audio } = input.info;
  const start = await keyframeAtOrBefore(ctx, input, askedStart);
  const container = copyContainer(input);
  const out = outputPath(ctx, container.ext);
  const videoFile = audio === null ? out : path.join(ctx.dir, `video.${container.ext}`);
  // Seek a hair past the keyframe, and shift the timestamps back by as much: the keyframe lands at 0, not a
  // millisecond before it (where an MP4 edit list would hide it and show the frame after it first).
  // AVI stores no presentation times: a copy of its B-frame MPEG-4 into Matroska failed on packets
  // without one (500; mpeg4-mp3.avi of the media matrix), so they are generated as the demuxer reads.
  const genpts = input.sniffed.demuxer === "avi" ? ["-fflags", "+genpts"] : [];
  // MPEG-TS has no index: its seek lands on the packet just before the time asked, mostly a predicted
  // picture, and a copy starts at the next keyframe, after `start` (none in a file of one keyframe: the copy
  // was empty, and the trim refused). It is read from a point before the keyframe (inexactSeekPoint), its
  // times shifted so that the keyframe lands at 0: a copy writes nothing before its first keyframe at or
  // after 0.
  const inexact = await inexactSeekPoint(ctx, input, start);
  const seekTo =
    inexact === null
      ? ["-itsoffset", sec(PAST_KEY), "-ss", sec(start + PAST_KEY)]
      : ["-itsoffset", sec(inexact - start), ...(inexact > 0 ? ["-ss", sec(inexact)] : [])];
  const seekedSource = input.args([...genpts, ...seekTo]);
  const copyVideo = (tailArgs: string[]) =>
    ctx
      .runFfmpeg(
        [
          ...seekedSource,
          ...["-t", sec(end - start), "-map", `0:${video.index}`, "-an", "-sn", "-dn", "-c", "copy"],
          ...tailArgs,
          // Matroska shifts negative timestamps to 0 by default, which would hide that the seek landed on an
          // earlier keyframe (a file without cues for it): kept negative, they are seen below.
          ...(container.muxer === "mp4" ? trimMuxOptions(container) : ["-avoid_negative_ts", "disabled"]),
          ...["-f", container.muxer, videoFile],
        ],
        { signal: ctx.signal, durationSec: end - start, onProgress: ctx.setProgress },
      )
      .catch((err: unknown) => preferSourceError(input, err));
  const mp4 = container.muxer === "mp4";
  // Matroska/WebM: where a player stops showing the window's video, `end` or the source video's own end
  // before it (fixture.webm's ends at 0.045 s, its audio at 0.072): the last frame is held until there.
  const shown = mp4 ? null : await videoEnd(ctx, input, end);
  const until = Math.min(end, shown?.end ?? end);
  // A window that starts where the video has already ended (a file cut short whose header states more:
  // fixture2.mkv {226.41, 679.229} of 1.7 s) shows nothing: the accurate trim's refusal, not a copy of the
  // last GOP.
  if (shown !== null && shown.end <= askedStart) {
    throw emptyOutput(input, "the source has no decodable video frame between start and end");
  }
  await copyVideo([]);
  // ffmpeg's `-t` cuts a copy by decode time: copied again without what it shows at or after `end`.
  const tail = await copyTail(ctx, videoFile, until - start, mp4);
  if (tail === null) return null;
  if (tail.options.length > 0) await copyVideo(tail.options);
  const copy = await copiedVideo(ctx, videoFile, end - start);
  if (copy === null || copy.span <= 0) return null;
  // A copy whose frames run past `end` is ended there (below): by its edit list (MP4), by its last frame's
  // BlockDuration (Matroska, WebM).
  const span = !tail.editEnd ? copy.span : mp4 ? Math.min(copy.span, end - start) : until - start;
  // Written last, on the file sent: a remux would write ffmpeg's own edit list, or no block duration.
  const endAt = mp4 ? endVideoAt : endMatroskaVideoAt;
  const ended = async (): Promise<Cut | null> =>
    !tail.editEnd || (await endAt(out, until - start)) ? { path: out, container, start } : null;
  // Every packet of the copy claims a keyframe: fine for an intra-only codec; for an inter codec the flags
  // lie, and a player seeking in the output would start decoding from a predicted picture.
  let packetsFromSource: number | null = null;
  if (copy.everyKey && !(await intraPictures(ctx, ["-protocol_whitelist", "file", `file:${videoFile}`]))) {
    // The source's own flags lie (an MP4 without stss): neither the start nor the output's seek points can
    // be trusted, and no muxer option marks them anew. Re-encoded.
    if (!(await sourceFlagsPredicted(ctx, input, start))) return null;
    // The copy lost flags the source has: ffmpeg 5.1's Matroska demuxer reads every H.263 block as a
    // keyframe though the file marks them right. The output takes its video from the source instead.
    packetsFromSource = await videoPackets(ctx, videoFile);
    if (!Number.isInteger(packetsFromSource) || packetsFromSource <= 0) return null;
  }
  const videoFromSource = packetsFromSource !== null;
  if (audio === null) return ended();

  // From the video's seek point at the latest: a transport stream's audio is muxed up to 0.7 s away from
  // the video of the same time, and its seek is inexact.
  const seek = Math.max(0, Math.min(start - AUDIO_PREROLL, inexact ?? Number.POSITIVE_INFINITY));
  // Each sample at its source time less the keyframe's, not the first one kept at 0: an audio stream that
  // starts after the video (matroska-test5-short.mkv's, at 12 ms) starts as late in the output.
  const { codec: encoding, frame } = audioEncoding(input, container);
  // libopus starts its packets 6.5 ms early (its lookahead, declared as the track's CodecDelay), and ffmpeg
  // 5.1's Matroska muxer writes that as a negative time and so shifts every stream by it: the copied video
  // began 7 ms late (av1-opus.webm). Its input is put 6.5 ms late instead: its first packet is at 0, and a
  // decoder that drops the declared delay presents the first sample at 0.
  const delay = container.muxer !== "mp4" && encoding.includes("libopus") ? OPUS_LOOKAHEAD : 0;
  // libvorbis's first packet decodes to no sample (it only primes the overlap) and is stamped before 0 by its
  // length (2.9 ms at 44.1 kHz); the next one decodes to the first sample fed. ffmpeg 5.1's Matroska muxer
  // shifted every stream by that much, so the audio began 3 ms late (bbb-trailer-vp8.webm): the first packet
  // is kept at its negative time instead (nothing is presented before 0), and the padding libvorbis adds
  // to its last block (up to a block: 19 ms there) declared below.
  const vorbis = container.muxer !== "mp4" && encoding.includes("libvorbis");
  const from = sec(start - seek);
  const audioCut = `atrim=start=${from}:duration=${sec(span)},asetpts=PTS-${from}/TB+${sec(delay)}/TB`;
  // AMR: its samples read from a copy stamped by them (`seek` counted from the player's 0 there).
  const amr = await amrAudioInput(ctx, input, seek - Math.max(0, -input.info.startTime));
  const audioSource = amr ?? input.args(seek === 0 ? [] : ["-ss", sec(seek)]);
  const audioStream = amr === null ? audio.index : 0;
  // AC-3 in MP4: its encoder's delay hidden by the edit list, and no padding after the window (which the
  // edit list declared as audio: h264-ac3.mp4 of the media matrix ran 17 ms past `end`). The samples are
  // counted first, by a decode-only pass (this codec only).
  const aligned =
    frame === undefined
      ? null
      : await countAudio(ctx, input, audioSource, ["-map", `0:${audioStream}`, "-af", audioCut], null).then(
          ({ samples, first }) => (samples > 0 ? frameAligned(frame, samples, first) : null),
        );
  const audioFilters = [audioCut, ...(aligned?.filters ?? [])].join(",");
  await ctx
    .runFfmpeg(
      [
        ...(videoFromSource
          ? seekedSource
          : [
              ...["-f", container.muxer === "mp4" ? "mov" : "matroska"],
              ...["-protocol_whitelist", "file", "-i", `file:${videoFile}`],
            ]),
        ...audioSource,
        ...["-map", videoFromSource ? `0:${video.index}` : "0:v:0", "-map", `1:${audioStream}`],
        // The same packets the measured copy holds.
        ...(videoFromSource ? ["-frames:v", String(packetsFromSource), ...tail.options] : []),
        ...["-sn", "-dn", "-c:v", "copy"],
        ...withAudioFilter(audioFilters, encoding),
        ...(aligned?.options ?? []),
        ...trimMuxOptions(container),
        ...(vorbis ? ["-avoid_negative_ts", "disabled"] : []),
        ...["-f", container.muxer, out],
      ],
      { signal: ctx.signal, durationSec: span },
    )
    .catch((err: unknown) => preferSourceError(input, err));
  if (vorbis && !(await declareVorbisPadding(ctx, input, audioSource, audioStream, audioCut, out, span))) {
    return null;
  }
  return ended();
}

/**
 * Declares the padding libvorbis added after the samples fed to it (`audioCut` of stream `stream` of
 * `sourceArgs`) in the Matroska/WebM `file` by a DiscardPadding on its last block, so that the audio decodes
 * to exactly the samples cut (ending at `end` seconds): the samples fed and those the file decodes to are
 * counted, each by a decode. False when the file could not be edited or decodes to fewer samples than fed.
 */
async function declareVorbisPadding(
  ctx: JobContext,
  input: Input,
  sourceArgs: string[],
  stream: number,
  audioCut: string,
  file: string,
  end: number,
): Promise<boolean> {
  const why = "the source has no decodable audio between start and end";
  const fed = await countSamples(ctx, input, sourceArgs, ["-map", `0:${stream}`, "-af", audioCut], why);
  const decoded = await countSamples(
    ctx,
    input,
    ["-protocol_whitelist", "file", "-i", `file:${file}`],
    ["-map", "0:a:0"],
    why,
  );
  if (decoded === fed) return true;
  return decoded > fed && discardMatroskaAudioEnd(file, decoded - fed, input.info.audio!.sampleRate, end);
}
