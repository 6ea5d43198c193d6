/**
 * image.watermark: the Worker's image.watermark for images too large for its WASM codecs (above 2.2
 * megapixels, up to the 16.8 MP limit). Params are exactly the Worker's (src/images/params.ts); the mark is
 * drawn by the same filtergraph as video.watermark (markGraph), a text mark being the Worker's bitmap. Input: a PNG, JPEG or WebP whose header is
 * checked against the limits before it is decoded; output: the image in the asked format (`same` = the
 * input's), alpha kept for PNG/WebP, JPEG flattened on white, the source's RGB colour profile kept.
 */
import { readFile, stat, writeFile } from "node:fs/promises";
import { hasProfile, readRgbProfile, withProfile } from "@p6/contract/icc";
import { jpegFrame, unsupportedJpegCoding } from "@p6/contract/jpeg-frame";
import type { JobParams } from "@p6/contract/params";
import { shownSize } from "@p6/contract/sniff";
import { EngineError, unsupported } from "../protocol.ts";
import { CONTAINERS } from "./containers.ts";
import { imageEncoderArgs, imagePixelFormat } from "./extract-cover.ts";
import {
  type ImageInput,
  imageInputArgs,
  type JobContext,
  type JobExtras,
  outputPath,
  type PreparedImageJob,
  type TextMark,
} from "./job.ts";
import { outputInfo } from "./output-info.ts";
import {
  fetchLogo,
  IMAGE_DECODER_LINE,
  type Logo,
  type MarkParams,
  markGraph,
  markOf,
  needTextMark,
  orientFilters,
} from "./watermark.ts";

const FORMATS = ["same", "jpeg", "png", "webp"] as const;

interface ImageWatermarkParams extends MarkParams {
  format: (typeof FORMATS)[number];
  quality: number;
}

async function run(
  ctx: JobContext,
  input: ImageInput,
  p: ImageWatermarkParams,
  logo: Promise<Logo> | null,
  textMark: TextMark | undefined,
) {
  const source = await readFile(input.source.path);
  const frame = input.format === "jpeg" ? jpegFrame(source) : null;
  // Refused by name before ffmpeg would call it "truncated or cannot be decoded".
  const coding = frame && unsupportedJpegCoding(frame);
  if (coding) throw unsupported(`the image is ${coding}, which is not supported`);
  const { alpha, orientation } = input.header;
  const { width, height } = shownSize(input.header);
  // The source's colour profile is written by keepProfile below (RGB ones only), not by ffmpeg, which would
  // also carry a CMYK profile into RGB output and drops every profile from WebP. The filter is added only for
  // a source with a profile: ffmpeg builds older than 4.4 (the npm-shipped one) have no ICC_PROFILE type.
  const dropProfile = (await hasProfile(input.format, source))
    ? "sidedata=mode=delete:type=ICC_PROFILE,"
    : "";
  const orient = `${dropProfile}${orientFilters(orientation)}`;
  const format = p.format === "same" ? input.format : p.format;
  const keepAlpha = alpha && format !== "jpeg";
  // The mark is drawn in RGB (no chroma subsampling of the whole image before the encoder's own).
  const base = keepAlpha
    ? `[0:v]${orient}format=rgba[base];`
    : alpha
      ? // JPEG has no alpha: flatten on white first (the same as flattening after drawing the mark).
        `color=c=white:s=${width}x${height},format=rgb24[white];[0:v]${orient}format=rgba[fg];` +
        "[white][fg]overlay=format=rgb:shortest=1[base];"
      : `[0:v]${orient}format=rgb24[base];`;
  const marked = await markGraph(ctx, p, { label: "base", width, height }, logo, textMark, {
    overlayFormat: "rgb",
  });
  const graph = `${base}${marked.graph},format=${imagePixelFormat(format, keepAlpha)}[out]`;
  const container = CONTAINERS[format];
  const out = outputPath(ctx, container.ext);
  const args = [
    // A decoding error in the image or the logo ends the run: without it ffmpeg 5.1 may write an empty image,
    // or the image without its mark, and exit 0.
    "-xerror",
    ...imageInputArgs(input.source.path, input.demuxer),
    ...marked.inputs,
    ...["-filter_complex", graph, "-map", "[out]", "-frames:v", "1"],
    ...imageEncoderArgs(format, p.quality, keepAlpha),
    ...["-f", container.muxer, out],
  ];
  await ctx.runFfmpeg(args, { signal: ctx.signal }).catch((err: unknown) => {
    throw undecodable(err);
  });
  await keepProfile(input.format, source, format, out);
  const { size } = await stat(out);
  const info = await outputInfo(out, format, ctx.config.binaries.ffprobe, ctx.signal);
  ctx.setProgress(1);
  return {
    kind: "file" as const,
    path: out,
    contentType: container.contentType,
    result: { format, size_bytes: size, width: info.width ?? width, height: info.height ?? height },
  };
}

/**
 * A run ended by -xerror names only the decoder's own complaint (`[webp @ 0x…] invalid color cache bits`),
 * which failure() does not know: an image decoder's line makes it the 415 its inputs deserve.
 */
function undecodable(err: unknown): unknown {
  if (err instanceof EngineError && err.code === "INTERNAL" && IMAGE_DECODER_LINE.test(err.internal ?? "")) {
    return unsupported("the image or the watermark image is truncated or cannot be decoded", err.internal);
  }
  return err;
}

/** Writes the source's RGB colour profile into the output (icc.ts), as the Worker does. */
async function keepProfile(
  sourceFormat: ImageInput["format"],
  source: Uint8Array,
  format: ImageInput["format"],
  out: string,
): Promise<void> {
  const profile = await readRgbProfile(sourceFormat, source);
  if (profile) await writeFile(out, await withProfile(format, await readFile(out), profile));
}

export function imageWatermark(p: JobParams<"image.watermark">, extras: JobExtras = {}): PreparedImageJob {
  const params: ImageWatermarkParams = { ...markOf(p), format: p.format, quality: p.quality };
  const textMark = needTextMark(params, extras);
  return {
    kind: "image",
    run: (ctx, input) => {
      const logo = params.mark.kind === "image" ? fetchLogo(ctx, params.mark.url) : null;
      logo?.catch(() => {});
      return run(ctx, input, params, logo, textMark);
    },
  };
}
