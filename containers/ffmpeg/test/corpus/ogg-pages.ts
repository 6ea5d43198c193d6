/**
 * What an Ogg Vorbis stream declares of its length, read from its pages by this checker's own route (Ogg:
 * RFC 3533; Vorbis I specification, appendix A.2): the granule position of a page is the number of samples
 * decoded up to its last packet, and that of the stream's last page ends the stream, its last packet trimmed
 * to it ("the difference in the actual available data returned and the declared amount indicates how many
 * trailing samples to discard from the decoding process"). libvorbisfile, the reference decoder, trims so;
 * ffmpeg 5.1 does only when the stream's first audio page is not also its last: a stream of one audio page (a
 * short cut) it decodes whole, 112 samples more for a 0.907 s cut at 48 kHz (it counts the first packet,
 * which returns no sample, as lasting, and the trim it computes then exceeds the last packet).
 */
import { readFile } from "node:fs/promises";

interface Page {
  granule: number;
  /** Packets that end on this page (lacing values below 255). */
  ends: number;
  last: boolean;
}

/** The pages of the first Vorbis logical stream of an Ogg file; null when it has none. */
export function vorbisPages(buf: Buffer): Page[] | null {
  const pages = new Map<number, Page[]>();
  let vorbis: number | null = null;
  let p = 0;
  while (p + 27 <= buf.length) {
    if (buf.toString("latin1", p, p + 4) !== "OggS") return null;
    const type = buf[p + 5]!;
    const granule = Number(buf.readBigInt64LE(p + 6));
    const serial = buf.readUInt32LE(p + 14);
    const segments = buf[p + 26]!;
    const lacing = buf.subarray(p + 27, p + 27 + segments);
    const body = p + 27 + segments;
    // The identification header opens its stream's first page: packet type 1, "vorbis".
    if (vorbis === null && (type & 2) !== 0 && buf.toString("latin1", body, body + 7) === "\x01vorbis") {
      vorbis = serial;
    }
    const list = pages.get(serial) ?? [];
    list.push({ granule, ends: [...lacing].filter((l) => l < 255).length, last: (type & 4) !== 0 });
    pages.set(serial, list);
    p = body + lacing.reduce((a, b) => a + b, 0);
  }
  return vorbis === null ? null : (pages.get(vorbis) ?? null);
}

/**
 * The samples an Ogg Vorbis stream presents by its pages: its last granule position less the one its first
 * sample has, which is the first audio page's granule less the samples of the packets that end on that page
 * (the first audio packet returns none; `frameSamples` are the decoded frames' counts, one per later
 * packet). A stream whose first audio page is also its last starts at 0. Null when the file holds no Vorbis
 * stream or its pages cannot be read.
 */
export async function vorbisDeclaredSamples(
  file: string,
  frameSamples: readonly number[],
): Promise<number | null> {
  const pages = vorbisPages(await readFile(file).catch(() => Buffer.alloc(0)));
  if (pages === null || pages.length === 0) return null;
  // The three headers come first; the first audio packet begins on a fresh page.
  let packets = 0;
  let first = 0;
  while (first < pages.length && packets < 3) packets += pages[first++]!.ends;
  const audio = pages[first];
  const last = pages.at(-1)!;
  if (audio === undefined || audio.granule < 0 || last.granule < 0) return null;
  const start =
    audio === last ? 0 : audio.granule - frameSamples.slice(0, audio.ends - 1).reduce((a, b) => a + b, 0);
  return last.granule - start;
}
