import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signFileUrl } from "../../src/files/signing";
import { deleteExpiredFiles } from "../../src/files/store";
import { BASE, call, db, problem } from "../helpers/api";
import { bytes, SECRET, stored } from "./stored";

describe("GET /files/{file_id}/{name}", () => {
  it("serves the file with type, length, ETag and disposition, without a key; HEAD too", async () => {
    const { path } = await stored({ name: "clip one.mp4" });
    const response = await call(path);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("video/mp4");
    expect(response.headers.get("content-length")).toBe("1000");
    expect(response.headers.get("accept-ranges")).toBe("bytes");
    expect(response.headers.get("content-disposition")).toBe('inline; filename="clip one.mp4"');
    expect(response.headers.get("etag")).toMatch(/^"[0-9a-f]+"$/);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes);

    const head = await call(path, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("1000");
    expect(await head.text()).toBe("");
  });

  it("every answer carries Content-Security-Policy: default-src 'none'; sandbox (200, 206, 304, HEAD, errors)", async () => {
    const { path } = await stored({ name: "page.html" });
    const etag = (await call(path)).headers.get("etag")!;
    const answers = [
      await call(path),
      await call(path, { method: "HEAD" }),
      await call(path, { headers: { Range: "bytes=0-9" } }),
      await call(path, { headers: { "If-None-Match": etag } }),
      await call(path.replace(/expires=(\d+)/, (_m, e: string) => `expires=${Number(e) + 1}`)),
      await call(path.split("?")[0]!),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 206, 304, 403, 400]);
    for (const response of answers) {
      expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
      await response.body?.cancel();
    }
  });

  it("Range → 206 with Content-Range; suffix ranges too", async () => {
    const { path } = await stored();
    const part = await call(path, { headers: { Range: "bytes=10-19" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 10-19/1000");
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.slice(10, 20));
    const tail = await call(path, { headers: { Range: "bytes=-5" } });
    expect(tail.status).toBe(206);
    expect(tail.headers.get("content-range")).toBe("bytes 995-999/1000");
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.slice(995));
    const open = await call(path, { headers: { Range: "bytes=990-" } });
    expect(open.headers.get("content-range")).toBe("bytes 990-999/1000");
  });

  it("If-None-Match with the ETag → 304", async () => {
    const { path } = await stored();
    const etag = (await call(path)).headers.get("etag")!;
    const again = await call(path, { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
  });

  it("a tampered signature, name or expiry → 403 problem", async () => {
    const { path } = await stored();
    const tampered = [
      path.replace(/signature=([0-9a-f])/, (_m, c: string) => `signature=${c === "0" ? "1" : "0"}`),
      path.replace("out.bin", "other.bin"),
      path.replace(/expires=(\d+)/, (_m, e: string) => `expires=${Number(e) + 1}`),
    ];
    for (const url of tampered) {
      const response = await call(url);
      expect(response.status).toBe(403);
      expect((await problem(response)).code).toBe("PERMISSION_FORBIDDEN");
    }
  });

  it("an expired URL → 403; missing or malformed query → 400", async () => {
    const { file } = await stored();
    const expired = await signFileUrl(BASE, SECRET, file.id, file.name, Date.now() - 1000);
    const response = await call(expired.slice(BASE.length));
    expect(response.status).toBe(403);
    expect((await problem(response)).detail).toMatch(/expired/);
    expect((await call(`/files/${file.id}/${file.name}`)).status).toBe(400);
    expect((await call(`/files/${file.id}/${file.name}?expires=x&signature=y`)).status).toBe(400);
  });

  it("after retention the object is deleted and its URL answers 404", async () => {
    const { path } = await stored({ expiresAt: Date.now() + 60_000 });
    expect((await call(path)).status).toBe(200);
    expect(await deleteExpiredFiles(db(), env.FILES, Date.now() + 61_000)).toBeGreaterThanOrEqual(1);
    const response = await call(path);
    expect(response.status).toBe(404);
    expect((await problem(response)).code).toBe("RESOURCE_NOT_FOUND");
  });
});
