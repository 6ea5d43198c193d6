/**
 * Ending an MP4's video presentation at a chosen time by its edit list (ISO 14496-12 8.6.6), for a fast
 * trim's copied tail: a B-frame stream keeps, past `end`, the reference frames that frames shown before `end`
 * are predicted from; the edit list's end hides them, and the last frame shown before `end` is given a sample
 * duration that ends there. ffmpeg's MP4 muxer writes an edit list over every sample it was given and has no
 * option for its length, so the moov it wrote is edited here: the video track's edit duration, its sample
 * durations (stts) and composition offsets (ctts), and the durations of mdhd, tkhd and mvhd.
 *
 * Hand-written rather than through an MP4 library: five small tables of one box tree are rewritten, and the
 * one MP4 library that writes boxes (mp4box.js) rebuilds whole files from its own model, which neither keeps
 * ffmpeg's boxes as they are nor edits a moov in place.
 */
import { open, rename } from "node:fs/promises";
import { boxes } from "./mp4-boxes.ts";

interface Node {
  type: string;
  /** Payload of a leaf box (null for a container). */
  payload: Buffer | null;
  children: Node[];
}

const CONTAINERS = new Set(["moov", "trak", "edts", "mdia", "minf", "stbl"]);

function parse(buf: Buffer, from: number, to: number): Node[] {
  return [...boxes(buf, from, to)].map((b) =>
    CONTAINERS.has(b.type)
      ? { type: b.type, payload: null, children: parse(buf, b.start, b.end) }
      : { type: b.type, payload: Buffer.from(buf.subarray(b.start, b.end)), children: [] },
  );
}

function serialize(node: Node): Buffer {
  const body = node.payload ?? Buffer.concat(node.children.map(serialize));
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length + 8, 0);
  head.write(node.type, 4, "latin1");
  return Buffer.concat([head, body]);
}

const find = (node: Node | undefined, ...types: string[]): Node | undefined =>
  types.reduce<Node | undefined>((n, t) => n?.children.find((c) => c.type === t), node);

/** One value per sample from a run-length table (stts, ctts): [count, value] entries from byte 8. */
function expand(payload: Buffer, signed: boolean): number[] {
  const out: number[] = [];
  const n = payload.readUInt32BE(4);
  for (let i = 0; i < n; i++) {
    const count = payload.readUInt32BE(8 + 8 * i);
    const value = signed ? payload.readInt32BE(12 + 8 * i) : payload.readUInt32BE(12 + 8 * i);
    for (let j = 0; j < count; j++) out.push(value);
  }
  return out;
}

function compress(values: readonly number[], version: number): Buffer {
  const runs: [number, number][] = [];
  for (const v of values) {
    const last = runs.at(-1);
    if (last !== undefined && last[1] === v) last[0]++;
    else runs.push([1, v]);
  }
  const out = Buffer.alloc(8 + 8 * runs.length);
  out.writeUInt32BE(version << 24, 0);
  out.writeUInt32BE(runs.length, 4);
  runs.forEach(([count, v], i) => {
    out.writeUInt32BE(count, 8 + 8 * i);
    if (v < 0) out.writeInt32BE(v, 12 + 8 * i);
    else out.writeUInt32BE(v, 12 + 8 * i);
  });
  return out;
}

/** Sets the duration field of a payload at `v0` or `v1` by its version (mvhd/mdhd 16/24, tkhd 20/28). */
function setDuration(payload: Buffer, v0: number, v1: number, value: number): void {
  if (payload[0] === 1) payload.writeBigUInt64BE(BigInt(value), v1);
  else payload.writeUInt32BE(value, v0);
}

function getDuration(payload: Buffer, v0: number, v1: number): number {
  return payload[0] === 1 ? Number(payload.readBigUInt64BE(v1)) : payload.readUInt32BE(v0);
}

interface Edit {
  /** Segment duration, movie time scale. */
  duration: number;
  /** Media time, -1 for an empty edit. */
  mediaTime: number;
}

function readEdits(payload: Buffer): Edit[] {
  const v1 = payload[0] === 1;
  const n = payload.readUInt32BE(4);
  const size = v1 ? 20 : 12;
  return Array.from({ length: n }, (_, i) => {
    const at = 8 + size * i;
    return v1
      ? { duration: Number(payload.readBigUInt64BE(at)), mediaTime: Number(payload.readBigInt64BE(at + 8)) }
      : { duration: payload.readUInt32BE(at), mediaTime: payload.readInt32BE(at + 4) };
  });
}

function writeEdits(edits: readonly Edit[]): Buffer {
  const out = Buffer.alloc(8 + 20 * edits.length);
  out.writeUInt32BE(1 << 24, 0);
  out.writeUInt32BE(edits.length, 4);
  edits.forEach((e, i) => {
    out.writeBigUInt64BE(BigInt(e.duration), 8 + 20 * i);
    out.writeBigInt64BE(BigInt(e.mediaTime), 16 + 20 * i);
    out.writeUInt32BE(0x00010000, 24 + 20 * i); // media rate 1.0
  });
  return out;
}

const handler = (trak: Node): string | undefined =>
  find(trak, "mdia", "hdlr")?.payload?.toString("latin1", 8, 12);

/**
 * Rewrites the moov so the video ends at `end` seconds of presentation. Returns false (the file untouched)
 * when its shape is not the one ffmpeg writes for a copy (one video track, one edit with media, an optional
 * empty edit before it) or when nothing is presented at or past `end`.
 */
function endMoov(moov: Node, end: number): boolean {
  const mvhd = find(moov, "mvhd")?.payload;
  const movieScale = mvhd?.readUInt32BE(mvhd[0] === 1 ? 20 : 12);
  const video = moov.children.filter((c) => c.type === "trak" && handler(c) === "vide");
  if (!mvhd || !movieScale || video.length !== 1) return false;
  const trak = video[0]!;
  const mdhd = find(trak, "mdia", "mdhd")?.payload;
  const stbl = find(trak, "mdia", "minf", "stbl");
  const stts = find(stbl, "stts");
  const ctts = find(stbl, "ctts");
  const elst = find(trak, "edts", "elst");
  const tkhd = find(trak, "tkhd")?.payload;
  if (!mdhd || !stts?.payload || !elst?.payload || !tkhd || !stbl) return false;
  const scale = mdhd.readUInt32BE(mdhd[0] === 1 ? 20 : 12);
  const edits = readEdits(elst.payload);
  const media = edits.filter((e) => e.mediaTime >= 0);
  const lead = edits.findIndex((e) => e.mediaTime >= 0);
  if (media.length !== 1 || lead < 0 || edits.length > 2 || scale === 0) return false;
  const empty = edits.slice(0, lead).reduce((s, e) => s + e.duration, 0) / movieScale;
  const edit = media[0]!;
  if (end <= empty) return false;

  const deltas = expand(stts.payload, false);
  const offsets = ctts?.payload ? expand(ctts.payload, true) : deltas.map(() => 0);
  if (offsets.length !== deltas.length) return false;
  const pts: number[] = [];
  let dts = 0;
  for (let i = 0; i < deltas.length; i++) {
    pts.push(dts + offsets[i]!);
    dts += deltas[i]!;
  }
  const mediaEnd = edit.mediaTime + Math.round((end - empty) * scale);
  // The frame shown last before `end`: it lasts until `end`.
  let last = -1;
  for (let i = 0; i < pts.length; i++) {
    if (pts[i]! < mediaEnd && (last < 0 || pts[i]! > pts[last]!)) last = i;
  }
  if (last < 0) return false;
  const presentedEnd = Math.max(...pts.map((p, i) => p + deltas[i]!));
  if (presentedEnd <= mediaEnd && pts.every((p) => p < mediaEnd)) return false;
  const shift = Math.max(1, mediaEnd - pts[last]!) - deltas[last]!;
  deltas[last]! += shift;
  // Later samples decode `shift` earlier or later; their composition offsets keep their presentation times.
  for (let i = last + 1; i < offsets.length; i++) offsets[i]! -= shift;

  stts.payload = compress(deltas, 0);
  const ctssVersion = offsets.some((o) => o < 0) ? 1 : 0;
  if (ctts !== undefined) ctts.payload = compress(offsets, ctssVersion);
  else if (offsets.some((o) => o !== 0)) return false;
  // Its bounds (composition shift, least/greatest offset, start/end) no longer hold; the box is optional.
  stbl.children = stbl.children.filter((c) => c.type !== "cslg");
  const editDuration = Math.round((end - empty) * movieScale);
  elst.payload = writeEdits(edits.map((e) => (e === edit ? { ...e, duration: editDuration } : e)));
  setDuration(
    mdhd,
    16,
    24,
    deltas.reduce((s, d) => s + d, 0),
  );
  const trackDuration = Math.round(end * movieScale);
  setDuration(tkhd, 20, 28, trackDuration);
  const others = moov.children
    .filter((c) => c.type === "trak" && c !== trak)
    .map((c) => {
      const p = find(c, "tkhd")?.payload;
      return p == null ? 0 : getDuration(p, 20, 28);
    });
  setDuration(mvhd, 16, 24, Math.max(trackDuration, ...others));
  return true;
}

/** Adds `delta` to every chunk offset (stco, co64) of the moov: the media data moved by as much. */
function shiftChunks(moov: Node, delta: number): boolean {
  for (const trak of moov.children.filter((c) => c.type === "trak")) {
    const stbl = find(trak, "mdia", "minf", "stbl");
    for (const box of stbl?.children ?? []) {
      const p = box.payload;
      if (p === null || (box.type !== "stco" && box.type !== "co64")) continue;
      const n = p.readUInt32BE(4);
      for (let i = 0; i < n; i++) {
        if (box.type === "co64") p.writeBigUInt64BE(p.readBigUInt64BE(8 + 8 * i) + BigInt(delta), 8 + 8 * i);
        else {
          const v = p.readUInt32BE(8 + 4 * i) + delta;
          if (v > 0xffffffff) return false;
          p.writeUInt32BE(v, 8 + 4 * i);
        }
      }
    }
  }
  return true;
}

/**
 * Ends the video of the MP4 `file` (written by ffmpeg, moov before or after mdat) at `end` seconds: its edit
 * list stops there, and the frame shown last before `end` lasts until it. False when the file is not of the
 * shape handled (see endMoov); it is then left as it was.
 */
export async function endVideoAt(file: string, end: number): Promise<boolean> {
  const fh = await open(file, "r");
  const top: { type: string; offset: number; size: number }[] = [];
  let moovBuf: Buffer;
  let fileSize: number;
  try {
    fileSize = (await fh.stat()).size;
    const head = Buffer.alloc(16);
    for (let offset = 0; offset + 8 <= fileSize; ) {
      await fh.read(head, 0, 16, offset);
      let size = head.readUInt32BE(0);
      if (size === 1) size = Number(head.readBigUInt64BE(8));
      else if (size === 0) size = fileSize - offset;
      if (size < 8) return false;
      top.push({ type: head.toString("latin1", 4, 8), offset, size });
      offset += size;
    }
    const m = top.find((b) => b.type === "moov");
    if (m === undefined || m.size > 64 * 1024 * 1024) return false;
    moovBuf = Buffer.alloc(m.size);
    await fh.read(moovBuf, 0, m.size, m.offset);
  } finally {
    await fh.close();
  }
  const moovBox = top.find((b) => b.type === "moov")!;
  const moov: Node = { type: "moov", payload: null, children: parse(moovBuf, 8, moovBuf.length) };
  if (!endMoov(moov, end)) return false;
  let out = serialize(moov);
  const delta = out.length - moovBox.size;
  const mdatAfter = top.some((b) => b.type === "mdat" && b.offset > moovBox.offset);
  if (mdatAfter && delta !== 0) {
    if (!shiftChunks(moov, delta)) return false;
    out = serialize(moov);
  }
  if (delta === 0) {
    const w = await open(file, "r+");
    try {
      await w.write(out, 0, out.length, moovBox.offset);
    } finally {
      await w.close();
    }
    return true;
  }
  // The moov changed size: the file is written again around it (the media data moves with it).
  const tmp = `${file}.end`;
  const src = await open(file, "r");
  const dst = await open(tmp, "w");
  try {
    const copy = async (from: number, to: number) => {
      const chunk = Buffer.alloc(4 * 1024 * 1024);
      for (let at = from; at < to; ) {
        const { bytesRead } = await src.read(chunk, 0, Math.min(chunk.length, to - at), at);
        if (bytesRead <= 0) break;
        await dst.write(chunk, 0, bytesRead);
        at += bytesRead;
      }
    };
    await copy(0, moovBox.offset);
    await dst.write(out);
    await copy(moovBox.offset + moovBox.size, fileSize);
  } finally {
    await src.close();
    await dst.close();
  }
  await rename(tmp, file);
  return true;
}
