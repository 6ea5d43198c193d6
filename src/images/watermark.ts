import { readRgbProfile, withProfile } from "@p6/contract/icc";
import { type ImageWatermarkParams, ImageWatermarkParamsSchema } from "@p6/contract/params";
import { decodeImage, encodeImage } from "./codecs";
import { compositeOver, flattenOnWhite, placeMark } from "./composite";
import { DecodeLimitError, ForEngineError, ImageInputError, UnsupportedCodingError } from "./errors";
import {
  describeUnreadable,
  type ImageFormat,
  type ImageHeader,
  MAX_IMAGE_BYTES,
  MAX_IMAGE_PIXELS,
  readImageHeader,
} from "./header";
import { applyOrientation, shownSize } from "./orientation";
import { resizeImage } from "./resize";
import type { Rgba } from "./rgba";
import { defaultFontSize, renderMark } from "./text";

/** Where a watermark's time went (decode, composite, encode); Server-Timing reports it (src/http/timing.ts). */
export type PhaseTimer = { add(phase: string, ms: number): void };

export type ImageWatermarkResult = {
  bytes: Uint8Array;
  format: ImageFormat;
  contentType: string;
  width: number;
  height: number;
};

/**
 * image.watermark: draws a logo (`logo`, the bytes fetched from params.watermark_url) or a text mark (drawn
 * by src/text/, fonts from `env`) onto `base` and encodes the result. Both images are checked from their
 * headers before anything is decoded, and the work is ordered so that peaks do not add up: the logo is
 * decoded and shrunk (or the text drawn) first, then the base is decoded once and blended in place, then
 * encoded. Throws ImageInputError for inputs the client must fix (unsupported, undecodable, too large),
 * TextMarkError for text it cannot draw, and ForEngineError for valid inputs the media engine is to watermark
 * instead (see codecs.ts). `timing` gets the time of each phase: decode (the logo's too, and its resizing or the
 * text's drawing), composite, encode (the ICC profile's copy included).
 */
export async function watermarkImage(
  base: Uint8Array,
  params: ImageWatermarkParams,
  logo?: Uint8Array,
  env: { FONTS?: R2Bucket } = {},
  timing?: PhaseTimer,
): Promise<ImageWatermarkResult> {
  let phaseStart = performance.now();
  const phase = (name: string) => {
    const now = performance.now();
    timing?.add(name, now - phaseStart);
    phaseStart = now;
  };
  const p = ImageWatermarkParamsSchema.parse(params);
  const baseHeader = checkHeader(base, "image");
  if (p.text === undefined && !logo)
    throw new TypeError("watermarkImage: watermark_url needs the logo bytes");
  const logoHeader = p.text === undefined && logo ? checkHeader(logo, "watermark image") : undefined;

  let mark: Rgba | undefined;
  if (logo && logoHeader) {
    const decoded = await decode(logoHeader, logo, "watermark image");
    const width = Math.max(1, Math.round(p.scale * shownSize(baseHeader).width));
    const height = Math.max(1, Math.round((decoded.height * width) / decoded.width));
    mark =
      width === decoded.width && height === decoded.height ? decoded : resizeImage(decoded, width, height);
  } else if (p.text !== undefined && p.opacity > 0) {
    // Opacity and the colour's alpha are in the bitmap; it is placed by its ink bounds.
    const size = p.font_size ?? defaultFontSize(shownSize(baseHeader).height);
    mark = await renderMark({ ...p, text: p.text }, size, env);
  }
  const markOpacity = logo ? p.opacity : 1;

  const image = await decode(baseHeader, base, "image");
  phase("decode");
  if (p.opacity > 0 && mark) {
    const { x, y } = placeMark(p.position, p.margin, image, mark);
    compositeOver(image, mark, x, y, markOpacity);
  }
  mark = undefined;

  const format = p.format === "same" ? baseHeader.format : p.format;
  if (format === "jpeg") flattenOnWhite(image);
  phase("composite");
  const encoded = await encodeImage(image, format, p.quality);
  // The base's RGB colour profile goes with its pixels (a Display P3 photo stays P3); the mark is drawn in
  // the base's colour space as it is.
  const profile = await readRgbProfile(baseHeader.format, base);
  const bytes = profile ? await withProfile(format, encoded, profile) : encoded;
  phase("encode");
  return { bytes, format, contentType: `image/${format}`, width: image.width, height: image.height };
}

function checkHeader(bytes: Uint8Array, label: string): ImageHeader {
  const header = readImageHeader(bytes);
  if (!header) {
    const what = describeUnreadable(bytes);
    throw new ImageInputError(
      "CONTENT_TYPE_UNSUPPORTED",
      what
        ? `The ${label} is ${what}; PNG, JPEG and WebP are supported.`
        : `The ${label} is not a PNG, JPEG or WebP file.`,
    );
  }
  if (header.animated)
    // Refused rather than flattened to its first frame without a word.
    throw new ImageInputError(
      "CONTENT_TYPE_UNSUPPORTED",
      `The ${label} is an animated ${header.format === "png" ? "PNG (APNG)" : "WebP"}; animation is not supported, only still images.`,
    );
  const pixels = header.width * header.height;
  if (pixels > MAX_IMAGE_PIXELS) {
    throw new ImageInputError(
      "REQUEST_BODY_TOO_LARGE",
      `The ${label} is ${header.width}×${header.height} (${(pixels / 1e6).toFixed(1)} megapixels); the limit is ${MAX_IMAGE_PIXELS / 1e6} megapixels.`,
    );
  }
  if (bytes.length > MAX_IMAGE_BYTES)
    throw new ImageInputError("REQUEST_BODY_TOO_LARGE", `The ${label} is larger than the 25 MiB limit.`);
  return header;
}

async function decode(header: ImageHeader, bytes: Uint8Array, label: string): Promise<Rgba> {
  let image: Rgba;
  try {
    image = await decodeImage(header.format, bytes);
  } catch (error) {
    if (error instanceof DecodeLimitError)
      throw new ImageInputError(error.code, `The ${label} ${error.message}`);
    if (error instanceof ForEngineError) throw error;
    if (error instanceof UnsupportedCodingError)
      throw new ImageInputError(
        "CONTENT_TYPE_UNSUPPORTED",
        `The ${label} is ${error.what}, which is not supported.`,
      );
    throw new ImageInputError("CONTENT_TYPE_UNSUPPORTED", `The ${label} is truncated or cannot be decoded.`);
  }
  // The decoder must agree with the header the limits were checked against.
  if (image.width !== header.width || image.height !== header.height)
    throw new ImageInputError(
      "CONTENT_TYPE_UNSUPPORTED",
      `The ${label} is malformed (its header and data disagree).`,
    );
  return applyOrientation(image, header.orientation);
}
