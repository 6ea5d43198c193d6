/**
 * video.watermark: a logo (PNG/WebP/JPEG, alpha respected) or a text mark (drawn by the Worker, sent as the
 * job's `text_mark` PNG), placed at one of nine positions, optionally only between `start` and `end`. Output: H.264/AAC MP4 with faststart; AAC
 * audio is copied, other audio re-encoded.
 */
import { stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { type JobParams, MARK_DEFAULTS, type Position } from "@p6/contract/params";
import { EngineError, invalid, unsupported } from "../protocol.ts";
import { LIMITS } from "../security/limits.ts";
import { amrAudioInput } from "./amr-cut.ts";
import {
  audioTiming,
  exactAacArgs,
  fragmentedTail,
  lastPacketLasts,
  restampedAacInput,
  STAMP_FROM_FIRST,
  statedAudioEnd,
} from "./audio-encode.ts";
import { CONTAINERS } from "./containers.ts";
import {
  checkedImageHeader,
  type Input,
  imageInputArgs,
  type JobContext,
  type JobExtras,
  openInput,
  outputPath,
  type PreparedJob,
  preferSourceError,
  type TextMark,
} from "./job.ts";
import { joinAll } from "./join.ts";
import { playerLead } from "./media-info.ts";
import { outputInfo } from "./output-info.ts";
import { roundSec, sec } from "./params.ts";
import { KEEP_FRAME_TIMES, lastFrameLasts, reencodedSize, squarePixels } from "./reencode.ts";
import { earlyFirstAudio, videoEnd } from "./source-timing.ts";

/** The mark and where it goes: shared by video.watermark and image.watermark. */
export interface MarkParams {
  mark: { kind: "image"; url: string; scale: number } | { kind: "text"; text: string; fontSize?: number };
  position: Position;
  margin: number;
  opacity: number;
}

interface WatermarkParams extends MarkParams {
  start: number | undefined;
  end: number | undefined;
}

/** Width and height from a PNG's IHDR (checked by the wire's TextMarkSchema). */
const pngSize = (png: Buffer) => ({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) });

/**
 * The mark and its placement from either watermark operation's params (validated by their contract schemas,
 * which refuse params that do not apply to the mark on video and fill in the defaults on images), with the
 * defaults applied.
 */
export function markOf(p: JobParams<"video.watermark"> | JobParams<"image.watermark">): MarkParams {
  const mark: MarkParams["mark"] =
    p.watermark_url !== undefined
      ? { kind: "image", url: p.watermark_url, scale: p.scale ?? MARK_DEFAULTS.scale }
      : { kind: "text", text: p.text ?? "", ...(p.font_size === undefined ? {} : { fontSize: p.font_size }) };
  return {
    mark,
    position: p.position ?? MARK_DEFAULTS.position,
    margin: p.margin ?? MARK_DEFAULTS.margin,
    opacity: p.opacity ?? MARK_DEFAULTS.opacity,
  };
}

const PLACES: Record<Position, ["top" | "middle" | "bottom", "left" | "center" | "right"]> = {
  "top-left": ["top", "left"],
  top: ["top", "center"],
  "top-right": ["top", "right"],
  left: ["middle", "left"],
  center: ["middle", "center"],
  right: ["middle", "right"],
  "bottom-left": ["bottom", "left"],
  bottom: ["bottom", "center"],
  "bottom-right": ["bottom", "right"],
};

/** x/y expressions for a position; `W`/`H` are the frame (overlay and drawtext alike), `w`/`h` the mark. */
function placement(position: Position, margin: number, w: string, h: string): [string, string] {
  const [vertical, horizontal] = PLACES[position];
  const x = horizontal === "left" ? `${margin}` : horizontal === "right" ? `W-${w}-${margin}` : `(W-${w})/2`;
  const y = vertical === "top" ? `${margin}` : vertical === "bottom" ? `H-${h}-${margin}` : `(H-${h})/2`;
  return [x, y];
}

/** Two-level escaping of a filter option value inside a filtergraph (ffmpeg-filters "Notes on filtergraph escaping"). */
export function escapeFilterValue(value: string): string {
  const level1 = value.replace(/[\\':]/g, "\\$&");
  return level1.replace(/[\\'[\],;]/g, "\\$&");
}

const fixed = (n: number) => n.toFixed(4).replace(/\.?0+$/, "") || "0";

export interface Logo {
  path: string;
  demuxer: string;
  /** ffmpeg filters that turn it as its EXIF orientation says ("" for none; orientFilters). */
  orient: string;
}

/**
 * ffmpeg filters that show an image as its EXIF orientation says, each ending in a comma (ffmpeg does not
 * apply EXIF orientation to images; our encoders write no EXIF, so outputs need none). 5–8 swap the axes.
 */
export function orientFilters(orientation: number): string {
  const filters: Record<number, string> = {
    2: "hflip,",
    3: "hflip,vflip,",
    4: "vflip,",
    5: "transpose=cclock_flip,",
    6: "transpose=clock,",
    7: "transpose=clock_flip,",
    8: "transpose=cclock,",
  };
  return filters[orientation] ?? "";
}

/**
 * Downloads the logo through the guarded fetcher; its header is checked against the image limits, and its data
 * must decode whole (decodedLogo).
 */
export async function fetchLogo(ctx: JobContext, url: string): Promise<Logo> {
  const { source, sniffed } = await openInput(ctx, url, "params.watermark_url", LIMITS.maxLogoBytes, "logo");
  if (sniffed === null || sniffed.kind !== "image") {
    throw unsupported("watermark_url does not point to a PNG, JPEG or WebP image");
  }
  const header = await checkedImageHeader(source, sniffed.format, "the watermark image");
  await source.complete();
  const logo = { path: source.path, demuxer: sniffed.demuxer, orient: orientFilters(header.orientation) };
  return decodedLogo(ctx, logo);
}

/** An image decoder's own error line in ffmpeg's stderr (`[webp @ 0x…] invalid color cache bits`). */
export const IMAGE_DECODER_LINE = /^\[(png|apng|mjpeg|webp) @ /m;

/**
 * The logo, once it has decoded whole (one frame, -xerror). A video's run cannot tell: ffmpeg's overlay passes
 * the frames through unmarked when the logo yields none, and its decoders grey what a truncated image lacks,
 * exiting 0 either way (a 200 with the video unmarked; image.watermark's -xerror does not stop them either).
 */
async function decodedLogo(ctx: JobContext, logo: Logo): Promise<Logo> {
  const args = ["-xerror", ...imageInputArgs(logo.path, logo.demuxer), "-frames:v", "1", "-f", "null", "-"];
  const refused = (internal: string | undefined) =>
    unsupported("the watermark image is truncated or cannot be decoded", internal);
  const stderr = await ctx.runFfmpeg(args, { signal: ctx.signal }).catch((err: unknown) => {
    if (ctx.signal.aborted || !(err instanceof EngineError)) throw err;
    throw refused(err.internal);
  });
  // A decoder's error line with exit 0: a PNG whose data ends before its last row ("IEND without all
  // image"), a JPEG cut short ("overread 8"), each still a frame to ffmpeg.
  if (IMAGE_DECODER_LINE.test(stderr)) throw refused(stderr);
  return logo;
}

/**
 * The one implementation of a mark, for videos and images: the filtergraph that draws it on the frame
 * labelled `frame` (`width`×`height`). A logo is input 1 (its input arguments are returned to add after
 * the source's), scaled to `scale` of the frame width, its alpha times `opacity`, overlaid with
 * `overlayFormat`; a text mark is the Worker's bitmap (`textMark`), overlaid the same way at its own size (or
 * scaled to the asked font size). The graph's last output is unlabelled; `enable` limits it in time.
 */
export async function markGraph(
  ctx: JobContext,
  p: MarkParams,
  frame: { label: string; width: number; height: number },
  logo: Promise<Logo> | null,
  textMark: TextMark | undefined,
  options: { overlayFormat: "auto" | "rgb"; enable?: string },
): Promise<{ inputs: string[]; graph: string }> {
  const enable = options.enable ?? "";
  if (p.mark.kind === "image") {
    const mark = await logo!;
    const width = Math.max(1, Math.round(p.mark.scale * frame.width));
    const [x, y] = placement(p.position, p.margin, "w", "h");
    return {
      inputs: imageInputArgs(mark.path, mark.demuxer),
      graph:
        `[1:v]${mark.orient}scale=${width}:-1,format=rgba,colorchannelmixer=aa=${fixed(p.opacity)}[wm];` +
        `[${frame.label}][wm]overlay=x=${x}:y=${y}:format=${options.overlayFormat}${enable}`,
    };
  }
  // A text mark: the Worker's bitmap, opacity already in its alpha, scaled only when it was drawn at another
  // size than this frame's (video without font_size: the Worker does not know the frame height).
  const text = textMark!;
  if (text.png === undefined) return { inputs: [], graph: `[${frame.label}]null` };
  const markFile = path.join(ctx.dir, "text-mark.png");
  await writeFile(markFile, text.png);
  const size = p.mark.fontSize ?? Math.max(1, Math.round(frame.height * 0.05));
  const drawn = pngSize(text.png);
  const scaled = (n: number) => Math.max(1, Math.round((n * size) / text.fontSize));
  // Scaled premultiplied: straight alpha would pull the glyphs' edges toward the transparent pixels' black.
  const resize =
    size === text.fontSize
      ? ""
      : `format=rgba,premultiply=inplace=1,scale=${scaled(drawn.width)}:${scaled(drawn.height)}:flags=lanczos,unpremultiply=inplace=1,`;
  const [x, y] = placement(p.position, p.margin, "w", "h");
  return {
    inputs: imageInputArgs(markFile, "png_pipe"),
    graph: `[1:v]${resize}format=rgba[wm];[${frame.label}][wm]overlay=x=${x}:y=${y}:format=${options.overlayFormat}${enable}`,
  };
}

async function run(
  ctx: JobContext,
  input: Input,
  p: WatermarkParams,
  logo: Promise<Logo> | null,
  textMark: TextMark | undefined,
) {
  const { video, audio, duration } = input.info;
  if (video === null) throw unsupported("the source has no video stream");
  if (p.start !== undefined && duration !== null && p.start >= duration) {
    throw invalid("params.start", `start (${p.start} s) is beyond the video's duration (${duration} s)`);
  }
  const enable =
    p.start === undefined && p.end === undefined
      ? ""
      : `:enable='between(t,${sec(p.start ?? 0)},${sec(p.end ?? 1e9)})'`;
  // The mark goes on the picture as it is shown: square pixels at the display size, before it is drawn.
  const square = squarePixels(video);
  const frame = { label: square.length > 0 ? "shown" : `0:${video.index}`, ...reencodedSize(video) };
  const copyAudio = audio?.codec === "aac";
  const [marked, end, early, timing, tail] = await joinAll([
    markGraph(ctx, p, frame, logo, textMark, { overlayFormat: "auto", enable }),
    // Measurements that only refine the output: a source ffprobe cannot list is encoded as before.
    videoEnd(ctx, input).catch(() => null),
    copyAudio ? earlyFirstAudio(ctx, input, audio.index).catch(() => null) : null,
    copyAudio ? audioTiming(ctx, input, audio.index) : null,
    copyAudio ? fragmentedTail(ctx, input, audio.index) : null,
  ]);
  // The copied AAC's packets: the first moved after a gap it sits before, the last lasting as a fragmented
  // source's tables say (fragmentedTail).
  const copySetts = [
    ...(early === null ? [] : [`ts=if(eq(N\\,0)\\,TS\\,TS-${early.gapTicks})`]),
    ...(tail === null ? [] : [lastPacketLasts(tail)]),
  ];
  // Output times are a player's: a source's time 0, not its earliest timestamp where that is below 0
  // (playerLead; ffmpeg would start there). After a first AAC packet placed before a gap (source-timing.ts)
  // the audio follows on without the gap, its samples from 0 as they decode; the video stays where the
  // source presents it (fragmented.mp4's from 0.080 s).
  const lead = playerLead(input.info);
  const sourceArgs = input.args(lead > 0 ? ["-itsoffset", sec(-lead)] : []);
  const inputs = [...sourceArgs, ...marked.inputs];
  // A frame decoded after the last one the source presents is not shown: a B-frame AVI's decoder gives its
  // last picture once the stream has ended, with no time, and ffmpeg placed it at the video's end, one frame
  // past it (mpeg4-mp3.avi of the media matrix). The video ends with the source's.
  const shownOnly = end === null ? "" : `,trim=end=${sec((end.last + end.end) / 2 - lead)}`;
  const graph = `${square.length > 0 ? `[0:${video.index}]${square.join(",")}[shown];` : ""}${marked.graph}${shownOnly},format=yuv420p[v]`;
  // The last frame lasts as in the source (a variable-rate recording's is often far longer than a frame at
  // the graph's rate), its frames neither repeated nor dropped; a source whose last frame lasts one frame at
  // that rate within a millisecond already ends so.
  const holdLast =
    end !== null && Math.abs(end.end - end.last - (end.graphRate > 0 ? 1 / end.graphRate : 0)) > 1e-3
      ? lastFrameLasts(end.last - lead, end.end - end.last)
      : [];
  const out = outputPath(ctx, "mp4");
  // AAC is copied: restamped by its samples where its timestamps do not describe them (restampedAacInput,
  // which also closes the gap after an early first packet), else with an early first packet moved. Other
  // audio is encoded by its samples, aligned so that it decodes to exactly them (exactAacArgs: ffmpeg 5.1
  // played the last frame's declared padding, 1.536 s for fixture-mjpeg.mov's 1.5 s at 8 kHz).
  const restamped =
    audio === null || timing === null || timing.first === null
      ? null
      : await restampedAacInput(
          ctx,
          input,
          audio,
          timing,
          sourceArgs,
          timing.first - input.info.startTime - lead,
        );
  // AMR: its samples read from a copy stamped by them (amr-cut.ts), encoded from there.
  const amr = restamped === null && audio !== null ? await amrAudioInput(ctx, input, 0) : null;
  const audioInput = restamped ?? amr ?? [];
  // Audio encoded to AAC ends where an MP4 source states it does (its edit list: Opus's and AC-3's end
  // padding, which ffmpeg 5.1 decodes; av1-opus.mp4 of the media matrix decoded 14 ms more), read only then.
  const encodedAudioFilters = async () => {
    const stated = audio === null ? null : await statedAudioEnd(ctx, input, audio.index);
    return stated === null ? [STAMP_FROM_FIRST] : [STAMP_FROM_FIRST, `atrim=end=${sec(stated)}`];
  };
  // That M4A is the input after the source and the mark (a text mark without a PNG has none).
  const audioInputIndex = marked.inputs.length > 0 ? 2 : 1;
  const audioArgs =
    audio === null
      ? []
      : restamped !== null
        ? ["-map", `${audioInputIndex}:0`, "-c:a", "copy"]
        : amr !== null
          ? [
              ...["-map", `${audioInputIndex}:0`],
              ...(await exactAacArgs(ctx, input, amr, { ...audio, index: 0 }, [STAMP_FROM_FIRST], "160k")),
            ]
          : [
              ...["-map", `0:${audio.index}`],
              ...(copyAudio
                ? [
                    "-c:a",
                    "copy",
                    ...(copySetts.length === 0 ? [] : ["-bsf:a", `setts=${copySetts.join(":")}`]),
                  ]
                : await exactAacArgs(ctx, input, sourceArgs, audio, await encodedAudioFilters(), "160k")),
            ];
  await ctx
    .runFfmpeg(
      [
        ...inputs,
        ...audioInput,
        ...["-filter_complex", graph, "-map", "[v]", ...audioArgs, "-sn", "-dn"],
        ...["-c:v", "libx264", "-preset", ctx.config.x264Preset, "-crf", "20", "-pix_fmt", "yuv420p"],
        ...KEEP_FRAME_TIMES,
        ...holdLast,
        ...CONTAINERS.mp4.options,
        ...["-f", "mp4", out],
      ],
      { signal: ctx.signal, durationSec: duration ?? 0, onProgress: ctx.setProgress },
    )
    .catch((err: unknown) => preferSourceError(input, err));
  const { size } = await stat(out);
  const info = await outputInfo(out, "mp4", ctx.config.binaries.ffprobe, ctx.signal);
  return {
    kind: "file" as const,
    path: out,
    contentType: CONTAINERS.mp4.contentType,
    result: {
      format: "mp4" as const,
      size_bytes: size,
      width: info.width ?? video.width,
      height: info.height ?? video.height,
      duration: roundSec(info.duration ?? duration ?? 0),
    },
  };
}

/** A text mark needs the Worker's bitmap; refused before the job takes a slot. */
export function needTextMark(p: MarkParams, extras: JobExtras): TextMark | undefined {
  if (p.mark.kind === "text" && extras.textMark === undefined)
    throw invalid("text_mark", "a text watermark needs text_mark, the mark drawn by the Worker");
  return p.mark.kind === "text" ? extras.textMark : undefined;
}

export function videoWatermark(p: JobParams<"video.watermark">, extras: JobExtras = {}): PreparedJob {
  const params: WatermarkParams = { ...markOf(p), start: p.start, end: p.end };
  const textMark = needTextMark(params, extras);
  return {
    probeArgs: [],
    run: (ctx, input) => {
      // Fetched only once the source has proved to be a video; a failure surfaces when the logo is awaited.
      const logo = params.mark.kind === "image" ? fetchLogo(ctx, params.mark.url) : null;
      logo?.catch(() => {});
      return run(ctx, input, params, logo, textMark);
    },
  };
}
