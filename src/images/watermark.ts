import { decodeImage, encodeImage } from "./codecs";
import { compositeOver, flattenOnWhite, placeMark } from "./composite";
import { DecodeLimitError, ImageInputError } from "./errors";
import {
  type ImageFormat,
  type ImageHeader,
  MAX_IMAGE_BYTES,
  MAX_IMAGE_PIXELS,
  readImageHeader,
} from "./header";
import { applyOrientation, shownSize } from "./orientation";
import { type ImageWatermarkParams, ImageWatermarkParamsSchema } from "./params";
import { resizeImage } from "./resize";
import type { Rgba } from "./rgba";
import { layoutText, paintText, parseColor, type TextAlign } from "./text";

export type ImageWatermarkResult = {
  bytes: Uint8Array;
  format: ImageFormat;
  contentType: string;
  width: number;
  height: number;
};

/**
 * image.watermark: draws a logo (`logo`, the bytes fetched from params.watermark_url) or a text mark onto
 * `base` and encodes the result. Both images are checked from their headers before anything is decoded, and
 * the work is ordered so that peaks do not add up: the logo is decoded and shrunk first, then the base is
 * decoded once and blended in place, then encoded.
 * Throws ImageInputError for inputs the client must fix (unsupported, undecodable, too large).
 */
export async function watermarkImage(
  base: Uint8Array,
  params: ImageWatermarkParams,
  logo?: Uint8Array,
): Promise<ImageWatermarkResult> {
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
  }

  const image = await decode(baseHeader, base, "image");
  if (p.opacity > 0) {
    if (mark) {
      const { x, y } = placeMark(p.position, p.margin, image, mark);
      compositeOver(image, mark, x, y, p.opacity);
    } else if (p.text !== undefined) {
      drawText(image, p.text, p.font_size ?? Math.max(1, Math.round(image.height * 0.05)), p);
    }
  }
  mark = undefined;

  const format = p.format === "same" ? baseHeader.format : p.format;
  if (format === "jpeg") flattenOnWhite(image);
  const bytes = await encodeImage(image, format, p.quality);
  return { bytes, format, contentType: `image/${format}`, width: image.width, height: image.height };
}

type TextOptions = Pick<
  ReturnType<typeof ImageWatermarkParamsSchema.parse>,
  "position" | "margin" | "color" | "opacity"
>;

function drawText(image: Rgba, text: string, fontSize: number, p: TextOptions): void {
  const align: TextAlign = p.position.endsWith("left")
    ? "left"
    : p.position.endsWith("right")
      ? "right"
      : "center";
  const layout = layoutText(text, fontSize, align);
  const { x, y } = placeMark(p.position, p.margin, image, layout);
  paintText(image, layout, parseColor(p.color), x, y, p.opacity);
}

function checkHeader(bytes: Uint8Array, label: string): ImageHeader {
  const header = readImageHeader(bytes);
  if (!header)
    throw new ImageInputError("CONTENT_TYPE_UNSUPPORTED", `The ${label} is not a PNG, JPEG or WebP file.`);
  if (header.animated)
    throw new ImageInputError(
      "CONTENT_TYPE_UNSUPPORTED",
      `The ${label} is an animated WebP, which is not supported.`,
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
