/**
 * A JPEG with an EXIF APP1 segment whose IFD0 holds one entry, Orientation = `orientation`, inserted after the
 * SOI marker, in either TIFF byte order. Shared by the Worker's image tests and the engine's (no imports).
 */
export function withExifOrientation(
  jpeg: Uint8Array,
  orientation: number,
  order: "II" | "MM" = "MM",
): Uint8Array {
  const le = order === "II";
  const u16 = (v: number) => (le ? [v & 0xff, v >> 8] : [v >> 8, v & 0xff]);
  const u32 = (v: number) => (le ? [v & 0xff, 0, 0, 0] : [0, 0, 0, v & 0xff]);
  const tiff = [
    ...[order.charCodeAt(0), order.charCodeAt(1)],
    ...u16(42),
    ...u32(8), // IFD0 right after the header
    ...u16(1), // one entry
    ...[...u16(0x0112), ...u16(3), ...u32(1), ...u16(orientation), 0, 0], // Orientation, SHORT, 1 value
    ...[0, 0, 0, 0], // no next IFD
  ];
  const payload = [0x45, 0x78, 0x69, 0x66, 0, 0, ...tiff]; // "Exif\0\0"
  const length = payload.length + 2;
  const segment = [0xff, 0xe1, length >> 8, length & 0xff, ...payload];
  const out = new Uint8Array(jpeg.length + segment.length);
  out.set(jpeg.subarray(0, 2));
  out.set(segment, 2);
  out.set(jpeg.subarray(2), 2 + segment.length);
  return out;
}
