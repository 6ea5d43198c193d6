import { describe, expect, it } from "vitest";
import { call, newAccount, newKey, problem } from "../helpers/api";
import { bytes, createUpload, head, patch, sha1Base64, sha256Hex, TUS } from "./support";

type UploadJson = {
  id: string;
  state: string;
  size_bytes: number | null;
  offset: number;
  media_type: string | null;
  filename: string | null;
  created_at: string;
  completed_at: string | null;
  expires_at: string;
};
type Page = { has_next: boolean; next_cursor: string; results: UploadJson[] };

const view = async (key: string, id: string) =>
  (await (await call(`/v1/uploads/${id}`, { key })).json()) as UploadJson;

describe("GET /v1/uploads/{id}/content: the stored bytes, to their owner", () => {
  it("equals the file (sha256), Range 206 and 416, ETag 304; 409 while incomplete", async () => {
    const { key, accountId } = await newAccount();
    const data = bytes(1_500_000, 41);
    const { id, path } = await createUpload(key, data.byteLength, {
      "Upload-Metadata": `filename ${btoa("clip.bin")}`,
    });
    expect((await patch(key, path, 0, data.slice(0, 1000))).status).toBe(204);
    const early = await call(`${path}/content`, { key });
    expect(early.status).toBe(409);
    expect((await problem(early)).detail).toContain("1000 of 1500000");
    expect((await patch(key, path, 1000, data.slice(1000))).status).toBe(204);

    const whole = await call(`${path}/content`, { key });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("application/octet-stream");
    expect(whole.headers.get("content-length")).toBe(String(data.byteLength));
    expect(whole.headers.get("content-disposition")).toBe("inline; filename=clip.bin");
    expect(whole.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    // An answer to a key carries its rate limit, a download's too.
    expect(whole.headers.get("ratelimit")).toMatch(/^"default";r=\d+;t=\d+$/);
    expect(await sha256Hex(await whole.arrayBuffer())).toBe(await sha256Hex(data));

    const ranged = await call(`${path}/content`, { key, headers: { Range: "bytes=1000-1999" } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe(`bytes 1000-1999/${data.byteLength}`);
    expect(new Uint8Array(await ranged.arrayBuffer())).toEqual(data.slice(1000, 2000));
    const suffix = await call(`${path}/content`, { key, headers: { Range: "bytes=-10" } });
    expect(new Uint8Array(await suffix.arrayBuffer())).toEqual(data.slice(-10));
    const past = await call(`${path}/content`, { key, headers: { Range: `bytes=${data.byteLength}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${data.byteLength}`);
    const etag = whole.headers.get("etag")!;
    expect((await call(`${path}/content`, { key, headers: { "If-None-Match": etag } })).status).toBe(304);

    // A read key reads it; another account and no key do not.
    const readKey = await newKey(accountId, { scopes: ["read"] });
    expect((await call(`${path}/content`, { key: readKey })).status).toBe(200);
    const other = await newAccount();
    const foreign = await call(`${path}/content`, { key: other.key });
    expect(foreign.status).toBe(404);
    expect((await problem(foreign)).detail).toBe(
      (await problem(await call("/v1/uploads/01JD5Z8X4QK3M7R2T9V6W1Y0AB/content", { key: other.key })))
        .detail,
    );
    expect((await call(`${path}/content`)).status).toBe(401);
    expect((await view(key, id)).state).toBe("complete");
  });
});

describe("GET /v1/uploads/{id} and GET /v1/uploads", () => {
  it("the upload as JSON: id, sizes, offset, state, filename, media type, times", async () => {
    const { key } = await newAccount();
    const before = Date.now();
    const { id, path } = await createUpload(key, 5000, { "Upload-Metadata": `filename ${btoa("a.mp4")}` });
    expect((await patch(key, path, 0, bytes(1234, 2))).status).toBe(204);
    const got = await view(key, id);
    expect(got).toMatchObject({
      id,
      state: "uploading",
      size_bytes: 5000,
      offset: 1234,
      media_type: null,
      filename: "a.mp4",
      completed_at: null,
    });
    expect(Date.parse(got.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(got.expires_at)).toBeGreaterThan(Date.parse(got.created_at));
  });

  it("lists the account's live uploads newest first, in cursor pages; deleted ones and other accounts' not", async () => {
    const { key } = await newAccount();
    const other = await newAccount();
    await createUpload(other.key, 10);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { id, path } = await createUpload(key, 100);
      if (i === 1) expect((await patch(key, path, 0, bytes(100, i))).status).toBe(204);
      if (i === 2) expect((await patch(key, path, 0, bytes(40, i))).status).toBe(204);
      ids.push(id);
      // ULIDs of one millisecond are ordered too, but a pause keeps created_at ordered for the reader.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const deleted = ids[3]!;
    expect((await call(`/v1/uploads/${deleted}`, { method: "DELETE", key, headers: TUS })).status).toBe(204);
    const live = ids.filter((id) => id !== deleted).reverse();

    const first = (await (await call("/v1/uploads?limit=2", { key })).json()) as Page;
    expect(first.results.map((u) => u.id)).toEqual(live.slice(0, 2));
    expect(first.has_next).toBe(true);
    const second = (await (
      await call(`/v1/uploads?limit=2&cursor=${first.next_cursor}`, { key })
    ).json()) as Page;
    expect(second.results.map((u) => u.id)).toEqual(live.slice(2, 4));
    expect(second).toMatchObject({ has_next: false, next_cursor: "" });
    // Each entry is what GET /v1/uploads/{id} answers, the live offset of an incomplete one included.
    const all = [...first.results, ...second.results];
    for (const entry of all) expect(entry).toEqual(await view(key, entry.id));
    expect(all.find((u) => u.id === ids[1])).toMatchObject({ state: "complete", offset: 100 });
    expect(all.find((u) => u.id === ids[2])).toMatchObject({ state: "uploading", offset: 40 });

    const bad = await call("/v1/uploads?cursor=nope", { key });
    expect(bad.status).toBe(400);
    expect((await problem(bad)).errors?.[0]?.field).toBe("cursor");
    expect((await call("/v1/uploads")).status).toBe(401);
  });
});

describe("checksums: sha1 (the tus MUST) and sha256", () => {
  it("announces both; a sha1-checked PATCH is kept, a wrong sha1 is 460 and keeps nothing", async () => {
    const { key } = await newAccount();
    const options = await call("/v1/uploads", { method: "OPTIONS" });
    expect(options.headers.get("tus-checksum-algorithm")).toBe("sha1,sha256");
    const data = bytes(300_000, 43);
    const { id, path } = await createUpload(key, data.byteLength);
    const wrong = await patch(key, path, 0, data.slice(0, 1000), {
      "Upload-Checksum": `sha1 ${await sha1Base64(data.slice(1, 1001))}`,
    });
    expect(wrong.status).toBe(460);
    expect((await problem(wrong)).detail).toContain("sha1");
    expect((await head(key, path)).headers.get("upload-offset")).toBe("0");
    const right = await patch(key, path, 0, data.slice(0, 1000), {
      "Upload-Checksum": `sha1 ${await sha1Base64(data.slice(0, 1000))}`,
    });
    expect(right.status).toBe(204);
    const rest = await patch(key, path, 1000, data.slice(1000), {
      "Upload-Checksum": `SHA1 ${await sha1Base64(data.slice(1000))}`,
    });
    expect(rest.status).toBe(204);
    const content = await call(`/v1/uploads/${id}/content`, { key });
    expect(await sha256Hex(await content.arrayBuffer())).toBe(await sha256Hex(data));
  });

  it.each([
    ["a sha1 digest of 32 bytes", `sha1 ${btoa("x".repeat(32))}`],
    ["md5", "md5 CY9rzUYh03PK3k6DJie09g=="],
  ])("400 naming Upload-Checksum: %s", async (_, checksum) => {
    const { key } = await newAccount();
    const { path } = await createUpload(key, 10);
    const response = await patch(key, path, 0, bytes(10), { "Upload-Checksum": checksum });
    expect(response.status).toBe(400);
    expect((await problem(response)).errors?.[0]?.field).toBe("Upload-Checksum");
  });
});

describe("X-HTTP-Method-Override (tus core)", () => {
  it("a POST that says PATCH appends; one that says DELETE terminates", async () => {
    const { key } = await newAccount();
    const data = bytes(100, 47);
    const { path } = await createUpload(key, data.byteLength);
    const overridden = await call(path, {
      method: "POST",
      key,
      headers: {
        ...TUS,
        "X-HTTP-Method-Override": "PATCH",
        "Content-Type": "application/offset+octet-stream",
        "Upload-Offset": "0",
      },
      body: data,
    });
    expect(overridden.status).toBe(204);
    expect(overridden.headers.get("upload-offset")).toBe("100");
    const deleted = await call(path, {
      method: "POST",
      key,
      headers: { ...TUS, "X-HTTP-Method-Override": "DELETE" },
    });
    expect(deleted.status).toBe(204);
    expect((await head(key, path)).status).toBe(404);
  });
});
