/// <reference path="./tus-browser-build.d.ts" />
// tus-js-client's browser build, named by path: bundlers that do not read its package's `browser` field (a
// neutral platform, Deno's bundlers) would otherwise take its Node build.
import { Upload } from "tus-js-client/lib.esm/browser/index.js";
import { FetchHttpStack } from "./tus-fetch.ts";
import { isAsyncIterable, isReadableStream, requireSize, type TusPlatform } from "./tus-platform.ts";

/** Browsers (XMLHttpRequest), Workers (fetch): a Blob or File as it is, bytes as a Blob, a stream through a reader. */
export const browserTus: TusPlatform = {
  Upload,
  // Workers and service workers have fetch but no XMLHttpRequest, which tus-js-client's browser build uses.
  defaults: () => ("XMLHttpRequest" in globalThis ? {} : { httpStack: new FetchHttpStack() }),
  async open(source, size) {
    if (source instanceof Blob) return { file: source, size: null };
    if (source instanceof Uint8Array)
      return { file: new Blob([source as Uint8Array<ArrayBuffer>]), size: null };
    if (isReadableStream(source)) return { file: source.getReader(), size: requireSize(size) };
    if (isAsyncIterable(source)) {
      const iterator = source[Symbol.asyncIterator]();
      const read = async (): Promise<
        { done: true; value: undefined } | { done: false; value: Uint8Array }
      > => {
        const next = await iterator.next();
        return next.done ? { done: true, value: undefined } : { done: false, value: next.value };
      };
      return { file: { read }, size: requireSize(size) };
    }
    throw new TypeError("upload takes a Blob, a File, a Uint8Array or a stream of bytes");
  },
};
