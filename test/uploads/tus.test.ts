import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { UploadObject, UploadRecord } from "../../src/uploads/upload-object";
import { call, newAccount, newKey, problem } from "../helpers/api";
import { bytes, createUpload, cutOff, head, OCTETS, patch, sha256Base64, sha256Hex, TUS } from "./support";

const MiB = 1024 * 1024;
/** The first bytes of an MP4 (an ftyp box): what the sniffer names video/mp4. */
const FTYP = new Uint8Array([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0, 0, 2, 0]);

const objectOf = (id: string) => env.UPLOADS.get(env.UPLOADS.idFromName(id));
const stored = async (id: string) =>
  runInDurableObject(
    objectOf(id),
    (_o: UploadObject, state) => state.storage.kv.get<UploadRecord>("record")!,
  );
async function r2Bytes(accountId: string, id: string) {
  const object = await env.FILES.get(`accounts/${accountId}/uploads/${id}`);
  return object ? new Uint8Array(await object.arrayBuffer()) : null;
}
type UploadJson = {
  id: string;
  state: string;
  size_bytes: number;
  offset: number;
  media_type: string | null;
};

describe("tus discovery and creation", () => {
  it("OPTIONS /v1/uploads answers the capabilities without a key", async () => {
    const response = await call("/v1/uploads", { method: "OPTIONS" });
    expect(response.status).toBe(204);
    expect(response.headers.get("tus-version")).toBe("1.0.0");
    expect(response.headers.get("tus-extension")?.split(",")).toEqual([
      "creation",
      "creation-with-upload",
      "expiration",
      "termination",
      "checksum",
    ]);
    expect(response.headers.get("tus-max-size")).toBe(String(5 * 1024 ** 3));
    expect(response.headers.get("tus-checksum-algorithm")).toBe("sha1,sha256");
  });

  it("creates an upload: 201, Location, offset 0, expiry 24 h ahead", async () => {
    const { key } = await newAccount();
    const before = Date.now();
    const { response, path } = await createUpload(key, 1000, {
      "Upload-Metadata": `filename ${btoa("clip.mp4")}`,
    });
    expect(response.headers.get("tus-resumable")).toBe("1.0.0");
    expect(response.headers.get("upload-offset")).toBe("0");
    const expires = Date.parse(response.headers.get("upload-expires")!);
    expect(expires).toBeGreaterThanOrEqual(before + 86_400_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 86_400_000);
    const got = await call(path, { key });
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({
      state: "uploading",
      size_bytes: 1000,
      offset: 0,
      filename: "clip.mp4",
    });
  });

  it("creation-with-upload: the POST's body is the first PATCH, and completes a small file", async () => {
    const { key, accountId } = await newAccount();
    const data = bytes(70_000, 7, FTYP);
    const response = await call("/v1/uploads", {
      method: "POST",
      key,
      headers: { ...TUS, "Upload-Length": String(data.byteLength), "Content-Type": OCTETS },
      body: data,
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("upload-offset")).toBe(String(data.byteLength));
    const id = response.headers.get("location")!.split("/").pop()!;
    const view = (await (await call(`/v1/uploads/${id}`, { key })).json()) as UploadJson;
    expect(view).toMatchObject({ state: "complete", offset: data.byteLength, media_type: "video/mp4" });
    expect(await sha256Hex((await r2Bytes(accountId, id))!)).toBe(await sha256Hex(data));
  });

  it("an empty upload (Upload-Length: 0) is complete at once", async () => {
    const { key } = await newAccount();
    const { path } = await createUpload(key, 0);
    const view = (await (await call(path, { key })).json()) as UploadJson;
    expect(view).toMatchObject({ state: "complete", size_bytes: 0, media_type: "application/octet-stream" });
  });
});

describe("PATCH: parts, tail and resumption", () => {
  it("three PATCHes across part boundaries store exactly the file (8 MiB parts, unaligned chunks)", async () => {
    const { key, accountId } = await newAccount();
    const data = bytes(2 * 8 * MiB + 12_345, 3, FTYP);
    const { id, path } = await createUpload(key, data.byteLength);
    const cuts = [0, 3 * MiB + 17, 13 * MiB + 5, data.byteLength];
    for (let i = 0; i < 3; i++) {
      const response = await patch(key, path, cuts[i]!, data.slice(cuts[i], cuts[i + 1]));
      expect(response.status).toBe(204);
      expect(response.headers.get("upload-offset")).toBe(String(cuts[i + 1]));
      const h = await head(key, path);
      expect(h.headers.get("upload-offset")).toBe(String(cuts[i + 1]));
    }
    const view = (await (await call(path, { key })).json()) as UploadJson;
    expect(view).toMatchObject({ state: "complete", size_bytes: data.byteLength, media_type: "video/mp4" });
    const got = (await r2Bytes(accountId, id))!;
    expect(got.byteLength).toBe(data.byteLength);
    expect(await sha256Hex(got)).toBe(await sha256Hex(data));
  });

  it("a PATCH cut off midway keeps what arrived; HEAD's offset resumes it to the exact file", async () => {
    const { key, accountId } = await newAccount();
    const data = bytes(9 * MiB + 99, 5);
    const { id, path } = await createUpload(key, data.byteLength);
    const sent = 4 * MiB + 3;
    await patch(key, path, 0, cutOff(data.slice(0, sent))).catch(() => undefined);
    const h = await head(key, path);
    expect(h.status).toBe(200);
    expect(h.headers.get("upload-offset")).toBe(String(sent));
    expect(h.headers.get("upload-length")).toBe(String(data.byteLength));
    expect(h.headers.get("cache-control")).toBe("no-store");
    const resumed = await patch(key, path, sent, data.slice(sent));
    expect(resumed.status).toBe(204);
    expect(await sha256Hex((await r2Bytes(accountId, id))!)).toBe(await sha256Hex(data));
  });

  it("HEAD during a PATCH that stalled (a dropped connection not yet seen): that PATCH stops and keeps what arrived, HEAD answers its offset", async () => {
    const { key, accountId } = await newAccount();
    const data = bytes(9 * MiB + 77, 6);
    const { id, path } = await createUpload(key, data.byteLength);
    const sent = 3 * MiB + 5;
    // Sends `sent` bytes, then nothing more and never ends: the server cannot tell it from a slow client.
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(data.slice(0, sent));
      },
    });
    const cut = patch(key, path, 0, stalled);
    // Until the object has the bytes (GET does not disturb the PATCH; its offset is the committed one).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(((await (await call(path, { key })).json()) as UploadJson).offset).toBe(0);
    const started = Date.now();
    const h = await head(key, path);
    expect(h.status).toBe(200);
    expect(h.headers.get("upload-offset")).toBe(String(sent));
    expect(Date.now() - started).toBeLessThan(5_000);
    // The stopped PATCH answers too, with the offset it kept; the client resumes from HEAD's offset.
    const stopped = await cut;
    expect(stopped.status).toBe(204);
    expect(stopped.headers.get("upload-offset")).toBe(String(sent));
    const resumed = await patch(key, path, sent, data.slice(sent));
    expect(resumed.status).toBe(204);
    expect(await sha256Hex((await r2Bytes(accountId, id))!)).toBe(await sha256Hex(data));
  });

  it("DELETE during a stalled PATCH stops it and discards the upload at once", async () => {
    const { key, accountId } = await newAccount();
    const { id, path } = await createUpload(key, 4 * MiB);
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes(MiB, 8));
      },
    });
    const cut = patch(key, path, 0, stalled);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = Date.now();
    const deleted = await call(path, { method: "DELETE", key, headers: TUS });
    expect(deleted.status).toBe(204);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await cut).status).toBe(204);
    expect((await head(key, path)).status).toBe(404);
    expect(await r2Bytes(accountId, id)).toBeNull();
  });

  it("a correct Upload-Checksum is accepted", async () => {
    const { key } = await newAccount();
    const data = bytes(100_000, 9);
    const { path } = await createUpload(key, data.byteLength);
    const response = await patch(key, path, 0, data, {
      "Upload-Checksum": `sha256 ${await sha256Base64(data)}`,
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("upload-offset")).toBe(String(data.byteLength));
  });

  it("two concurrent PATCHes at one offset: one is kept, the other 409, the offset is one body's length", async () => {
    const { key } = await newAccount();
    const data = bytes(3 * MiB, 11);
    const { path } = await createUpload(key, 10 * MiB);
    const [a, b] = await Promise.all([patch(key, path, 0, data.slice()), patch(key, path, 0, data.slice())]);
    expect([a.status, b.status].sort()).toEqual([204, 409]);
    expect((await head(key, path)).headers.get("upload-offset")).toBe(String(data.byteLength));
  });

  it("DELETE discards the upload: 204, then 404 everywhere", async () => {
    const { key, accountId } = await newAccount();
    const data = bytes(1000, 13);
    const { id, path } = await createUpload(key, data.byteLength);
    expect((await patch(key, path, 0, data)).status).toBe(204);
    const deleted = await call(path, { method: "DELETE", key, headers: TUS });
    expect(deleted.status).toBe(204);
    expect(await r2Bytes(accountId, id)).toBeNull();
    expect((await head(key, path)).status).toBe(404);
    expect((await call(path, { key })).status).toBe(404);
    expect((await patch(key, path, 1000, new Uint8Array(1))).status).toBe(404);
  });
});

describe("bad input", () => {
  it("409: Upload-Offset other than the upload's", async () => {
    const { key } = await newAccount();
    const { path } = await createUpload(key, 100);
    expect((await patch(key, path, 0, bytes(10))).status).toBe(204);
    const response = await patch(key, path, 5, bytes(10));
    expect(response.status).toBe(409);
    expect(response.headers.get("tus-resumable")).toBe("1.0.0");
    const body = await problem(response);
    expect(body.code).toBe("RESOURCE_CONFLICT");
    expect(body.detail).toContain("10");
  });

  it("413: bytes past Upload-Length (declared or streamed), nothing of the PATCH kept", async () => {
    const { key } = await newAccount();
    const { path } = await createUpload(key, 100);
    const declared = await patch(key, path, 0, bytes(101));
    expect(declared.status).toBe(413);
    expect((await problem(declared)).code).toBe("REQUEST_BODY_TOO_LARGE");
    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes(60));
        controller.enqueue(bytes(60));
        controller.close();
      },
    });
    const chunked = await patch(key, path, 0, streamed);
    expect(chunked.status).toBe(413);
    expect((await head(key, path)).headers.get("upload-offset")).toBe("0");
  });

  it("413: Upload-Length over the maximum at creation", async () => {
    const { key } = await newAccount();
    const response = await call("/v1/uploads", {
      method: "POST",
      key,
      headers: { ...TUS, "Upload-Length": String(5 * 1024 ** 3 + 1) },
    });
    expect(response.status).toBe(413);
    expect((await problem(response)).detail).toContain("5368709120");
  });

  it("404: unknown ids (well-formed or not)", async () => {
    const { key } = await newAccount();
    for (const id of ["01JD5Z8X4QK3M7R2T9V6W1Y0AB", "nope"]) {
      expect((await head(key, `/v1/uploads/${id}`)).status).toBe(404);
      const got = await call(`/v1/uploads/${id}`, { key });
      expect(got.status).toBe(404);
      expect((await problem(got)).code).toBe("RESOURCE_NOT_FOUND");
      expect((await patch(key, `/v1/uploads/${id}`, 0, bytes(1))).status).toBe(404);
      expect((await call(`/v1/uploads/${id}`, { method: "DELETE", key, headers: TUS })).status).toBe(404);
    }
  });

  it("410: expired — the alarm aborts the multipart upload, and every route answers 410", async () => {
    const { key, accountId } = await newAccount();
    const { id, path } = await createUpload(key, 20 * MiB);
    expect((await patch(key, path, 0, bytes(9 * MiB, 21))).status).toBe(204);
    const record = await stored(id);
    await runInDurableObject(objectOf(id), (_o: UploadObject, state) => {
      state.storage.kv.put("record", { ...record, expiresAt: Date.now() - 1 });
    });
    expect(await runDurableObjectAlarm(objectOf(id))).toBe(true);
    const after = await stored(id);
    expect(after.state).toBe("expired");
    // The aborted multipart upload takes no more parts.
    const multipart = env.FILES.resumeMultipartUpload(record.r2Key, record.multipartId);
    await expect(multipart.uploadPart(2, new Uint8Array(10))).rejects.toThrow();
    const row = await env.DB.prepare("SELECT state FROM uploads WHERE id = ?")
      .bind(id)
      .first<{ state: string }>();
    expect(row?.state).toBe("expired");
    expect((await head(key, path)).status).toBe(410);
    const got = await call(path, { key });
    expect(got.status).toBe(410);
    expect((await problem(got)).code).toBe("RESOURCE_GONE");
    expect((await patch(key, path, 9 * MiB, bytes(10))).status).toBe(410);
    expect(await r2Bytes(accountId, id)).toBeNull();
  });

  it.each([
    ["missing", undefined],
    ["another version", "0.2.2"],
  ])("412: Tus-Resumable %s, on POST, HEAD, PATCH and DELETE", async (_name, version) => {
    const { key } = await newAccount();
    const { path } = await createUpload(key, 10);
    const tus: Record<string, string> = version ? { "Tus-Resumable": version } : {};
    const answers = [
      await call("/v1/uploads", { method: "POST", key, headers: { ...tus, "Upload-Length": "10" } }),
      await call(path, { method: "HEAD", key, headers: tus }),
      await call(path, {
        method: "PATCH",
        key,
        headers: { ...tus, "Content-Type": OCTETS, "Upload-Offset": "0" },
        body: bytes(10),
      }),
      await call(path, { method: "DELETE", key, headers: tus }),
    ];
    expect(answers.map((r) => r.status)).toEqual([412, 412, 412, 412]);
    for (const r of answers) expect(r.headers.get("tus-resumable")).toBe("1.0.0");
    expect((await problem(answers[0]!)).code).toBe("TUS_VERSION_UNSUPPORTED");
  });

  it("460: checksum mismatch keeps nothing of the PATCH", async () => {
    const { key } = await newAccount();
    const data = bytes(9 * MiB, 23);
    const { path } = await createUpload(key, data.byteLength);
    const wrong = await sha256Base64(bytes(10));
    const response = await patch(key, path, 0, data, { "Upload-Checksum": `sha256 ${wrong}` });
    expect(response.status).toBe(460);
    expect((await problem(response)).code).toBe("CHECKSUM_MISMATCH");
    expect((await head(key, path)).headers.get("upload-offset")).toBe("0");
    // The same bytes with their checksum then go through whole.
    const good = await patch(key, path, 0, data, { "Upload-Checksum": `sha256 ${await sha256Base64(data)}` });
    expect(good.status).toBe(204);
  });

  it("400: an unsupported checksum algorithm, a missing Upload-Length; 415: another Content-Type", async () => {
    const { key } = await newAccount();
    const { path } = await createUpload(key, 10);
    const md5 = await patch(key, path, 0, bytes(10), { "Upload-Checksum": "md5 CY9rzUYh03PK3k6DJie09g==" });
    expect(md5.status).toBe(400);
    expect((await problem(md5)).errors?.[0]?.field).toBe("Upload-Checksum");
    const noLength = await call("/v1/uploads", { method: "POST", key, headers: TUS });
    expect(noLength.status).toBe(400);
    expect((await problem(noLength)).errors?.[0]?.field).toBe("Upload-Length");
    const json = await patch(key, path, 0, bytes(10), { "Content-Type": "application/json" });
    expect(json.status).toBe(415);
  });
});

describe("malformed base64 in the tus headers: 400 naming the header", () => {
  const create = (key: string, metadata: string) =>
    call("/v1/uploads", {
      method: "POST",
      key,
      headers: { ...TUS, "Upload-Length": "10", "Upload-Metadata": metadata },
    });

  it.each([
    ["a value that is not base64", "filename !!!notbase64"],
    ["a value whose length no base64 can have", "filename Y2xpcC5tcDQ=a"],
    ["a value that decodes to invalid UTF-8", "filename /w=="],
    ["a key given twice", `filename ${btoa("a")},filename ${btoa("b")}`],
  ])("Upload-Metadata: %s", async (_, metadata) => {
    const { key } = await newAccount();
    const response = await create(key, metadata);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect((await problem(response)).errors?.[0]?.field).toBe("Upload-Metadata");
  });

  it.each([
    ["not base64", "sha256 !!!notbase64!!!"],
    ["base64 of 31 bytes", `sha256 ${btoa("x".repeat(31))}`],
    ["nothing after the algorithm", "sha256"],
  ])("Upload-Checksum: a digest %s", async (_, checksum) => {
    const { key } = await newAccount();
    const { path } = await createUpload(key, 10);
    const response = await patch(key, path, 0, bytes(10), { "Upload-Checksum": checksum });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect((await problem(response)).errors?.[0]?.field).toBe("Upload-Checksum");
    expect((await head(key, path)).headers.get("upload-offset")).toBe("0");
  });
});

describe("security", () => {
  it("another account's upload is 404 on HEAD, GET, PATCH and DELETE, and stays untouched", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const data = bytes(100, 31);
    const { path } = await createUpload(owner.key, data.byteLength);
    expect((await patch(owner.key, path, 0, data.slice(0, 50))).status).toBe(204);
    const answers = [
      await head(other.key, path),
      await call(path, { key: other.key }),
      await patch(other.key, path, 50, data.slice(50)),
      await call(path, { method: "DELETE", key: other.key, headers: TUS }),
    ];
    expect(answers.map((r) => r.status)).toEqual([404, 404, 404, 404]);
    const unknown = await call("/v1/uploads/01JD5Z8X4QK3M7R2T9V6W1Y0AB", { key: other.key });
    expect((await problem(answers[1]!)).detail).toBe((await problem(unknown)).detail);
    expect((await head(owner.key, path)).headers.get("upload-offset")).toBe("50");
  });

  it("a read key may HEAD and GET but not create, PATCH or DELETE (403)", async () => {
    const { key, accountId } = await newAccount();
    const readKey = await newKey(accountId, { scopes: ["read"] });
    const { path } = await createUpload(key, 10);
    expect((await head(readKey, path)).status).toBe(200);
    expect((await call(path, { key: readKey })).status).toBe(200);
    const refused = [
      await call("/v1/uploads", { method: "POST", key: readKey, headers: { ...TUS, "Upload-Length": "10" } }),
      await patch(readKey, path, 0, bytes(10)),
      await call(path, { method: "DELETE", key: readKey, headers: TUS }),
    ];
    expect(refused.map((r) => r.status)).toEqual([403, 403, 403]);
  });

  it("no key: 401 with Tus-Resumable", async () => {
    const response = await call("/v1/uploads", { method: "POST", headers: { ...TUS, "Upload-Length": "1" } });
    expect(response.status).toBe(401);
    expect(response.headers.get("tus-resumable")).toBe("1.0.0");
  });
});
