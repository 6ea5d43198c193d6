import { describe, expect, it } from "vitest";
import { BASE, call, newAccount } from "../helpers/api";
import { bytes, createUpload, OCTETS, sha256Hex, TUS } from "../uploads/support";
import { clientAt, signedUp } from "./support";

/**
 * The console's Uploads page acting (the Dashboard's browser side is test/browser/uploads.test.ts): a direct
 * upload URL minted for the console's own origin by a session form post, deleting from the list, the page's
 * policy and files. The API's answers are read back with the account's own key.
 */

type Grant = { id: string; url: string; expires_at: string };

async function uploadsPage(client: Awaited<ReturnType<typeof signedUp>>["client"]) {
  const response = await client.get("/console/uploads");
  expect(response.status).toBe(200);
  const html = await response.text();
  const csrf = /data-csrf="([^"]+)"/.exec(html)?.[1];
  expect(csrf).toBeDefined();
  return { response, html, csrf: csrf! };
}

const incomplete = async (key: string) =>
  ((await (await call("/v1/account", { key })).json()) as { uploads: { incomplete: number } }).uploads
    .incomplete;

describe("console uploads: direct URLs, delete, the page's policy and files", () => {
  it("mints a direct URL for the console's own origin, bounded by the file's size; the page's browser uploads through it with no key", async () => {
    const { client, key } = await signedUp();
    const { csrf } = await uploadsPage(client);
    const data = bytes(3000, 7);
    const minted = await client.post("/console/uploads/direct", {
      _csrf: csrf,
      size: String(data.byteLength),
    });
    expect(minted.status).toBe(201);
    expect(minted.headers.get("content-type")).toContain("application/json");
    const granted = (await minted.json()) as Grant;
    expect(granted.url).toMatch(new RegExp(`^${BASE}/v1/direct-uploads/${granted.id}\\.[A-Za-z0-9_-]{43}$`));
    expect(await incomplete(key)).toBe(1);

    // What Uppy on the console's page sends: its Origin (the console's), no key.
    const browser = { Origin: BASE, ...TUS };
    const tooBig = await call(new URL(granted.url).pathname, {
      method: "POST",
      headers: { ...browser, "Upload-Length": String(data.byteLength + 1) },
    });
    expect(tooBig.status).toBe(413);
    const created = await call(new URL(granted.url).pathname, {
      method: "POST",
      headers: {
        ...browser,
        "Upload-Length": String(data.byteLength),
        "Upload-Metadata": `filename ${btoa("notes.bin")}`,
      },
    });
    expect(created.status).toBe(201);
    const patched = await call(new URL(created.headers.get("location")!).pathname, {
      method: "PATCH",
      headers: { ...browser, "Content-Type": OCTETS, "Upload-Offset": "0" },
      body: data,
    });
    expect(patched.status).toBe(204);
    const content = await call(`/v1/uploads/${granted.id}/content`, { key });
    expect(await sha256Hex(await content.arrayBuffer())).toBe(await sha256Hex(data));

    const { html } = await uploadsPage(client);
    expect(html).toContain(`<tr data-id="${granted.id}"`);
    expect(html).toContain("notes.bin");
  });

  it("refuses to mint without the session's CSRF token, from another origin, and past the quota (problem+json naming it)", async () => {
    const { client, key } = await signedUp();
    const { csrf } = await uploadsPage(client);
    expect((await client.post("/console/uploads/direct", { size: "10" })).status).toBe(403);
    expect((await client.post("/console/uploads/direct", { _csrf: "x".repeat(43), size: "10" })).status).toBe(
      403,
    );
    const foreign = await client.post(
      "/console/uploads/direct",
      { _csrf: csrf, size: "10" },
      { headers: { Origin: "https://evil.example" } },
    );
    expect(foreign.status).toBe(403);
    // Another customer's session token is no good either.
    const other = await signedUp();
    const { csrf: otherCsrf } = await uploadsPage(other.client);
    expect((await client.post("/console/uploads/direct", { _csrf: otherCsrf, size: "10" })).status).toBe(403);
    expect(await incomplete(key)).toBe(0);

    // The incomplete-uploads quota (20 by default): the 21st URL is refused with the API's problem.
    for (let i = 0; i < 20; i++)
      expect((await client.post("/console/uploads/direct", { _csrf: csrf, size: "10" })).status).toBe(201);
    const refused = await client.post("/console/uploads/direct", { _csrf: csrf, size: "10" });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    const problem = (await refused.json()) as { code: string; detail: string };
    expect(problem.code).toBe("UPLOAD_QUOTA_EXCEEDED");
    expect(problem.detail).toContain("limit of 20");
    const page = (await uploadsPage(client)).html;
    expect(page).toMatch(/data-quota="incomplete">\s*20 of 20/);
  });

  it("deletes the account's own upload from the list; another account's is not found and stays", async () => {
    const { client, key } = await signedUp();
    const mine = await createUpload(key, 100);
    const owner = await newAccount();
    const theirs = await createUpload(owner.key, 100);
    const { csrf } = await uploadsPage(client);

    expect((await client.post(`/console/uploads/${mine.id}/delete`, {})).status).toBe(403);
    expect((await call(`/v1/uploads/${mine.id}`, { key })).status).toBe(200);
    const deleted = await client.post(`/console/uploads/${mine.id}/delete`, { _csrf: csrf });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get("location")).toBe("/console/uploads?done=deleted");
    expect((await call(`/v1/uploads/${mine.id}`, { key })).status).toBe(404);
    const after = await client.get("/console/uploads?done=deleted");
    const html = await after.text();
    expect(html).toContain("Upload deleted.");
    expect(html).not.toContain(`data-id="${mine.id}"`);

    expect((await client.post(`/console/uploads/${theirs.id}/delete`, { _csrf: csrf })).status).toBe(404);
    expect((await client.post("/console/uploads/not-an-id/delete", { _csrf: csrf })).status).toBe(404);
    expect((await call(`/v1/uploads/${theirs.id}`, { key: owner.key })).status).toBe(200);
  });

  it("the Uploads page alone may connect to its origin; Uppy and its stylesheet come from the Worker, by nonce", async () => {
    const { client } = await signedUp();
    const { response, html } = await uploadsPage(client);
    const csp = response.headers.get("content-security-policy")!;
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    for (const tag of [
      `<link rel="stylesheet" nonce="${nonce}" href="/console/assets/uppy.css"`,
      `<script nonce="${nonce}" src="/console/assets/uppy.js"`,
      `<script nonce="${nonce}" src="/console/assets/uploads-page.js"`,
    ])
      expect(html).toContain(tag);
    const overview = await client.get("/console");
    expect(overview.headers.get("content-security-policy")).not.toContain("connect-src");
    expect(await overview.text()).toContain("incomplete at once");

    // The two sections the page's script refreshes, alone.
    const part = await (await client.get("/console/uploads?part=list")).text();
    expect(part).toContain('id="upload-list"');
    expect(part).toContain('id="upload-quota"');
    expect(part).not.toMatch(/<html|<style|<script/);
  });

  it("serves Uppy, its stylesheet and the page's script to anyone, with their types", async () => {
    const stranger = clientAt();
    for (const [path, type, marker] of [
      ["/console/assets/uppy.js", "text/javascript", "var Uppy="],
      ["/console/assets/uppy.css", "text/css", ".uppy-Dashboard"],
      ["/console/assets/uploads-page.js", "text/javascript", "upload-list"],
    ] as const) {
      const response = await stranger.get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type"), path).toContain(type);
      expect(await response.text(), path).toContain(marker);
    }
  });
});
