import mozjpegDecoder from "@jsquash/jpeg/codec/dec/mozjpeg_dec.js";
import JPEG_DEC_WASM from "@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm";
import mozjpegEncoder from "@jsquash/jpeg/codec/enc/mozjpeg_enc.js";
import JPEG_ENC_WASM from "@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm";
import { defaultOptions as JPEG_DEFAULTS } from "@jsquash/jpeg/meta.js";
import webpDecoder from "@jsquash/webp/codec/dec/webp_dec.js";
import WEBP_DEC_WASM from "@jsquash/webp/codec/dec/webp_dec.wasm";
import webpEncoder from "@jsquash/webp/codec/enc/webp_enc_simd.js";
import WEBP_ENC_WASM from "@jsquash/webp/codec/enc/webp_enc_simd.wasm";
import { defaultOptions as WEBP_DEFAULTS } from "@jsquash/webp/meta.js";
import { jpegFrame, unsupportedJpegCoding } from "@p6/contract/jpeg-frame";
import jpegJs from "jpeg-js";
import { ForEngineError, UnsupportedCodingError } from "./errors";
import { type ImageFormat, jpegSegments, MAX_IMAGE_PIXELS, readImageHeader } from "./header";
import { checkPixels, decodePng, encodePng } from "./png";
import type { Rgba } from "./rgba";

/**
 * JPEG and WebP through jSquash's Emscripten builds (toolchain-findings §7), PNG in TypeScript (png.ts).
 * The WASM modules are compiled once, at bundle load. Instances are made on first use and kept while their
 * memory stays small; WASM memory never shrinks, so an instance that grew on a large image is dropped after
 * that call and the isolate gets the memory back instead of carrying it into every later request.
 */

type EmscriptenCodec = { HEAPU8: Uint8Array };
type Decoder = EmscriptenCodec & { decode(data: BufferSource, preserveOrientation?: boolean): Rgba | null };
type Encoder = EmscriptenCodec & {
  encode(data: BufferSource, width: number, height: number, options: object): Uint8Array | null;
};
type Factory = (options: object) => Promise<unknown>;

/** An instance whose memory grew beyond this (from its 16 MiB start) is not reused. */
const KEEP_INSTANCE_MAX_BYTES = 32 * 1024 * 1024;

// The Emscripten glue builds its results with `new ImageData(...)`, which workerd does not provide.
const scope = globalThis as { ImageData?: unknown };
scope.ImageData ??= class {
  readonly data: Uint8ClampedArray;
  readonly width: number;
  readonly height: number;

  constructor(data: Uint8ClampedArray, width: number, height: number) {
    this.data = data;
    this.width = width;
    this.height = height;
  }
};

class CodecSlot<T extends EmscriptenCodec> {
  private instance: Promise<T> | undefined;
  private readonly factory: Factory;
  private readonly wasm: WebAssembly.Module;

  constructor(factory: Factory, wasm: WebAssembly.Module) {
    this.factory = factory;
    this.wasm = wasm;
  }

  async run<R>(fn: (codec: T) => R): Promise<R> {
    const pending = this.instance ?? this.create();
    this.instance = pending;
    const codec = await pending;
    try {
      return fn(codec);
    } finally {
      if (codec.HEAPU8.byteLength > KEEP_INSTANCE_MAX_BYTES && this.instance === pending)
        this.instance = undefined;
    }
  }

  private create(): Promise<T> {
    const wasm = this.wasm;
    return this.factory({
      noInitialRun: true,
      instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance) => void) {
        const instance = new WebAssembly.Instance(wasm, imports);
        done(instance);
        return instance.exports;
      },
    }) as Promise<T>;
  }
}

const jpegDecoder = new CodecSlot<Decoder>(mozjpegDecoder as Factory, JPEG_DEC_WASM);
const jpegEncoder = new CodecSlot<Encoder>(mozjpegEncoder as Factory, JPEG_ENC_WASM);
const webpDecoderSlot = new CodecSlot<Decoder>(webpDecoder as Factory, WEBP_DEC_WASM);
const webpEncoderSlot = new CodecSlot<Encoder>(webpEncoder as Factory, WEBP_ENC_WASM);

/**
 * Decodes to RGBA; throws when the data is not a complete image of that format, and DecodeLimitError before
 * any decoding when its header declares more than `maxPixels` (the codecs allocate the full output first).
 */
export async function decodeImage(
  format: ImageFormat,
  bytes: Uint8Array,
  maxPixels = MAX_IMAGE_PIXELS,
): Promise<Rgba> {
  if (format === "png") return decodePng(bytes, maxPixels);
  const header = readImageHeader(bytes);
  if (header?.format !== format) throw new Error(`not a ${format} image`);
  checkPixels(header.width, header.height, maxPixels);
  // libjpeg only warns about a missing end and fills the rest with grey; a cut-off file is an error here.
  if (format === "jpeg" && !hasJpegEnd(bytes)) throw new Error("truncated JPEG");
  if (format === "jpeg") {
    const frame = jpegFrame(bytes);
    const unsupported = frame && unsupportedJpegCoding(frame);
    if (unsupported) throw new UnsupportedCodingError(unsupported);
    if (frame?.components === 4) return decodeCmykJpeg(bytes, frame.width * frame.height);
  }
  // Embind checks arity: the JPEG decoder takes preserveOrientation (false: pixels as stored), WebP does not.
  const image =
    format === "jpeg"
      ? await jpegDecoder.run((codec) => codec.decode(bytes, false))
      : await webpDecoderSlot.run((codec) => codec.decode(bytes));
  if (!image) throw new Error(`${format} decoding failed`);
  return image;
}

/** Encodes RGBA; `quality` (1–100) applies to JPEG and WebP. JPEG drops the alpha channel. */
export async function encodeImage(image: Rgba, format: ImageFormat, quality: number): Promise<Uint8Array> {
  if (format === "png") return encodePng(image);
  const options =
    format === "jpeg"
      ? // Baseline with optimized Huffman tables, like sharp's defaults: progressive mode costs 2× the time.
        { ...JPEG_DEFAULTS, quality, progressive: false }
      : { ...WEBP_DEFAULTS, quality };
  const slot = format === "jpeg" ? jpegEncoder : webpEncoderSlot;
  const bytes = await slot.run((codec) => codec.encode(image.data, image.width, image.height, options));
  if (!bytes) throw new Error(`${format} encoding failed`);
  return bytes;
}

/**
 * Whether the file has its end-of-image marker after the first scan. FF D9 cannot occur inside entropy-coded
 * data (FF is stuffed there), so any FF D9 past the scan start is the real end, possibly followed by data some
 * cameras append (motion photos); a file without one was cut off.
 */
function hasJpegEnd(bytes: Uint8Array): boolean {
  let scan = -1;
  for (const { marker, offset } of jpegSegments(bytes)) if (marker === 0xda) scan = offset;
  if (scan < 0) return false;
  for (let i = bytes.length - 2; i > scan; i--) if (bytes[i] === 0xff && bytes[i + 1] === 0xd9) return true;
  return false;
}

/**
 * jpeg-js holds every 8×8 block of every component as its own array: about 41 bytes per pixel of a CMYK image
 * (88 MB and 4 s for 2.2 MP, measured in Node). Up to 1 MP fits the Worker beside everything else; larger CMYK
 * JPEGs go to the engine, whose ffmpeg converts them the same way.
 */
const CMYK_IN_WORKER_MAX_PIXELS = 1_000_000;

/**
 * CMYK (and YCCK) JPEGs, which libjpeg cannot turn into RGB, through jpeg-js: Adobe's inverted CMYK (what
 * Photoshop and every other writer of CMYK JPEGs store; the APP14 marker says so) converted as browsers do
 * without a colour profile, R = (255 − C)(255 − K)/255 on the real ink values. They are rare; the slower pure-JS
 * decoder takes the small ones (CMYK_IN_WORKER_MAX_PIXELS).
 */
function decodeCmykJpeg(bytes: Uint8Array, pixels: number): Rgba {
  if (pixels > CMYK_IN_WORKER_MAX_PIXELS) throw new ForEngineError("a CMYK JPEG over 1 megapixel");
  if (
    !jpegSegmentsOf(bytes, 0xee).some((o) => String.fromCharCode(...bytes.subarray(o + 4, o + 9)) === "Adobe")
  )
    throw new UnsupportedCodingError("a CMYK JPEG without an Adobe marker");
  const image = jpegJs.decode(bytes, {
    useTArray: true,
    formatAsRGBA: true,
    tolerantDecoding: false,
    maxResolutionInMP: CMYK_IN_WORKER_MAX_PIXELS / 1e6,
    maxMemoryUsageInMB: 64,
  });
  const data = new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  return { data, width: image.width, height: image.height };
}

function jpegSegmentsOf(bytes: Uint8Array, wanted: number): number[] {
  const offsets: number[] = [];
  for (const { marker, offset } of jpegSegments(bytes)) if (marker === wanted) offsets.push(offset);
  return offsets;
}
