import { env, runInDurableObject } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { UploadObject, UploadRecord } from "../../src/uploads/upload-object";
import { call, newAccount, newKey, problem } from "../helpers/api";
import { receiverEndpoint, waitFor } from "../webhooks/support";
import { bytes, OCTETS, sha256Hex, TUS } from "./support";

const APP = "https://app.example";
const OTHER = "https://evil.example";
const TUS_REQUEST_HEADERS = [
  "tus-resumable",
  "upload-length",
  "upload-offset",
  "upload-metadata",
  "upload-checksum",
  "content-type",
  "x-http-method-override",
];

type Grant = { id: string; url: string; expires_at: string };

async function grant(key: string, json: Record<string, unknown> = {}) {
  const response = await call("/v1/uploads/direct", {
    method: "POST",
    key,
    json: { cors_origin: APP, ...json },
  });
  expect(response.status).toBe(201);
  const body = (await response.json()) as Grant;
  return { ...body, path: new URL(body.url).pathname, response };
}

/** A browser on `origin`: no key, its Origin header on every request. */
function browser(path: string, init: RequestInit & { origin?: string } = {}) {
  const headers = new Headers(init.headers);
  headers.set("Origin", init.origin ?? APP);
  return call(path, { ...init, headers });
}

const create = (path: string, length: number, extra: Record<string, string> = {}, origin = APP) =>
  browser(path, { method: "POST", origin, headers: { ...TUS, "Upload-Length": String(length), ...extra } });

const patchDirect = (location: string, offset: number, body: BodyInit, origin = APP) =>
  browser(location, {
    method: "PATCH",
    origin,
    headers: { ...TUS, "Content-Type": OCTETS, "Upload-Offset": String(offset) },
    body,
  });

const preflight = (path: string, origin: string, method = "POST") =>
  call(path, {
    method: "OPTIONS",
    headers: {
      Origin: origin,
      "Access-Control-Request-Method": method,
      "Access-Control-Request-Headers": TUS_REQUEST_HEADERS.join(","),
    },
  });

const objectOf = (id: string) => env.UPLOADS.get(env.UPLOADS.idFromName(id));

describe("POST /v1/uploads/direct: a one-time URL for a browser", () => {
  it("the browser uploads with no key: creation, PATCH and HEAD on Location, with CORS for its origin", async () => {
    const { key, accountId } = await newAccount();
    const before = Date.now();
    const granted = await grant(key);
    expect(granted.response.headers.get("location")).toBe(`http://api.test/v1/uploads/${granted.id}`);
    expect(granted.url).toMatch(/^http:\/\/api\.test\/v1\/direct-uploads\/[0-9A-Z]{26}\.[A-Za-z0-9_-]{43}$/);
    expect(granted.url).toContain(granted.id);
    expect(Date.parse(granted.expires_at) - before).toBeGreaterThan(3_590_000);
    expect(Date.parse(granted.expires_at) - before).toBeLessThanOrEqual(3_600_000 + 2000);
    // Until the browser creates it, the upload is pending.
    const pending = await call(`/v1/uploads/${granted.id}`, { key });
    expect(await pending.json()).toMatchObject({
      id: granted.id,
      state: "pending",
      size_bytes: null,
      offset: 0,
    });

    const data = bytes(300_000, 61);
    const created = await create(granted.path, data.byteLength, {
      "Upload-Metadata": `filename ${btoa("v.mp4")}`,
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("access-control-allow-origin")).toBe(APP);
    expect(created.headers.get("access-control-expose-headers")).toContain("Location");
    expect(created.headers.get("access-control-expose-headers")).toContain("Upload-Offset");
    const location = new URL(created.headers.get("location")!).pathname;
    expect(location).toBe(`${granted.path}/upload`);

    const first = await patchDirect(location, 0, data.slice(0, 100_000));
    expect(first.status).toBe(204);
    expect(first.headers.get("access-control-allow-origin")).toBe(APP);
    const headed = await browser(location, { method: "HEAD", headers: TUS });
    expect(headed.status).toBe(200);
    expect(headed.headers.get("upload-offset")).toBe("100000");
    expect(headed.headers.get("access-control-allow-origin")).toBe(APP);
    expect((await patchDirect(location, 100_000, data.slice(100_000))).status).toBe(204);

    // The customer's server sees it complete, under the id it was given, and reads the bytes.
    expect(await (await call(`/v1/uploads/${granted.id}`, { key })).json()).toMatchObject({
      state: "complete",
      size_bytes: data.byteLength,
      filename: "v.mp4",
    });
    const content = await call(`/v1/uploads/${granted.id}/content`, { key });
    expect(await sha256Hex(await content.arrayBuffer())).toBe(await sha256Hex(data));
    const object = await env.FILES.get(`accounts/${accountId}/uploads/${granted.id}`);
    expect(await sha256Hex(await object!.arrayBuffer())).toBe(await sha256Hex(data));
  });

  it("preflights: CORS for cors_origin on the URL and its Location, none for another origin or a wrong secret", async () => {
    const { key } = await newAccount();
    const granted = await grant(key, { max_size: 5000 });
    const ok = await preflight(granted.path, APP);
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP);
    expect(ok.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
    const allowed = ok.headers.get("access-control-allow-headers")!.toLowerCase().split(", ");
    expect(allowed).toEqual(expect.arrayContaining(TUS_REQUEST_HEADERS));
    expect(ok.headers.get("vary")).toContain("Origin");
    expect(ok.headers.get("tus-version")).toBe("1.0.0");
    expect(ok.headers.get("tus-max-size")).toBe("5000");
    expect(ok.headers.get("tus-extension")).not.toContain("termination");
    const onLocation = await preflight(`${granted.path}/upload`, APP, "PATCH");
    expect(onLocation.headers.get("access-control-allow-origin")).toBe(APP);
    expect(onLocation.headers.get("access-control-allow-methods")).toBe("HEAD, PATCH, OPTIONS");

    for (const response of [
      await preflight(granted.path, OTHER),
      await preflight(`${granted.path}/upload`, OTHER, "PATCH"),
      await preflight(`${granted.path.slice(0, -4)}AAAA`, APP),
      await preflight("/v1/direct-uploads/nonsense", APP),
    ]) {
      expect(response.headers.get("access-control-allow-origin")).toBeNull();
      expect(response.headers.get("access-control-allow-methods")).toBeNull();
    }
    // A request from another origin is refused outright, and its answer is not readable there.
    const foreign = await create(granted.path, 100, {}, OTHER);
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    // Still unused: the right origin creates it.
    expect((await create(granted.path, 100)).status).toBe(201);
  });

  it("the rest of the API stays closed to cross-origin browsers", async () => {
    const { key } = await newAccount();
    for (const [path, method] of [
      ["/v1/uploads", "POST"],
      ["/v1/tasks", "POST"],
      ["/v1/uploads/direct", "POST"],
      ["/v1/account", "GET"],
    ] as const) {
      const response = await preflight(path, APP, method);
      expect(response.headers.get("access-control-allow-origin"), path).toBeNull();
      expect(response.headers.get("access-control-allow-methods"), path).toBeNull();
    }
    const withKey = await call("/v1/account", { key, headers: { Origin: APP } });
    expect(withKey.status).toBe(200);
    expect(withKey.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("one upload per URL: a second creation is 409 (readable by the browser); max_size 413; expiry 410", async () => {
    const { key } = await newAccount();
    const granted = await grant(key, { max_size: 1000 });
    const tooLarge = await create(granted.path, 1001);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers.get("access-control-allow-origin")).toBe(APP);
    expect((await problem(tooLarge)).detail).toContain("max_size of 1000");
    expect((await create(granted.path, 1000)).status).toBe(201);
    const again = await create(granted.path, 10);
    expect(again.status).toBe(409);
    expect(again.headers.get("access-control-allow-origin")).toBe(APP);
    expect((await problem(again)).detail).toContain("used");

    const expiring = await grant(key);
    await runInDurableObject(objectOf(expiring.id), (_o: UploadObject, state) => {
      const record = state.storage.kv.get<UploadRecord>("record")!;
      state.storage.kv.put("record", { ...record, expiresAt: Date.now() - 1 });
    });
    const late = await create(expiring.path, 10);
    expect(late.status).toBe(410);
    expect(late.headers.get("access-control-allow-origin")).toBe(APP);
    expect((await problem(late)).detail).toContain("expired");
  });

  it("the URL grants nothing but its own upload: no key use, no read, no download, no delete, no other upload", async () => {
    const { key } = await newAccount();
    const mine = await grant(key);
    const data = bytes(100, 63);
    const created = await create(mine.path, data.byteLength, { "Content-Type": OCTETS });
    expect(created.status).toBe(201);
    const location = `${mine.path}/upload`;
    expect((await patchDirect(location, 0, data)).status).toBe(204);
    const token = mine.path.split("/").pop()!;
    const secret = token.split(".")[1]!;
    // The token is no API key.
    expect(
      (await call(`/v1/uploads/${mine.id}`, { headers: { Authorization: `Bearer ${token}` } })).status,
    ).toBe(401);
    // No GET, no DELETE through the URL.
    expect((await browser(location)).status).toBe(405);
    const deleted = await browser(location, { method: "DELETE", headers: TUS });
    expect(deleted.status).toBe(405);
    expect((await browser(`${location}/content`)).status).toBe(404);
    // Its secret opens no other upload, and a wrong secret opens nothing (the same 404 as unknown).
    const other = await grant(key);
    const swapped = `/v1/direct-uploads/${other.id}.${secret}`;
    const refused = await create(swapped, 10);
    expect(refused.status).toBe(404);
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    expect((await browser(`${swapped}/upload`, { method: "HEAD", headers: TUS })).status).toBe(404);
    expect((await create("/v1/direct-uploads/garbage", 10)).status).toBe(404);
    // Before its creation, a URL's upload has no offset to give.
    expect((await browser(`${other.path}/upload`, { method: "HEAD", headers: TUS })).status).toBe(404);
  });

  it("upload.completed goes to the webhook, signed like task events (verified with standardwebhooks)", async () => {
    const { key, webhookSecret } = await newAccount();
    const endpoint = await receiverEndpoint();
    const granted = await grant(key, { webhook: endpoint.url });
    const data = bytes(5000, 67);
    const created = await create(granted.path, data.byteLength, { "Content-Type": OCTETS }, APP);
    expect(created.status).toBe(201);
    expect((await patchDirect(`${granted.path}/upload`, 0, data)).status).toBe(204);
    const [delivery] = await waitFor(async () => {
      const got = await endpoint.received();
      return got.length > 0 ? got : undefined;
    });
    expect(delivery!.headers["x-webhook-event"]).toBe("upload.completed");
    expect(delivery!.headers["webhook-id"]).toMatch(/^msg_[0-9A-Z]{26}$/);
    const upload = new Webhook(webhookSecret).verify(delivery!.body, delivery!.headers);
    expect(upload).toEqual(await (await call(`/v1/uploads/${granted.id}`, { key })).json());
    expect(upload).toMatchObject({ id: granted.id, state: "complete", size_bytes: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await endpoint.received()).toHaveLength(1);
  });

  describe("bad input: problem+json naming the field", () => {
    it.each([
      ["a garbage cors_origin", { cors_origin: "not a url" }, "cors_origin"],
      ["a huge cors_origin", { cors_origin: `https://${"a".repeat(600)}.example` }, "cors_origin"],
      ["a cors_origin with a path", { cors_origin: "https://app.example/page" }, "cors_origin"],
      ["a cors_origin with credentials", { cors_origin: "https://u:p@app.example" }, "cors_origin"],
      ["an http origin off loopback", { cors_origin: "http://app.example" }, "cors_origin"],
      ["a javascript: origin", { cors_origin: "javascript:alert(1)" }, "cors_origin"],
      ["no cors_origin", { cors_origin: undefined }, "cors_origin"],
      ["a negative max_size", { max_size: -1 }, "max_size"],
      ["a fractional max_size", { max_size: 1.5 }, "max_size"],
      ["a max_size over the deployment's maximum", { max_size: 5 * 1024 ** 3 + 1 }, "max_size"],
      ["a webhook on a private address", { webhook: "http://10.0.0.1/hook" }, "webhook"],
      ["a webhook that is no URL", { webhook: "nope" }, "webhook"],
      ["an unknown field", { expires_in: 10 }, "expires_in"],
    ])("%s", async (_, json, field) => {
      const { key } = await newAccount();
      const response = await call("/v1/uploads/direct", {
        method: "POST",
        key,
        json: { cors_origin: APP, ...json },
      });
      expect(response.status).toBe(400);
      const body = await problem(response);
      expect(body.errors?.map((e) => e.field)).toContain(field);
    });

    it("http on loopback is allowed where private sources are (the tests' ALLOW_PRIVATE_SOURCES)", async () => {
      const { key } = await newAccount();
      for (const origin of ["http://localhost:5173", "http://127.0.0.1:8080", "https://APP.example:443/"]) {
        const response = await call("/v1/uploads/direct", {
          method: "POST",
          key,
          json: { cors_origin: origin },
        });
        expect(response.status, origin).toBe(201);
      }
    });

    it("a read key: 403; no key: 401; not JSON: 415", async () => {
      const { key, accountId } = await newAccount();
      const readKey = await newKey(accountId, { scopes: ["read"] });
      expect(
        (await call("/v1/uploads/direct", { method: "POST", key: readKey, json: { cors_origin: APP } }))
          .status,
      ).toBe(403);
      expect((await call("/v1/uploads/direct", { method: "POST", json: { cors_origin: APP } })).status).toBe(
        401,
      );
      const text = await call("/v1/uploads/direct", {
        method: "POST",
        key,
        headers: { "Content-Type": "text/plain" },
        body: "cors_origin",
      });
      expect(text.status).toBe(415);
    });
  });
});
