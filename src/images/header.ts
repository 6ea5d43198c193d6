/**
 * Format and dimensions from the first bytes of a PNG, JPEG or WebP, without decoding, so limits are checked
 * before any work starts. Anything else (or a header cut short) is not an image: null. The reader is the
 * one the engine uses too (@p6/contract/image-header); this module types its orientation for the Worker.
 */
import {
  type ImageHeader as ContractHeader,
  type ImageFormat,
  readImageHeader as readHeader,
} from "@p6/contract/image-header";
import { describeUnreadable } from "@p6/contract/sniff";
import type { Orientation } from "./orientation";

/** The one walk over a JPEG's marker segments (codecs.ts reads its scans and Adobe marker by it). */
export { jpegSegments } from "@p6/contract/image-header";
export type { ImageFormat };
/** Shared with the engine, whose fetch refuses such a file by the same name (@p6/contract/sniff). */
export { describeUnreadable };

export type ImageHeader = ContractHeader & { orientation: Orientation };

/** decisions.md §9: sources are at most 16.8 megapixels and 25 MiB. */
export const MAX_IMAGE_PIXELS = 16_800_000;
export const MAX_IMAGE_BYTES = 25 * 1024 * 1024;

export function readImageHeader(bytes: Uint8Array): ImageHeader | null {
  // The contract's reader gives EXIF's 1–8 only (anything else reads as 1).
  return readHeader(bytes) as ImageHeader | null;
}
