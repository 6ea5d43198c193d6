import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signUploadSourceUrl } from "../../src/uploads/source";
import { bytesToBase64 } from "../../src/util/encoding";
import { call, newAccount, problem } from "../helpers/api";
import { bytes, createUpload, patch, TUS } from "./support";

const metadataOf = (name: string) => `filename ${bytesToBase64(new TextEncoder().encode(name))}`;

/**
 * The name a Content-Disposition header gives, read by hand (RFC 6266 / RFC 8187): `filename*=UTF-8''<pct>`
 * percent-decoded when present, else the quoted `filename`.
 */
function servedName(header: string | null) {
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header ?? "");
  if (extended) return decodeURIComponent(extended[1]!);
  return /filename="([^"]*)"/.exec(header ?? "")?.[1];
}

async function complete(key: string, name: string) {
  const data = bytes(2000, 51);
  const { id, path } = await createUpload(key, data.byteLength, { "Upload-Metadata": metadataOf(name) });
  expect((await patch(key, path, 0, data)).status).toBe(204);
  return { id, path };
}

async function sourceUrl(id: string) {
  const url = new URL(
    await signUploadSourceUrl("http://api.test", "test-file-signing-secret", id, Date.now() + 60_000),
  );
  return `${url.pathname}${url.search}`;
}

describe("filenames", () => {
  it("a stored name with CR/LF (made before creation refused it) is served, not a 500", async () => {
    const { key } = await newAccount();
    const { id, path } = await complete(key, "plain.bin");
    // As the issue found it: a name with CR/LF in the uploads row the engine's source route reads.
    await env.DB.prepare("UPDATE uploads SET filename = ? WHERE id = ?")
      .bind("evil\r\nSet-Cookie: a=b.mp4", id)
      .run();
    const served = await call(await sourceUrl(id));
    expect(served.status).toBe(200);
    expect(served.headers.get("set-cookie")).toBeNull();
    expect(servedName(served.headers.get("content-disposition"))).toBe("evil\r\nSet-Cookie: a=b.mp4");
    expect(served.headers.get("content-disposition")).not.toMatch(/[\r\n]/);
    expect((await call(`${path}/content`, { key })).status).toBe(200);
  });

  it.each([
    ["CR/LF", "a\r\nb.mp4"],
    ["NUL", "a\u0000b.mp4"],
    ["a tab", "a\tb.mp4"],
    ["DEL", "a\u007fb.mp4"],
    ["a C1 control (NEL)", "a\u0085b.mp4"],
  ])("400 naming Upload-Metadata at creation: %s in filename", async (_, name) => {
    const { key } = await newAccount();
    const response = await call("/v1/uploads", {
      method: "POST",
      key,
      headers: { ...TUS, "Upload-Length": "10", "Upload-Metadata": metadataOf(name) },
    });
    expect(response.status).toBe(400);
    const body = await problem(response);
    expect(body.errors?.[0]?.field).toBe("Upload-Metadata");
    expect(body.detail).toContain("control characters");
  });

  it("any UTF-8 name is kept and served exactly as RFC 6266 filename*, with an ASCII fallback", async () => {
    const { key } = await newAccount();
    const name = "Été 2026 — 東京 🎬 \"quoted\" 'single' ;=%.mp4";
    const { id, path } = await complete(key, name);
    const json = (await (await call(path, { key })).json()) as { filename: string };
    expect(json.filename).toBe(name);
    for (const served of [await call(`${path}/content`, { key }), await call(await sourceUrl(id))]) {
      expect(served.status).toBe(200);
      const header = served.headers.get("content-disposition")!;
      expect(header).toMatch(/^inline; filename="[\x20-\x7e]*"; filename\*=UTF-8''/);
      expect(servedName(header)).toBe(name);
    }
  });

  it("a name is kept up to 255 characters, cut between characters (never inside one)", async () => {
    const { key } = await newAccount();
    const name = `${"a".repeat(254)}🎬🎬.mp4`;
    const { path } = await complete(key, name);
    const json = (await (await call(path, { key })).json()) as { filename: string };
    expect([...json.filename]).toHaveLength(255);
    expect(json.filename).toBe(`${"a".repeat(254)}🎬`);
    expect(servedName((await call(`${path}/content`, { key })).headers.get("content-disposition"))).toBe(
      json.filename,
    );
  });
});
