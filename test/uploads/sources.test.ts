import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signUploadSourceUrl } from "../../src/uploads/source";
import { call, newAccount, problem } from "../helpers/api";
import { bytes, createUpload, patch, sha256Hex } from "./support";

const UNKNOWN = "01JD5Z8X4QK3M7R2T9V6W1Y0AB";
const op = (path: string, key: string, json: unknown, idem = crypto.randomUUID()) =>
  call(path, { method: "POST", key, json, headers: { "Idempotency-Key": idem } });
const task = (key: string, json: unknown) => call("/v1/tasks", { method: "POST", key, json });

async function completeUpload(key: string, data: Uint8Array) {
  const { id, path } = await createUpload(key, data.byteLength);
  expect((await patch(key, path, 0, data)).status).toBe(204);
  return id;
}

async function fieldOf(response: Response) {
  const body = await problem(response);
  return { code: body.code, field: body.errors?.[0]?.field, detail: body.detail as string };
}

describe("source_upload_id and watermark_upload_id: refused before any work", () => {
  it("400: both source_url and source_upload_id, or neither", async () => {
    const { key } = await newAccount({ credits: 10 });
    const both = await op("/v1/video/probe", key, {
      source_url: "https://example.com/a.mp4",
      source_upload_id: UNKNOWN,
    });
    expect(both.status).toBe(400);
    expect((await fieldOf(both)).field).toBe("source_upload_id");
    const neither = await op("/v1/video/probe", key, {});
    expect(neither.status).toBe(400);
    expect((await fieldOf(neither)).field).toBe("source_url");
    const taskBoth = await task(key, {
      type: "video.probe",
      source_url: "https://example.com/a.mp4",
      source_upload_id: UNKNOWN,
    });
    expect(taskBoth.status).toBe(400);
    const logoBoth = await op("/v1/image/watermark", key, {
      source_url: "https://example.com/a.png",
      params: { watermark_url: "https://example.com/l.png", watermark_upload_id: UNKNOWN },
    });
    expect(logoBoth.status).toBe(400);
    expect((await fieldOf(logoBoth)).field).toBe("params.watermark_upload_id");
  });

  it("409 naming the field: an incomplete upload as source (sync and task) or as logo; no credits reserved", async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const { id, path } = await createUpload(key, 1000);
    expect((await patch(key, path, 0, bytes(400))).status).toBe(204);
    const sync = await op("/v1/video/probe", key, { source_upload_id: id });
    expect(sync.status).toBe(409);
    const syncError = await fieldOf(sync);
    expect(syncError).toMatchObject({ code: "RESOURCE_CONFLICT", field: "source_upload_id" });
    expect(syncError.detail).toContain("400 of 1000");
    const queued = await task(key, {
      type: "video.trim",
      source_upload_id: id,
      params: { start: 0, duration: 1 },
    });
    expect(queued.status).toBe(409);
    expect((await fieldOf(queued)).field).toBe("source_upload_id");
    const logo = await task(key, {
      type: "video.watermark",
      source_url: "https://example.com/a.mp4",
      params: { watermark_upload_id: id },
    });
    expect(logo.status).toBe(409);
    expect((await fieldOf(logo)).field).toBe("params.watermark_upload_id");
    const balance = await env.DB.prepare("SELECT credits FROM accounts WHERE id = ?")
      .bind(accountId)
      .first<{ credits: number }>();
    expect(balance?.credits).toBe(10);
  });

  it("404 naming the field: another account's upload, exactly as an unknown one, on every route that takes one", async () => {
    const owner = await newAccount();
    const other = await newAccount({ credits: 10 });
    const id = await completeUpload(owner.key, bytes(2000, 3));
    const attempts: [string, () => Promise<Response>, string][] = [
      ["sync source", () => op("/v1/video/probe", other.key, { source_upload_id: id }), "source_upload_id"],
      [
        "sync logo",
        () =>
          op("/v1/image/watermark", other.key, {
            source_url: "https://example.com/a.png",
            params: { watermark_upload_id: id },
          }),
        "params.watermark_upload_id",
      ],
      [
        "task source",
        () =>
          task(other.key, { type: "audio.trim", source_upload_id: id, params: { start: 0, duration: 1 } }),
        "source_upload_id",
      ],
      [
        "task logo",
        () =>
          task(other.key, {
            type: "video.watermark",
            source_url: "https://example.com/a.mp4",
            params: { watermark_upload_id: id },
          }),
        "params.watermark_upload_id",
      ],
    ];
    for (const [name, attempt, field] of attempts) {
      const response = await attempt();
      expect(response.status, name).toBe(404);
      const error = await fieldOf(response);
      expect(error.field, name).toBe(field);
      expect(error.detail, name).toBe(`${field} ${id} names no upload of this account.`);
    }
    const unknown = await fieldOf(await op("/v1/video/probe", other.key, { source_upload_id: UNKNOWN }));
    expect(unknown.detail).toBe(`source_upload_id ${UNKNOWN} names no upload of this account.`);
  });
});

describe("GET /upload-sources/{id}: the engine's signed, short-lived view of an upload", () => {
  it("serves exactly the upload's bytes, ranges too; refuses a tampered or expired signature", async () => {
    const { key } = await newAccount();
    const data = bytes(300_000, 17);
    const id = await completeUpload(key, data);
    const url = new URL(
      await signUploadSourceUrl("http://api.test", "test-file-signing-secret", id, Date.now() + 60_000),
    );
    const whole = await call(`${url.pathname}${url.search}`);
    expect(whole.status).toBe(200);
    expect(await sha256Hex(await whole.arrayBuffer())).toBe(await sha256Hex(data));
    const ranged = await call(`${url.pathname}${url.search}`, { headers: { Range: "bytes=1000-1999" } });
    expect(ranged.status).toBe(206);
    expect(new Uint8Array(await ranged.arrayBuffer())).toEqual(data.slice(1000, 2000));

    const tampered = new URL(url);
    tampered.searchParams.set("signature", "0".repeat(64));
    expect((await call(`${tampered.pathname}${tampered.search}`)).status).toBe(403);
    const expired = new URL(
      await signUploadSourceUrl("http://api.test", "test-file-signing-secret", id, Date.now() - 1000),
    );
    expect((await call(`${expired.pathname}${expired.search}`)).status).toBe(403);
    const otherId = new URL(url);
    otherId.pathname = `/upload-sources/${UNKNOWN}`;
    expect((await call(`${otherId.pathname}${otherId.search}`)).status).toBe(403);

    // Deleted since the URL was signed: 404.
    await call(`/v1/uploads/${id}`, { method: "DELETE", key, headers: { "Tus-Resumable": "1.0.0" } });
    expect((await call(`${url.pathname}${url.search}`)).status).toBe(404);
  });
});
