/** Reading ISO-BMFF (MP4/MOV) boxes from a buffer: shared by the output reader and the input guess. */

export interface Box {
  type: string;
  /** Payload start. */
  start: number;
  end: number;
}

/** The boxes between `from` and `to`; stops at the first malformed size instead of reading past the end. */
export function* boxes(buf: Buffer, from: number, to: number): Generator<Box> {
  let offset = from;
  while (offset + 8 <= to) {
    let size = buf.readUInt32BE(offset);
    let header = 8;
    if (size === 1) {
      if (offset + 16 > to) return;
      size = Number(buf.readBigUInt64BE(offset + 8));
      header = 16;
    } else if (size === 0) size = to - offset;
    if (size < header || offset + size > to) return;
    yield {
      type: buf.toString("latin1", offset + 4, offset + 8),
      start: offset + header,
      end: offset + size,
    };
    offset += size;
  }
}

export const child = (buf: Buffer, box: Box | undefined, type: string): Box | undefined =>
  box === undefined ? undefined : [...boxes(buf, box.start, box.end)].find((b) => b.type === type);

export const path = (buf: Buffer, box: Box | undefined, ...types: string[]): Box | undefined =>
  types.reduce<Box | undefined>((b, t) => child(buf, b, t), box);

/** [timescale, duration] of an mvhd or mdhd payload (version 0 or 1). */
export function timing(buf: Buffer, box: Box): [number, number] {
  return buf[box.start] === 1
    ? [buf.readUInt32BE(box.start + 20), Number(buf.readBigUInt64BE(box.start + 24))]
    : [buf.readUInt32BE(box.start + 12), buf.readUInt32BE(box.start + 16)];
}

/**
 * Whether an MP4 file is fragmented: a moof box among its top-level boxes before the first mdat (its first
 * fragment follows the moov). Reads box headers only, at most 16 of them.
 */
export async function hasFragments(
  read: (offset: number, length: number) => Promise<Uint8Array>,
): Promise<boolean> {
  let offset = 0;
  for (let n = 0; n < 16; n++) {
    const head = Buffer.from(await read(offset, 16));
    if (head.length < 8) return false;
    const type = head.toString("latin1", 4, 8);
    if (type === "moof") return true;
    if (type === "mdat") return false;
    let size = head.readUInt32BE(0);
    if (size === 1 && head.length >= 16) size = Number(head.readBigUInt64BE(8));
    if (size < 8) return false;
    offset += size;
  }
  return false;
}
