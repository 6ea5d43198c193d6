/**
 * Headers of a stream copy that ffmpeg 5.1's muxers write so that a decoder presents other samples than the
 * source's, put right after the copy (extract-audio `original`, a whole-stream audio.trim):
 * - MP3: the muxer writes a Xing/Info frame with an encoder-delay tag ("Lavf"); a decoder that reads it
 *   drops the 529 samples of an MP3 decoder's delay plus the delay it states. A source without such a tag
 *   (an MP3 in AVI, or a file without one) presents those samples, so a tag stating no delay and no padding
 *   is taken off (its vendor string blanked, the Xing frame and its frame count kept): mp3-cover-22s.mp3 and
 *   xvid-mp3.avi began 12 and 11 ms late.
 */
import { open } from "node:fs/promises";

/** MPEG audio sample rates by version bits (2.5, reserved, 2, 1) and rate index. */
const MP3_RATES = [
  [11025, 12000, 8000],
  [0, 0, 0],
  [22050, 24000, 16000],
  [44100, 48000, 32000],
];

/** Bytes read from the file's start to find the Xing frame (an ID3 tag with a cover comes first). */
const HEAD_BYTES = 4 * 1024 * 1024;

/**
 * Blanks the encoder-delay tag of an MP3 copy when it states no delay and no padding (see above). Returns
 * whether the file was changed.
 */
export async function mp3KeepFirstSamples(path: string): Promise<boolean> {
  const fh = await open(path, "r+");
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await fh.read(head, 0, HEAD_BYTES, 0);
    let i = 0;
    if (head.toString("latin1", 0, 3) === "ID3") {
      i =
        10 +
        (((head[6]! & 0x7f) << 21) |
          ((head[7]! & 0x7f) << 14) |
          ((head[8]! & 0x7f) << 7) |
          (head[9]! & 0x7f));
    }
    if (i + 4 > bytesRead || head[i] !== 0xff || (head[i + 1]! & 0xe0) !== 0xe0) return false;
    const version = (head[i + 1]! >> 3) & 3;
    if ((MP3_RATES[version]?.[(head[i + 2]! >> 2) & 3] ?? 0) === 0) return false;
    const mono = head[i + 3]! >> 6 === 3;
    const x = i + 4 + (version === 3 ? (mono ? 17 : 32) : mono ? 9 : 17);
    const tag = head.toString("latin1", x, x + 4);
    if (tag !== "Xing" && tag !== "Info") return false;
    const flags = head.readUInt32BE(x + 4);
    const lame =
      x + 8 + (flags & 1 ? 4 : 0) + (flags & 2 ? 4 : 0) + (flags & 4 ? 100 : 0) + (flags & 8 ? 4 : 0);
    if (lame + 24 > bytesRead || !/^(Lavf|Lavc)/.test(head.toString("latin1", lame, lame + 4))) return false;
    // 12 bits of delay, 12 of padding, 21 bytes after the vendor string.
    if (head.readUIntBE(lame + 21, 3) !== 0) return false;
    await fh.write(Buffer.alloc(4), 0, 4, lame);
    return true;
  } finally {
    await fh.close();
  }
}
