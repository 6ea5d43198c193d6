/**
 * Headers of a stream copy that ffmpeg 5.1's muxers write so that a decoder presents other samples than the
 * source's, put right after the copy (extract-audio `original`, a whole-stream audio.trim):
 * - MP3: the muxer writes a Xing/Info frame with an encoder-delay tag ("Lavf"); a decoder that reads it
 *   drops the 529 samples of an MP3 decoder's delay plus the delay it states. A source without such a tag
 *   (an MP3 in AVI, or a file without one) presents those samples, so a tag stating no delay and no padding
 *   is taken off (its vendor string blanked, the Xing frame and its frame count kept): mp3-cover-22s.mp3 and
 *   xvid-mp3.avi began 12 and 11 ms late.
 * - Ogg Opus: the muxer times its pages from the source's packet timestamps (rounded to a Matroska
 *   millisecond) and drops the end trim a WebM states on its last packet (DiscardPadding), so the copy
 *   decodes the whole last frame: av1-opus.webm 4.013 s for 4.000. Every page's granule position is
 *   recounted from its packets' durations (their TOC bytes), the last one ending at the source's samples.
 */
import { open, readFile, writeFile } from "node:fs/promises";

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

/** Samples (48 kHz) of one Opus packet, from its TOC byte (RFC 6716 §3.1); 0 for an empty packet. */
function opusPacketSamples(packet: Buffer): number {
  if (packet.length === 0) return 0;
  const toc = packet[0]!;
  const config = toc >> 3;
  const ms =
    config < 12
      ? [10, 20, 40, 60][config % 4]!
      : config < 16
        ? [10, 20][config % 2]!
        : [2.5, 5, 10, 20][config % 4]!;
  const code = toc & 3;
  const frames = code === 0 ? 1 : code < 3 ? 2 : (packet[1] ?? 0) & 0x3f;
  return frames * ms * 48;
}

/** The Ogg page checksum (CRC-32, polynomial 0x04c11db7, not reflected). */
const OGG_CRC = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    table[i] = c >>> 0;
  }
  return table;
})();

function oggCrc(page: Buffer): number {
  let crc = 0;
  for (const b of page) crc = ((crc << 8) ^ OGG_CRC[((crc >>> 24) ^ b) & 0xff]!) >>> 0;
  return crc;
}

/** Largest Ogg Opus copy whose pages are recounted (read whole into memory). */
const OGG_MAX_BYTES = 256 * 1024 * 1024;

/**
 * Recounts the granule positions of an Ogg Opus copy (see above) so that it decodes to `samples` (48 kHz,
 * the source's decoded count) after its pre-skip. Returns whether the file was changed.
 */
export async function oggOpusEndAt(path: string, samples: number): Promise<boolean> {
  const data = await readFile(path);
  if (data.length > OGG_MAX_BYTES) return false;
  const head = data.indexOf("OpusHead");
  if (head < 0) return false;
  const preSkip = data.readUInt16LE(head + 10);
  const pages: { at: number; end: number; completes: number[] }[] = [];
  let packet: Buffer[] = [];
  let packets = 0;
  for (let at = 0; at + 27 <= data.length; ) {
    if (data.toString("latin1", at, at + 4) !== "OggS") return false;
    const count = data[at + 26]!;
    let body = at + 27 + count;
    const completes: number[] = [];
    for (let i = 0; i < count; i++) {
      const len = data[at + 27 + i]!;
      packet.push(data.subarray(body, body + len));
      body += len;
      if (len < 255) {
        // The first two packets are the headers (OpusHead, OpusTags).
        if (packets >= 2) completes.push(opusPacketSamples(Buffer.concat(packet)));
        packets++;
        packet = [];
      }
    }
    pages.push({ at, end: body, completes });
    at = body;
  }
  let granule = 0;
  const total = preSkip + samples;
  let changed = false;
  pages.forEach((page, i) => {
    if (page.completes.length === 0) return;
    granule += page.completes.reduce((a, b) => a + b, 0);
    // The last page ends at the source's samples, when that is inside its packets.
    const value =
      i === pages.length - 1 && total <= granule && total > granule - page.completes.at(-1)!
        ? total
        : granule;
    const old = data.readBigInt64LE(page.at + 6);
    if (old === BigInt(value)) return;
    data.writeBigInt64LE(BigInt(value), page.at + 6);
    data.writeUInt32LE(0, page.at + 22);
    data.writeUInt32LE(oggCrc(data.subarray(page.at, page.end)), page.at + 22);
    changed = true;
  });
  if (changed) await writeFile(path, data);
  return changed;
}
