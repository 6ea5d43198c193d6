/**
 * Ending a Matroska/WebM video at a chosen time by its last frame's BlockDuration, for a fast trim's copied
 * tail: a copied frame lasts until the next one, and the last one by its block's duration, or, without one,
 * by the track's DefaultDuration (a whole frame). ffmpeg 5.1's Matroska muxer writes video as SimpleBlocks
 * (BlockGroups only for blocks with additions, as VP8 alpha) and never a BlockDuration for video, whatever the
 * packet's duration: the last frame so lasted past `end`. The file it wrote is edited here: the last video
 * frame (by presentation time) becomes, or stays, a BlockGroup { Block, ReferenceBlock?, BlockDuration }, and
 * what follows it shifts by the bytes added: its Cluster's size (and CRC-32), the Segment's size, the SeekHead's
 * positions past it (and CRC-32), the Cues' cluster and relative positions past it (and CRC-32). The Segment's
 * Duration is set to `end` (the caller cuts any audio to the same end).
 *
 * The same edit ends a re-encoded audio track exactly (discardMatroskaAudioEnd): its last block gets a
 * DiscardPadding element declaring the encoder's padding, which ffmpeg 5.1's muxer writes only for Opus.
 *
 * Hand-written rather than through an npm EBML library: the maintained ones (ebml, ts-ebml) decode a whole
 * file into their own element model and encode it anew (unknown-size elements, size-field widths and ffmpeg's
 * reserved Void are not kept byte for byte), where five fields of a known layout need editing in place.
 * Every field is rewritten in the width ffmpeg gave it; a value that no longer fits it (a cluster crossing a
 * size-field boundary by the few bytes added) is not edited (false), and the caller does not copy.
 */

import { open, rename, rm } from "node:fs/promises";
import { crc32 } from "node:zlib";

const ID = {
  segment: 0x18538067,
  seekHead: 0x114d9b74,
  seek: 0x4dbb,
  seekPosition: 0x53ac,
  info: 0x1549a966,
  duration: 0x4489,
  timestampScale: 0x2ad7b1,
  tracks: 0x1654ae6b,
  trackEntry: 0xae,
  trackNumber: 0xd7,
  trackType: 0x83,
  cluster: 0x1f43b675,
  timestamp: 0xe7,
  simpleBlock: 0xa3,
  blockGroup: 0xa0,
  block: 0xa1,
  blockDuration: 0x9b,
  discardPadding: 0x75a2,
  referenceBlock: 0xfb,
  cues: 0x1c53bb6b,
  cuePoint: 0xbb,
  cueTrackPositions: 0xb7,
  cueClusterPosition: 0xf1,
  cueRelativePosition: 0xf0,
  crc32: 0xbf,
} as const;

interface Element {
  id: number;
  /** Offset of the element's ID. */
  start: number;
  /** Bytes of its size field. */
  sizeWidth: number;
  /** Offset of its data. */
  data: number;
  /** Bytes of data; -1 for an unknown size. */
  size: number;
}

/** Width of the variable-length integer starting with `first` (1–8; 9 for an invalid byte 0). */
function vintWidth(first: number): number {
  let width = 1;
  while (width <= 8 && !(first & (0x80 >> (width - 1)))) width++;
  return width;
}

/** The element whose header starts at `pos` in `buf` (null when the header is cut off or invalid). */
function header(buf: Buffer, pos: number, base = 0): Element | null {
  if (pos >= buf.length) return null;
  const idWidth = vintWidth(buf[pos]!);
  if (idWidth > 4 || pos + idWidth >= buf.length) return null;
  let id = 0;
  for (let i = 0; i < idWidth; i++) id = id * 256 + buf[pos + i]!;
  const sizeAt = pos + idWidth;
  const sizeWidth = vintWidth(buf[sizeAt]!);
  if (sizeWidth > 8 || sizeAt + sizeWidth > buf.length) return null;
  let size = buf[sizeAt]! & (0xff >> sizeWidth);
  let unknown = size === 0xff >> sizeWidth;
  for (let i = 1; i < sizeWidth; i++) {
    size = size * 256 + buf[sizeAt + i]!;
    if (buf[sizeAt + i] !== 0xff) unknown = false;
  }
  return { id, start: base + pos, sizeWidth, data: base + sizeAt + sizeWidth, size: unknown ? -1 : size };
}

/** The children of the element data `buf[from, to)`; `base` is the file offset of `buf[0]`. */
function children(buf: Buffer, from: number, to: number, base = 0): Element[] {
  const out: Element[] = [];
  for (let p = from; p < to; ) {
    const e = header(buf, p, base);
    if (e === null || e.size < 0) break;
    out.push(e);
    p = e.data - base + e.size;
  }
  return out;
}

const readUint = (buf: Buffer, from: number, size: number): number => {
  let v = 0;
  for (let i = 0; i < size; i++) v = v * 256 + buf[from + i]!;
  return v;
};

/** `value` written into `width` bytes of `buf` at `at`; false when it does not fit. */
function writeUint(buf: Buffer, at: number, width: number, value: number): boolean {
  if (value < 0 || value >= 2 ** (8 * width)) return false;
  for (let i = width - 1, v = value; i >= 0; i--, v = Math.floor(v / 256)) buf[at + i] = v % 256;
  return true;
}

/** An element size `value` written as a `width`-byte EBML number; false when it does not fit. */
function writeSize(buf: Buffer, at: number, width: number, value: number): boolean {
  // All ones is reserved for "unknown".
  if (value < 0 || value >= 2 ** (7 * width) - 1) return false;
  writeUint(buf, at, width, value);
  buf[at] = buf[at]! | (0x80 >> (width - 1));
  return true;
}

function sizeBytes(value: number): Buffer {
  let width = 1;
  while (value >= 2 ** (7 * width) - 1) width++;
  const out = Buffer.alloc(width);
  writeSize(out, 0, width, value);
  return out;
}

function idBytes(id: number): Buffer {
  const width = id > 0xffffff ? 4 : id > 0xffff ? 3 : id > 0xff ? 2 : 1;
  const out = Buffer.alloc(width);
  writeUint(out, 0, width, id);
  return out;
}

const element = (id: number, data: Buffer): Buffer =>
  Buffer.concat([idBytes(id), sizeBytes(data.length), data]);

function uintElement(id: number, value: number): Buffer {
  let width = 1;
  while (value >= 2 ** (8 * width)) width++;
  const data = Buffer.alloc(width);
  writeUint(data, 0, width, value);
  return element(id, data);
}

function intElement(id: number, value: number): Buffer {
  let width = 1;
  while (value < -(2 ** (8 * width - 1)) || value >= 2 ** (8 * width - 1)) width++;
  const data = Buffer.alloc(width);
  data.writeIntBE(value, 0, width);
  return element(id, data);
}

/** Rewrites the CRC-32 element that opens a master's data (`buf[from, to)`), if it has one. */
function fixCrc(buf: Buffer, from: number, to: number): void {
  const first = header(buf, from);
  if (first === null || first.id !== ID.crc32 || first.size !== 4) return;
  buf.writeUInt32LE(crc32(buf.subarray(first.data + 4, to)), first.data);
}

async function readAt(fh: Awaited<ReturnType<typeof open>>, pos: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, pos);
  return buf.subarray(0, bytesRead);
}

interface TrackBlock {
  /** The SimpleBlock or BlockGroup, offsets within its cluster's buffer. */
  element: Element;
  /** Its Block's data (track number, relative time, flags, frame), within the cluster's buffer. */
  block: Element;
  simple: boolean;
  /** Timestamp in the segment's ticks. */
  time: number;
}

/** The blocks of `track` in a cluster's buffer (the whole element, from its ID), with their times. */
function trackBlocks(buf: Buffer, track: number): TrackBlock[] {
  const cluster = header(buf, 0)!;
  let clusterTime = 0;
  const out: TrackBlock[] = [];
  for (const e of children(buf, cluster.data, cluster.data + cluster.size)) {
    if (e.id === ID.timestamp) clusterTime = readUint(buf, e.data, e.size);
    const block =
      e.id === ID.simpleBlock
        ? e
        : e.id === ID.blockGroup
          ? children(buf, e.data, e.data + e.size).find((c) => c.id === ID.block)
          : undefined;
    if (block === undefined) continue;
    const trackWidth = vintWidth(buf[block.data]!);
    if (readUint(buf, block.data, trackWidth) - (0x80 << (8 * (trackWidth - 1))) !== track) continue;
    const time = clusterTime + buf.readInt16BE(block.data + trackWidth);
    out.push({ element: e, block, simple: e.id === ID.simpleBlock, time });
  }
  return out;
}

/** Clusters read back from the file's end to find the last frame presented (B-frames reorder across blocks). */
const CLUSTERS_SCANNED = 2;

/** Matroska TrackType values. */
const VIDEO = 1;
const AUDIO = 2;

/** Where the top-level elements of a file are, and what the edits need of its header. */
interface Layout {
  segment: Element;
  top: Element[];
  clusters: Element[];
  /** Nanoseconds per tick (TimestampScale). */
  scale: number;
  /** The first track of each type, by number. */
  tracks: Map<number, number>;
}

async function readLayout(fh: Awaited<ReturnType<typeof open>>): Promise<Layout | null> {
  const { size: fileSize } = await fh.stat();
  const head = await readAt(fh, 0, 64);
  const ebml = header(head, 0);
  if (ebml === null || ebml.size < 0) return null;
  const segment = header(await readAt(fh, ebml.data + ebml.size, 16), 0, ebml.data + ebml.size);
  if (segment === null || segment.id !== ID.segment) return null;
  const top: Element[] = [];
  const segmentEnd = segment.size < 0 ? fileSize : Math.min(fileSize, segment.data + segment.size);
  for (let p = segment.data; p < segmentEnd; ) {
    const e = header(await readAt(fh, p, 16), 0, p);
    if (e === null || e.size < 0) return null;
    top.push(e);
    p = e.data + e.size;
  }
  let scale = 1_000_000;
  const info = top.find((e) => e.id === ID.info);
  if (info !== undefined) {
    const buf = await readAt(fh, info.data, info.size);
    const ts = children(buf, 0, buf.length).find((c) => c.id === ID.timestampScale);
    if (ts !== undefined) scale = readUint(buf, ts.data, ts.size);
  }
  const tracksElement = top.find((e) => e.id === ID.tracks);
  if (tracksElement === undefined) return null;
  const tracks = new Map<number, number>();
  const tbuf = await readAt(fh, tracksElement.data, tracksElement.size);
  for (const entry of children(tbuf, 0, tbuf.length).filter((c) => c.id === ID.trackEntry)) {
    const fields = children(tbuf, entry.data, entry.data + entry.size);
    const type = fields.find((f) => f.id === ID.trackType);
    const number = fields.find((f) => f.id === ID.trackNumber);
    if (type === undefined || number === undefined) continue;
    const t = readUint(tbuf, type.data, type.size);
    if (!tracks.has(t)) tracks.set(t, readUint(tbuf, number.data, number.size));
  }
  return { segment, top, clusters: top.filter((e) => e.id === ID.cluster), scale, tracks };
}

/** A block of the last clusters, the buffer of its cluster (from the cluster's ID) and the block before it. */
interface Target extends TrackBlock {
  cluster: Element;
  clusterBuf: Buffer;
  previous: number | undefined;
}

/** The block of `track` presented last among the blocks of the last `clustersScanned` clusters holding any. */
async function lastBlock(
  fh: Awaited<ReturnType<typeof open>>,
  layout: Layout,
  track: number,
  clustersScanned: number,
): Promise<Target | undefined> {
  let target: Target | undefined;
  let scanned = 0;
  for (let i = layout.clusters.length - 1; i >= 0 && scanned < clustersScanned; i--) {
    const cluster = layout.clusters[i]!;
    const buf = await readAt(fh, cluster.start, cluster.data - cluster.start + cluster.size);
    const blocks = trackBlocks(buf, track);
    if (blocks.length === 0) continue;
    scanned++;
    blocks.forEach((b, j) => {
      if (target === undefined || b.time > target.time) {
        target = { ...b, cluster, clusterBuf: buf, previous: blocks[j - 1]?.time };
      }
    });
  }
  return target;
}

/**
 * `target` as a BlockGroup of its Block, its references (a SimpleBlock's: the block before it, unless a
 * keyframe), any children of its own group but those of the IDs in `replaced`, and `extra` elements.
 */
function blockGroup(target: Target, replaced: readonly number[], extra: Buffer[]): Buffer {
  const buf = target.clusterBuf;
  const old = target.element;
  if (!target.simple) {
    const kept = children(buf, old.data, old.data + old.size)
      .filter((c) => !replaced.includes(c.id))
      .map((c) => buf.subarray(c.start, c.data + c.size));
    return element(ID.blockGroup, Buffer.concat([...kept, ...extra]));
  }
  const blockData = Buffer.from(buf.subarray(old.data, old.data + old.size));
  const trackWidth = vintWidth(blockData[0]!);
  const flags = blockData[trackWidth + 2]!;
  // A SimpleBlock's keyframe (0x80) and discardable (0x01) flags have no place in a Block's flags byte: a
  // BlockGroup is a keyframe when it references no other block.
  blockData[trackWidth + 2] = flags & 0x7e;
  const keyframe = (flags & 0x80) !== 0;
  const reference = target.previous === undefined ? -1 : target.previous - target.time || -1;
  return element(
    ID.blockGroup,
    Buffer.concat([
      element(ID.block, blockData),
      ...(keyframe ? [] : [intElement(ID.referenceBlock, reference)]),
      ...extra,
    ]),
  );
}

/**
 * Writes `file` again with `target`'s block replaced by `group`: its Cluster's size (and CRC-32), the
 * Segment's size, the SeekHead's and Cues' positions past it (and CRC-32) follow, and the Segment's Duration
 * becomes `durationTicks`. False when a value outgrows the width ffmpeg gave its field.
 */
async function replaceBlock(
  file: string,
  layout: Layout,
  target: Target,
  group: Buffer,
  durationTicks: number,
): Promise<boolean> {
  const { segment, top } = layout;
  const buf = target.clusterBuf;
  const old = target.element;
  const delta = group.length - (old.data + old.size - old.start);
  const cluster = target.cluster;
  const clusterHead = cluster.data - cluster.start;
  const newCluster = Buffer.concat([buf.subarray(0, old.start), group, buf.subarray(old.data + old.size)]);
  if (
    !writeSize(
      newCluster,
      cluster.data - cluster.start - cluster.sizeWidth,
      cluster.sizeWidth,
      cluster.size + delta,
    )
  )
    return false;
  fixCrc(newCluster, clusterHead, newCluster.length);
  // Positions in the SeekHead and Cues are from the Segment's data; past the old block they move by delta.
  const editAt = cluster.start + old.start;
  const clusterRel = cluster.start - segment.data;
  const blockInCluster = old.start - clusterHead;
  const moved = (pos: number) => (segment.data + pos > editAt ? pos + delta : pos);

  const patches: { at: number; data: Buffer }[] = [];
  const fh2 = await open(file, "r");
  try {
    if (segment.size >= 0) {
      const seg = Buffer.alloc(segment.sizeWidth);
      if (!writeSize(seg, 0, segment.sizeWidth, segment.size + delta)) return false;
      patches.push({ at: segment.data - segment.sizeWidth, data: seg });
    }
    for (const e of top.filter((t) => t.id === ID.seekHead || t.id === ID.cues || t.id === ID.info)) {
      const data = await readAt(fh2, e.data, e.size);
      for (const entry of children(data, 0, data.length)) {
        // The Segment's duration (ffmpeg's: the last packet's end by its default duration): the new end.
        if (e.id === ID.info && entry.id === ID.duration && (entry.size === 8 || entry.size === 4)) {
          if (entry.size === 8) data.writeDoubleBE(durationTicks, entry.data);
          else data.writeFloatBE(durationTicks, entry.data);
        }
        const fields = children(data, entry.data, entry.data + entry.size);
        if (e.id === ID.seekHead && entry.id === ID.seek) {
          const pos = fields.find((f) => f.id === ID.seekPosition);
          if (pos === undefined) continue;
          if (!writeUint(data, pos.data, pos.size, moved(readUint(data, pos.data, pos.size)))) return false;
        }
        if (e.id === ID.cues && entry.id === ID.cuePoint) {
          for (const tp of fields.filter((f) => f.id === ID.cueTrackPositions)) {
            const cue = children(data, tp.data, tp.data + tp.size);
            const at = cue.find((f) => f.id === ID.cueClusterPosition);
            const rel = cue.find((f) => f.id === ID.cueRelativePosition);
            if (at === undefined) continue;
            const pos = readUint(data, at.data, at.size);
            if (rel !== undefined && pos === clusterRel) {
              const r = readUint(data, rel.data, rel.size);
              if (r > blockInCluster && !writeUint(data, rel.data, rel.size, r + delta)) return false;
            }
            if (!writeUint(data, at.data, at.size, moved(pos))) return false;
          }
        }
      }
      fixCrc(data, 0, data.length);
      patches.push({ at: e.data > editAt ? e.data + delta : e.data, data });
    }
  } finally {
    await fh2.close();
  }

  // The file again: up to the cluster, the new cluster, the rest; then the patches at their new offsets.
  const tmp = `${file}.end`;
  const src = await open(file, "r");
  const dst = await open(tmp, "w");
  try {
    const copy = async (from: number, to: number, at: number) => {
      const chunk = Buffer.alloc(1 << 20);
      for (let p = from; p < to; ) {
        const { bytesRead } = await src.read(chunk, 0, Math.min(chunk.length, to - p), p);
        if (bytesRead <= 0) break;
        await dst.write(chunk, 0, bytesRead, at + (p - from));
        p += bytesRead;
      }
    };
    const { size: fileSize } = await src.stat();
    const clusterEnd = cluster.data + cluster.size;
    await copy(0, cluster.start, 0);
    await dst.write(newCluster, 0, newCluster.length, cluster.start);
    await copy(clusterEnd, fileSize, clusterEnd + delta);
    for (const p of patches) await dst.write(p.data, 0, p.data.length, p.at);
  } catch (err) {
    await dst.close();
    await rm(tmp, { force: true });
    throw err;
  } finally {
    await src.close();
  }
  await dst.close();
  await rename(tmp, file);
  return true;
}

/** The layout of `file` and the last block of its first track of `type`; null when there is none. */
async function lastBlockOf(
  file: string,
  type: number,
  clustersScanned: number,
): Promise<{ layout: Layout; target: Target } | null> {
  const fh = await open(file, "r");
  try {
    const layout = await readLayout(fh);
    const track = layout?.tracks.get(type);
    if (layout === null || track === undefined) return null;
    const target = await lastBlock(fh, layout, track, clustersScanned);
    return target === undefined ? null : { layout, target };
  } finally {
    await fh.close();
  }
}

/**
 * Sets the presentation of the video in `file` (Matroska or WebM, as ffmpeg writes it) to end at `end` seconds
 * by the BlockDuration of its last frame. False when the file's layout is not one edited here (an unknown
 * size, a value outgrowing its field) or the last frame starts at or after `end`.
 */
export async function endMatroskaVideoAt(file: string, end: number): Promise<boolean> {
  const found = await lastBlockOf(file, VIDEO, CLUSTERS_SCANNED);
  if (found === null) return false;
  const { layout, target } = found;
  const endTicks = Math.round((end * 1e9) / layout.scale);
  const duration = endTicks - target.time;
  if (duration <= 0) return false;
  // The Segment's Duration: the video's new end. The caller cuts any audio to the same end.
  const group = blockGroup(target, [ID.blockDuration], [uintElement(ID.blockDuration, duration)]);
  return replaceBlock(file, layout, target, group, endTicks);
}

/**
 * Declares that the last `samples` samples (at `sampleRate`) the audio of `file` decodes to are padding, by a
 * DiscardPadding element on its last block (made a BlockGroup): a decoder honouring it (ffmpeg's Matroska
 * demuxer passes it on as skip-samples side data) drops them. ffmpeg 5.1's Matroska muxer writes one only for
 * Opus. The Segment's Duration becomes `end` seconds. False when the file's layout is not one edited here.
 */
export async function discardMatroskaAudioEnd(
  file: string,
  samples: number,
  sampleRate: number,
  end: number,
): Promise<boolean> {
  if (!(samples > 0) || !(sampleRate > 0)) return false;
  // Audio blocks follow their decode order: the last one is in the last cluster holding any.
  const found = await lastBlockOf(file, AUDIO, 1);
  if (found === null) return false;
  const { layout, target } = found;
  const padding = Math.round((samples * 1e9) / sampleRate);
  const group = blockGroup(target, [ID.discardPadding], [intElement(ID.discardPadding, padding)]);
  return replaceBlock(file, layout, target, group, Math.round((end * 1e9) / layout.scale));
}
