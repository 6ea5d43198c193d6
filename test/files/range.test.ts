import { describe, expect, it } from "vitest";
import { parseRange } from "../../src/files/range";
import { call, problem } from "../helpers/api";
import { bytes, stored } from "./stored";

describe("parseRange (RFC 9110 §14) against a 1000-byte file", () => {
  it.each([
    ["bytes=0-0", { offset: 0, length: 1 }],
    ["bytes=10-19", { offset: 10, length: 10 }],
    ["bytes=990-", { offset: 990, length: 10 }],
    ["bytes=990-5000", { offset: 990, length: 10 }],
    ["bytes=999-999", { offset: 999, length: 1 }],
    ["bytes=-5", { offset: 995, length: 5 }],
    ["bytes=-5000", { offset: 0, length: 1000 }],
    ["BYTES = 1-2", { offset: 1, length: 2 }],
  ])("%s → %o", (header, range) => {
    expect(parseRange(header, 1000)).toEqual(range);
  });

  it.each(["bytes=1000-", "bytes=1000-1005", "bytes=5000-", "bytes=-0"])("%s → unsatisfiable", (header) => {
    expect(parseRange(header, 1000)).toBe("unsatisfiable");
  });

  it.each([
    [null, "no header"],
    ["bytes=5-2", "last before first"],
    ["bytes=abc", "not numbers"],
    ["bytes=-", "neither end"],
    ["items=0-5", "another unit"],
    ["bytes=0-1,5-6", "several ranges (answered whole)"],
    ["bytes=1.5-2", "not integers"],
  ])("%s (%s) → whole file", (header: string | null, _why: string) => {
    expect(parseRange(header, 1000)).toBeUndefined();
  });

  it("nothing of an empty file is satisfiable", () => {
    expect(parseRange("bytes=0-", 0)).toBe("unsatisfiable");
    expect(parseRange("bytes=-1", 0)).toBe("unsatisfiable");
  });
});

describe("Range on GET /files/{file_id}/{name}", () => {
  it("a range that starts past the end → 416 problem+json with Content-Range: bytes */size", async () => {
    const { path } = await stored();
    for (const range of ["bytes=1000-", "bytes=1000-2000", "bytes=-0"]) {
      const response = await call(path, { headers: { Range: range } });
      expect(response.status, range).toBe(416);
      expect(response.headers.get("content-range")).toBe("bytes */1000");
      expect(response.headers.get("x-request-id")).toMatch(/^[0-9A-Z]{26}$/);
      const body = await problem(response);
      expect(body).toMatchObject({
        status: 416,
        code: "RANGE_NOT_SATISFIABLE",
        title: "Range Not Satisfiable",
      });
      expect(body.type).toMatch(/\/errors\/range-not-satisfiable$/);
    }
  });

  it("a range that runs past the end is cut at the end; a suffix longer than the file is all of it", async () => {
    const { path } = await stored();
    const tail = await call(path, { headers: { Range: "bytes=995-5000" } });
    expect(tail.status).toBe(206);
    expect(tail.headers.get("content-range")).toBe("bytes 995-999/1000");
    expect(tail.headers.get("content-length")).toBe("5");
    expect(tail.headers.get("x-request-id")).toMatch(/^[0-9A-Z]{26}$/);
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.slice(995));
    const all = await call(path, { headers: { Range: "bytes=-4000" } });
    expect(all.status).toBe(206);
    expect(all.headers.get("content-range")).toBe("bytes 0-999/1000");
    expect(new Uint8Array(await all.arrayBuffer())).toEqual(bytes);
  });

  it("several ranges, or an invalid one, → 200 with the whole file", async () => {
    const { path } = await stored();
    for (const range of ["bytes=0-1,5-6", "bytes=5-2", "lines=1-2"]) {
      const response = await call(path, { headers: { Range: range } });
      expect(response.status, range).toBe(200);
      expect(response.headers.get("content-range")).toBeNull();
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes);
    }
  });

  it("HEAD with a range → 206 headers without a body", async () => {
    const { path } = await stored();
    const head = await call(path, { method: "HEAD", headers: { Range: "bytes=100-199" } });
    expect(head.status).toBe(206);
    expect(head.headers.get("content-range")).toBe("bytes 100-199/1000");
    expect(head.headers.get("content-length")).toBe("100");
    expect(await head.text()).toBe("");
  });

  it("If-Range: the range while the ETag matches, the whole file once it does not", async () => {
    const { path } = await stored();
    const etag = (await call(path)).headers.get("etag")!;
    const same = await call(path, { headers: { Range: "bytes=0-9", "If-Range": etag } });
    expect(same.status).toBe(206);
    expect(new Uint8Array(await same.arrayBuffer())).toEqual(bytes.slice(0, 10));
    const stale = await call(path, { headers: { Range: "bytes=0-9", "If-Range": '"stale"' } });
    expect(stale.status).toBe(200);
    expect(new Uint8Array(await stale.arrayBuffer())).toEqual(bytes);
    const staleAndPastEnd = await call(path, { headers: { Range: "bytes=5000-", "If-Range": '"stale"' } });
    expect(staleAndPastEnd.status).toBe(200);
    await staleAndPastEnd.arrayBuffer();
  });

  it("an empty file: any range → 416 bytes */0; no range → 200 empty", async () => {
    const { path } = await stored({ body: new Uint8Array(0) });
    const whole = await call(path);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-length")).toBe("0");
    const range = await call(path, { headers: { Range: "bytes=0-" } });
    expect(range.status).toBe(416);
    expect(range.headers.get("content-range")).toBe("bytes */0");
    await range.arrayBuffer();
  });
});
