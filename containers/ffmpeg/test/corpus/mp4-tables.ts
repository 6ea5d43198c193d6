/**
 * The presentation an MP4/MOV states in its own tables (ISO/IEC 14496-12): each sample's composition time
 * from stts + ctts, shown until the next composition time (the last for its own stts delta), mapped through
 * the edit list (elst: empty edits delay, a media edit shows [media_time, media_time + segment_duration) of
 * the media from its position on the timeline). Read by this checker's own route, without ffmpeg: ffmpeg 5.1's
 * demuxer misreads some of these tables (it takes an empty edit off the last sample's duration; it drops a
 * sample whose composition time is before an edit's media_time though the edit shows its tail). A fragmented
 * file's samples are read from its fragments too (moof: each traf's tfdt and trun, defaults from tfhd and
 * trex): ffmpeg 5.1 gives its last packet the duration of the one before, not the one its trun states
 * (h264-aac-frag.mp4 of the media matrix: the last AAC sample lasts 640 ticks, ffprobe says 1,024). Tracks
 * without an stts are not read here (null).
 */
import { open } from "node:fs/promises";

interface Box {
  type: string;
  /** Payload start and end (after the header). */
  start: number;
  end: number;
}

function children(buf: Buffer, start: number, end: number): Box[] {
  const out: Box[] = [];
  let p = start;
  while (p + 8 <= end) {
    let size = buf.readUInt32BE(p);
    const type = buf.toString("latin1", p + 4, p + 8);
    let header = 8;
    if (size === 1) {
      if (p + 16 > end) break;
      size = Number(buf.readBigUInt64BE(p + 8));
      header = 16;
    } else if (size === 0) size = end - p;
    if (size < header || p + size > end) break;
    out.push({ type, start: p + header, end: p + size });
    p += size;
  }
  return out;
}

const child = (buf: Buffer, box: Box, type: string) =>
  children(buf, box.start, box.end).find((b) => b.type === type);

/** A track's presentation by its tables, in seconds from the file's time 0. */
export interface TablePresentation {
  /** Shown frames in presentation order: start and end on the timeline. */
  frames: { t: number; end: number }[];
  /** Where the last shown frame stops being shown. */
  end: number;
}

/** Reads the whole file when it is small enough; the corpus's MP4s and the engine's outputs are. */
async function readFile(file: string, limit = 512 * 1024 * 1024): Promise<Buffer | null> {
  const fh = await open(file, "r");
  try {
    const size = (await fh.stat()).size;
    if (size > limit) return null;
    const buf = Buffer.alloc(size);
    await fh.read(buf, 0, size, 0);
    return buf;
  } finally {
    await fh.close();
  }
}

/**
 * The presentation of the `ordinal`-th track (0-based, in file order, which is ffprobe's stream index) by
 * its tables, or null when the file is not an MP4/MOV or the track cannot be read; a fragmented file's only
 * with `fragments` (presentationOf).
 */
export async function tablePresentation(
  file: string,
  ordinal: number,
  fragments = true,
): Promise<TablePresentation | null> {
  const buf = await readFile(file).catch(() => null);
  if (buf === null) return null;
  return presentationOf(buf, ordinal, fragments);
}

/** A fragmented track's samples (ISO/IEC 14496-12 8.8): decode deltas and composition offsets, in order. */
function fragmentSamples(buf: Buffer, top: Box[], moov: Box, trackId: number) {
  const delta: number[] = [];
  const offset: number[] = [];
  const starts: (number | null)[] = [];
  // trex: track_ID, default_sample_description_index, default_sample_duration, …
  const trex = children(buf, child(buf, moov, "mvex")?.start ?? 0, child(buf, moov, "mvex")?.end ?? 0).find(
    (b) => b.type === "trex" && buf.readUInt32BE(b.start + 4) === trackId,
  );
  const trexDuration = trex === undefined ? 0 : buf.readUInt32BE(trex.start + 12);
  for (const moof of top.filter((b) => b.type === "moof")) {
    for (const traf of children(buf, moof.start, moof.end).filter((b) => b.type === "traf")) {
      const tfhd = child(buf, traf, "tfhd");
      if (tfhd === undefined || buf.readUInt32BE(tfhd.start + 4) !== trackId) continue;
      const tfhdFlags = buf.readUInt32BE(tfhd.start) & 0xffffff;
      let p = tfhd.start + 8 + (tfhdFlags & 0x01 ? 8 : 0) + (tfhdFlags & 0x02 ? 4 : 0);
      const defaultDuration = tfhdFlags & 0x08 ? buf.readUInt32BE(p) : trexDuration;
      const tfdt = child(buf, traf, "tfdt");
      let base: number | null = null;
      if (tfdt !== undefined) {
        base =
          buf[tfdt.start] === 1
            ? Number(buf.readBigUInt64BE(tfdt.start + 4))
            : buf.readUInt32BE(tfdt.start + 4);
      }
      for (const trun of children(buf, traf.start, traf.end).filter((b) => b.type === "trun")) {
        const flags = buf.readUInt32BE(trun.start) & 0xffffff;
        const count = buf.readUInt32BE(trun.start + 4);
        p = trun.start + 8 + (flags & 0x001 ? 4 : 0) + (flags & 0x004 ? 4 : 0);
        for (let i = 0; i < count; i++) {
          let d = defaultDuration;
          if (flags & 0x100) {
            d = buf.readUInt32BE(p);
            p += 4;
          }
          if (flags & 0x200) p += 4;
          if (flags & 0x400) p += 4;
          let ct = 0;
          if (flags & 0x800) {
            // Version 1 signed; version 0 read signed too, as players do.
            ct = buf.readInt32BE(p);
            p += 4;
          }
          delta.push(d);
          offset.push(ct);
          starts.push(i === 0 ? base : null);
        }
        base = null;
      }
    }
  }
  return { delta, offset, starts };
}

/** The track's presentation by its tables; a fragmented file (moof) gives null unless `fragments`. */
export function presentationOf(buf: Buffer, ordinal: number, fragments = true): TablePresentation | null {
  const top = children(buf, 0, buf.length);
  if (!fragments && top.some((b) => b.type === "moof")) return null;
  const moov = top.find((b) => b.type === "moov");
  if (moov === undefined) return null;
  const mvhd = child(buf, moov, "mvhd");
  if (mvhd === undefined) return null;
  const movieScale = buf.readUInt32BE(mvhd.start + (buf[mvhd.start] === 1 ? 20 : 12));
  const trak = children(buf, moov.start, moov.end).filter((b) => b.type === "trak")[ordinal];
  if (trak === undefined) return null;
  const mdia = child(buf, trak, "mdia");
  const mdhd = mdia && child(buf, mdia, "mdhd");
  const stbl = mdia && child(buf, mdia, "minf") && child(buf, child(buf, mdia, "minf")!, "stbl");
  const stts = stbl && child(buf, stbl, "stts");
  if (mdhd === undefined || stts === undefined || stbl === undefined) return null;
  const mediaScale = buf.readUInt32BE(mdhd.start + (buf[mdhd.start] === 1 ? 20 : 12));
  if (movieScale === 0 || mediaScale === 0) return null;

  // Decode times and deltas (stts), composition offsets (ctts; version 1 signed, version 0 read signed too,
  // as players do).
  const dts: number[] = [];
  const delta: number[] = [];
  let t = 0;
  const sttsCount = buf.readUInt32BE(stts.start + 4);
  for (let i = 0; i < sttsCount; i++) {
    const n = buf.readUInt32BE(stts.start + 8 + i * 8);
    const d = buf.readUInt32BE(stts.start + 12 + i * 8);
    for (let k = 0; k < n; k++) {
      dts.push(t);
      delta.push(d);
      t += d;
    }
  }
  const ct = dts.slice();
  const ctts = child(buf, stbl, "ctts");
  if (ctts !== undefined) {
    const entries = buf.readUInt32BE(ctts.start + 4);
    let s = 0;
    for (let i = 0; i < entries; i++) {
      const n = buf.readUInt32BE(ctts.start + 8 + i * 8);
      const off = buf.readInt32BE(ctts.start + 12 + i * 8);
      for (let k = 0; k < n && s < ct.length; k++) ct[s++]! += off;
    }
  }
  // The fragments' samples follow the moov's, each traf from its tfdt (else where the last one ended).
  const tkhd = child(buf, trak, "tkhd");
  if (tkhd !== undefined && top.some((b) => b.type === "moof")) {
    const trackId = buf.readUInt32BE(tkhd.start + (buf[tkhd.start] === 1 ? 20 : 12));
    const frag = fragmentSamples(buf, top, moov, trackId);
    for (const [i, d] of frag.delta.entries()) {
      t = frag.starts[i] ?? t;
      dts.push(t);
      delta.push(d);
      ct.push(t + frag.offset[i]!);
      t += d;
    }
  }
  // Each sample shown from its composition time until the next one's; the last for its own delta.
  const order = ct.map((_, i) => i).sort((a, b) => ct[a]! - ct[b]! || a - b);
  const media = order.map((i, k) => {
    const next = order[k + 1];
    return { ct: ct[i]!, end: next === undefined ? ct[i]! + delta[i]! : ct[next]! };
  });
  const mediaEnd = media.length === 0 ? 0 : media[media.length - 1]!.end;

  // The edit list; none: the media as it is, from composition time 0.
  const edits: { duration: number; mediaTime: number }[] = [];
  const elst = child(buf, trak, "edts") && child(buf, child(buf, trak, "edts")!, "elst");
  if (elst !== undefined) {
    const v1 = buf[elst.start] === 1;
    const count = buf.readUInt32BE(elst.start + 4);
    for (let i = 0; i < count; i++) {
      const p = elst.start + 8 + i * (v1 ? 20 : 12);
      const duration = v1 ? Number(buf.readBigUInt64BE(p)) : buf.readUInt32BE(p);
      const mediaTime = v1 ? Number(buf.readBigInt64BE(p + 8)) : buf.readInt32BE(p + 4);
      edits.push({ duration, mediaTime });
    }
  }
  if (edits.length === 0) edits.push({ duration: 0, mediaTime: 0 });

  const frames: { t: number; end: number }[] = [];
  let at = 0; // timeline position, seconds
  for (const e of edits) {
    const seconds = e.duration / movieScale;
    if (e.mediaTime === -1) {
      at += seconds;
      continue;
    }
    // A zero segment duration (no movie length stated) shows the rest of the media.
    const from = e.mediaTime;
    const to = e.duration === 0 ? mediaEnd : from + seconds * mediaScale;
    for (const m of media) {
      const a = Math.max(m.ct, from);
      const b = Math.min(m.end, to);
      if (b > a) frames.push({ t: at + (a - from) / mediaScale, end: at + (b - from) / mediaScale });
    }
    at += (Math.min(to, mediaEnd) - from) / mediaScale;
  }
  return { frames, end: frames.length === 0 ? 0 : frames[frames.length - 1]!.end };
}
