import { create as contentDisposition } from "content-disposition";
import type { FileRow } from "../db/schema";
import { ApiError } from "../errors/api-error";
import { type ByteRange, contentRange, parseRange } from "./range";

/** What serving needs of a stored file (an output's row, or a complete upload's). */
export type ServedFile = Pick<FileRow, "r2Key" | "sizeBytes" | "name" | "contentType">;

/** A UTF-16 half without its other half (a name cut mid-character before names were cut by code point). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * RFC 6266 (content-disposition, jshttp): an ASCII name as `filename`, any other as `filename*=UTF-8''…` (the
 * exact name) with an ASCII `filename` fallback, control characters included, so no stored name can break
 * the header. A lone surrogate, which no UTF-8 can encode, becomes U+FFFD instead of an exception.
 */
function disposition(name: string) {
  return contentDisposition(name.replace(LONE_SURROGATE, "\uFFFD"), { type: "inline" });
}

function fileHeaders(file: Pick<FileRow, "name" | "contentType">, object: R2Object) {
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  headers.set("Content-Type", file.contentType);
  headers.set("ETag", object.httpEtag);
  headers.set("Accept-Ranges", "bytes");
  headers.set("Content-Disposition", disposition(file.name));
  headers.set("Cache-Control", "private, max-age=3600");
  return headers;
}

/** If-Range: the Range applies only while the file is the one the client has (strong ETag match). */
const rangeStillApplies = (request: Request, etag: string) => {
  const ifRange = request.headers.get("if-range");
  return ifRange === null || ifRange.trim() === etag;
};

const gone = () => new ApiError("RESOURCE_NOT_FOUND", "The file no longer exists.");

/**
 * Answers GET or HEAD for a stored file: 200, 206 for one satisfiable byte range, 304 when a precondition
 * (If-None-Match, If-Modified-Since) says the client's copy is current, 416 for a range past the end. The
 * range is decided here from the file's size, so R2 is only ever asked for bytes that exist; conditional
 * requests are evaluated by R2 (`onlyIf`).
 */
export async function serveFile(bucket: R2Bucket, file: ServedFile, request: Request): Promise<Response> {
  const wanted = parseRange(request.headers.get("range"), file.sizeBytes);
  if (wanted === "unsatisfiable") {
    const head = await bucket.head(file.r2Key);
    if (!head) throw gone();
    if (rangeStillApplies(request, head.httpEtag)) {
      throw new ApiError(
        "RANGE_NOT_SATISFIABLE",
        `The range ${request.headers.get("range")} asks for no byte of this ${head.size}-byte file.`,
        { headers: { "Content-Range": `bytes */${head.size}`, "Accept-Ranges": "bytes" } },
      );
    }
    return serve(bucket, file, request, undefined);
  }
  return serve(bucket, file, request, wanted);
}

async function serve(bucket: R2Bucket, file: ServedFile, request: Request, wanted: ByteRange | undefined) {
  const first = await bucket.get(file.r2Key, {
    onlyIf: request.headers,
    ...(wanted ? { range: wanted } : {}),
  });
  if (!first) throw gone();
  if (!("body" in first)) return new Response(null, { status: 304, headers: fileHeaders(file, first) });
  let object: R2ObjectBody | null = first;
  let range = wanted;
  if (range && !rangeStillApplies(request, first.httpEtag)) {
    // The client's copy is stale: the whole current file instead of a piece of it.
    await first.body.cancel();
    object = await bucket.get(file.r2Key);
    if (!object) throw gone();
    range = undefined;
  }
  const headers = fileHeaders(file, object);
  if (request.method === "HEAD") await object.body.cancel();
  const body = request.method === "HEAD" ? null : object.body;
  if (range) {
    headers.set("Content-Range", contentRange(range, object.size));
    headers.set("Content-Length", String(range.length));
    return new Response(body, { status: 206, headers });
  }
  headers.set("Content-Length", String(object.size));
  return new Response(body, { status: 200, headers });
}
