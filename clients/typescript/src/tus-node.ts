import { Readable } from "node:stream";
import { Upload } from "tus-js-client";
import { isAsyncIterable, isReadableStream, requireSize, type TusPlatform } from "./tus-platform.ts";

/**
 * Node (node:http): tus-js-client's Node build reads Buffers and Readables. A Blob (`fs.openAsBlob(path)`, a
 * File) is read a chunk at a time through this reader, so any offset can be re-read when an upload resumes.
 */
function blobReader(blob: Blob) {
  return {
    openFile: async () => ({
      size: blob.size,
      slice: async (start: number, end: number) => {
        // tus-js-client counts a chunk by its `size` (as its own Buffer source sets it), not `length`.
        const bytes = Buffer.from(await blob.slice(start, end).arrayBuffer());
        return { value: Object.assign(bytes, { size: bytes.length }), done: end >= blob.size };
      },
      close: () => {},
    }),
  };
}

export const nodeTus: TusPlatform = {
  Upload,
  async open(source, size) {
    if (source instanceof Blob) return { file: source, size: source.size, fileReader: blobReader(source) };
    if (source instanceof Uint8Array)
      return { file: Buffer.from(source.buffer, source.byteOffset, source.byteLength), size: null };
    // A file's ReadStream: tus-js-client reopens the file at any offset (its size from the file).
    if (source instanceof Readable && typeof (source as { path?: unknown }).path === "string")
      return { file: source, size: size ?? null };
    if (source instanceof Readable) return { file: source, size: requireSize(size) };
    if (isReadableStream(source))
      return {
        file: Readable.fromWeb(source as import("node:stream/web").ReadableStream),
        size: requireSize(size),
      };
    if (isAsyncIterable(source)) return { file: Readable.from(source), size: requireSize(size) };
    throw new TypeError("upload takes a Blob, a File, a Uint8Array or a stream of bytes");
  },
};
