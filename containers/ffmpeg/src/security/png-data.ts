/**
 * PNG sources and logos whose compressed image data inflates past what their header needs are refused before
 * ffmpeg reads them (docs/decisions.md "Synchronous operations"): ffmpeg's decoder inflates every byte, so a
 * 1 MB IDAT of zeros behind an honest 1×1 or 1600×1500 header cost 10–30 s of inflating 1 GiB, and a charge,
 * where the Worker answers 415 at once. The check is the Worker's (@p6/contract/png-data), run over the
 * download as it arrives; only a slice of it is ever held.
 */
import { checkPngData, inflationMessage } from "@p6/contract/png-data";
import { unsupported } from "../protocol.ts";

/** Throws the 415 naming `label` ("the image", "the watermark image") when a PNG's data is a bomb. */
export async function checkImageData(
  source: { read(offset: number, length: number): Promise<Uint8Array> },
  format: string,
  label: string,
): Promise<void> {
  if (format !== "png") return;
  const check = await checkPngData((offset, length) => source.read(offset, length));
  if (!check.ok) throw unsupported(`${label} ${inflationMessage(check.expected)}`);
}
