/** A byte range of a representation: `length` bytes from `offset`. */
export type ByteRange = { offset: number; length: number };

const SPEC = /^(\d*)-(\d*)$/;

/**
 * A Range header against a file of `size` bytes (RFC 9110 §14): the one range to serve (206), "unsatisfiable"
 * (416), or undefined to serve the whole file (200) — when there is no header, when it is not a valid
 * single `bytes` range (a server ignores what it does not understand), and for several ranges, which we
 * answer whole rather than as multipart/byteranges.
 */
export function parseRange(
  header: string | null | undefined,
  size: number,
): ByteRange | "unsatisfiable" | undefined {
  if (!header) return undefined;
  const match = /^\s*bytes\s*=\s*(.*?)\s*$/i.exec(header);
  if (!match) return undefined;
  const specs = match[1]!.split(",").map((spec) => spec.trim());
  if (specs.length !== 1) return undefined;
  const parts = SPEC.exec(specs[0]!);
  if (!parts) return undefined;
  const [, first, last] = parts as unknown as [string, string, string];
  if (first === "") {
    // bytes=-n: the last n bytes (all of them when n ≥ size).
    if (last === "") return undefined;
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    const length = Math.min(suffix, size);
    return { offset: size - length, length };
  }
  const start = Number(first);
  const end = last === "" ? Number.POSITIVE_INFINITY : Number(last);
  if (end < start) return undefined;
  if (start >= size) return "unsatisfiable";
  return { offset: start, length: Math.min(end, size - 1) - start + 1 };
}

/** Content-Range of a served range. */
export const contentRange = (range: ByteRange, size: number) =>
  `bytes ${range.offset}-${range.offset + range.length - 1}/${size}`;
