import type { OperationParams } from "@p6/contract/operations";
import { TEXT_SCRIPTS } from "@p6/contract/params";
import { readFetchedMedia } from "../engine";
import { ApiError } from "../errors/api-error";
import {
  ForEngineError,
  ImageInputError,
  MAX_IMAGE_BYTES,
  MAX_IMAGE_PIXELS,
  readImageHeader,
  watermarkImage,
} from "../images";
import { Semaphore } from "../util/semaphore";
import { callEngine, engineFailure, runOnEngine } from "./engine-runner";
import { engineMarkSize, engineTextMark, fontsOf, textMarkApiError } from "./text-mark";
import type { RunContext, WorkerOperation } from "./types";

/**
 * Images up to this many pixels are watermarked inside the Worker (measured peak ≈ 62 MB at 1920×1080, see
 * docs/performance.md); one at a time per isolate, a synchronous call's ahead of waiting tasks', so concurrent
 * requests cannot add up past the Worker's 128 MB. Larger images, up to the 16.8 MP limit, would not fit with
 * the WASM codecs: the media engine watermarks those (its job image.watermark takes exactly these params and
 * fetches the source and the logo itself).
 */
export const IN_WORKER_MAX_PIXELS = 2_200_000;
const inWorker = new Semaphore(1);

/** Fetches an image through the engine's SSRF-guarded fetcher; the answer carries its sniffed type and size. */
async function fetchImage(ctx: RunContext, url: string, field: "source_url" | "params.watermark_url") {
  const response = await callEngine(ctx, () =>
    ctx.engine.fetchSource(
      {
        source_url: url,
        field,
        max_source_bytes: MAX_IMAGE_BYTES,
        accept: ["image"],
        timeout_ms: ctx.timeoutMs,
      },
      ctx.signal,
    ),
  );
  if (!response.ok) {
    const error = await engineFailure(response);
    if (error.errors) throw ApiError.invalid(field, error.detail);
    throw error;
  }
  return { response, media: readFetchedMedia(response) };
}

const bytesOf = async (response: Response) => new Uint8Array(await response.arrayBuffer());

/** Too large for the WASM codecs, within the image limit: the engine's job (a base or a logo). */
const forEngine = (width: number, height: number) =>
  width * height > IN_WORKER_MAX_PIXELS && width * height <= MAX_IMAGE_PIXELS;

function imageError(error: unknown): never {
  if (error instanceof ImageInputError) throw new ApiError(error.code, error.message);
  throw textMarkApiError(error);
}

/**
 * The engine's image.watermark, with a text mark drawn here first (the engine draws no text). `height`: the
 * image's, when known, so the default size needs no scaling (the engine rescales if orientation turned it).
 */
async function onEngine(ctx: RunContext, sourceUrl: string, params: Params, height?: number) {
  const textMark =
    params.text === undefined
      ? undefined
      : await engineTextMark(
          ctx,
          { ...params, text: params.text },
          engineMarkSize({ ...params, text: params.text }, height),
        );
  return runOnEngine(ctx, "image.watermark", sourceUrl, params, textMark ? { text_mark: textMark } : {});
}

type Params = OperationParams<"image.watermark">;

export const imageWatermark: WorkerOperation<"image.watermark"> = {
  operationId: "watermarkImage",
  summary: "Watermark an image",
  description: `Overlays a logo (PNG, WebP or JPEG; alpha respected) or a text mark on a JPEG, PNG or WebP image. Text is shaped with bidi and font fallback (${TEXT_SCRIPTS}), placed by its drawn bounds; characters no font covers are refused with 400 naming them. Sources up to 25 MiB and 16.8 megapixels, checked from the header before decoding. EXIF orientation (JPEG, PNG eXIf, WebP) is applied first: the output carries no EXIF and width/height are the turned image's. Alpha is kept in PNG and WebP output. Animated images (APNG, animated WebP) and JPEGs in codings the decoders lack (arithmetic, lossless, 12-bit) are refused with 415 naming why.`,
  async run(ctx, sourceUrl, params) {
    const started = performance.now();
    const source = await fetchImage(ctx, sourceUrl, "source_url");
    // The size from the fetch answer's header decides before the body is read; without it, the bytes do.
    let base: Uint8Array | undefined;
    let { width, height } = source.media;
    if (width === undefined || height === undefined) {
      base = await bytesOf(source.response);
      ({ width, height } = readImageHeader(base) ?? {});
    }
    if (width !== undefined && height !== undefined && forEngine(width, height)) {
      // A body already read (the size came from its bytes: a source too short for the engine's sniff, like a
      // 26-byte WebP whose header claims 11330×446) is no stream to cancel: workerd throws "locked".
      if (base === undefined) await source.response.body?.cancel();
      ctx.timing.add("fetch", performance.now() - started);
      // The engine fetches the source again (and the logo) through the same guarded fetcher.
      return onEngine(ctx, sourceUrl, params, height);
    }
    base ??= await bytesOf(source.response);
    let logo: Uint8Array | undefined;
    if (params.watermark_url) {
      const fetched = await fetchImage(ctx, params.watermark_url, "params.watermark_url");
      // A logo too large to decode here goes to the engine with its base: the Worker's memory bounds both.
      let size: { width?: number | undefined; height?: number | undefined } | null = fetched.media;
      if (size.width === undefined) {
        logo = await bytesOf(fetched.response);
        size = readImageHeader(logo);
      }
      if (size?.width !== undefined && size.height !== undefined && forEngine(size.width, size.height)) {
        if (!logo) await fetched.response.body?.cancel();
        ctx.timing.add("fetch", performance.now() - started);
        return onEngine(ctx, sourceUrl, params, height);
      }
      logo ??= await bytesOf(fetched.response);
    }
    ctx.timing.add("fetch", performance.now() - started);

    let result: Awaited<ReturnType<typeof watermarkImage>>;
    try {
      result = await ctx.timing.measure("process", () =>
        inWorker
          .run(() => watermarkImage(base, params, logo, fontsOf(ctx.env), ctx.timing), ctx.priority)
          .catch(imageError),
      );
    } catch (error) {
      // A valid image the Worker's codecs cannot afford (a large CMYK JPEG): the engine's job after all.
      if (error instanceof ForEngineError) return onEngine(ctx, sourceUrl, params, height);
      throw error;
    }
    return {
      kind: "file",
      outputKind: "image",
      name: `watermark.${result.format === "jpeg" ? "jpg" : result.format}`,
      contentType: result.contentType,
      body: result.bytes,
      sizeBytes: result.bytes.byteLength,
      meta: {
        format: result.format,
        size_bytes: result.bytes.byteLength,
        width: result.width,
        height: result.height,
      },
    };
  },
};
