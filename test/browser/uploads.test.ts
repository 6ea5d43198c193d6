import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { createServer, type Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningService, startService } from "./service.ts";
import { CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, until } from "./support.ts";

/**
 * Uploads from browsers (issue 37's "Must show"), in headless Chromium against the service started like
 * `npm run dev`:
 *  - Uppy (the bundle the console serves) on a customer's page, served here from ANOTHER origin than the API,
 *    uploads a ≥ 50 MiB video through a direct upload URL in 5 MiB chunks; the connection is cut in the
 *    middle of a PATCH (a loopback proxy between the browser and the API drops it) and Uppy resumes. A task on
 *    the upload (video.probe, with the key, by the test) agrees with ffprobe run here, and GET …/content's sha256
 *    equals the file's. A page on a THIRD origin gets no CORS answer (the browser blocks it); a second upload
 *    through the spent URL is refused.
 *  - The console's Uploads page: a new customer uploads a file with the Dashboard, sees it listed, deletes it.
 * Ports: the service's from a base picked at random in 34000-35999 (two clones' npm test at once on one machine
 * must not share them; fixed ports made one run's start fail beside another's): base to base + 5 (startDev
 * moves on by two when taken), its inspector base + 6. The test's own servers (the customer's page, the third
 * origin, the cutting proxy) take ports the system picks, so they never meet another run's.
 */

const MiB = 1024 * 1024;
const CHUNK = 5 * MiB;
const BASE_PORT = 34_000 + Math.floor(Math.random() * 125) * 16;
const PASSWORD = "violet staircase under the sea";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * A real video of ≥ 50 MiB, made once per machine by ffmpeg in a few seconds (720p noise in MPEG-4 part 2 at
 * a fixed quantizer: noise does not compress), cached in the temp directory like the other fixtures.
 */
function bigVideo() {
  const args = [
    ...["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25"],
    ...["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"],
    ...["-vf", "noise=alls=15:allf=t", "-t", "4", "-c:v", "mpeg4", "-q:v", "2", "-c:a", "aac", "-shortest"],
    ...["-movflags", "+faststart"],
  ];
  const file = path.join(
    os.tmpdir(),
    `p6-uppy-video-${createHash("sha256").update(args.join(" ")).digest("hex").slice(0, 12)}.mp4`,
  );
  if (!existsSync(file)) {
    const partial = `${file}.${process.pid}.mp4`;
    execFileSync("ffmpeg", ["-v", "error", "-y", ...args, partial]);
    renameSync(partial, file);
  }
  return file;
}

/** What ffprobe says of the file here: what video.probe must answer for the upload. */
function ffprobe(file: string) {
  const out = JSON.parse(
    execFileSync("ffprobe", [
      ...["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height"],
      ...["-show_entries", "format=duration", "-of", "json", file],
    ]).toString(),
  ) as { streams: { codec_name: string; width: number; height: number }[]; format: { duration: string } };
  return { ...out.streams[0]!, duration: Number(out.format.duration) };
}

/**
 * A customer's page: Uppy's Dashboard from the API's own bundle (/console/assets/uppy.js and .css, loaded
 * cross-origin like a CDN file), uploading with tus to the direct URL in `?endpoint=`, in 5 MiB chunks. What
 * Uppy reports is kept in `window.events` for the test to read.
 */
function customerPage(api: string) {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>A customer's upload page</title>
<link rel="stylesheet" href="${api}/console/assets/uppy.css"></head>
<body>
<main><h1>Send us your video</h1><div id="uppy"></div></main>
<script src="${api}/console/assets/uppy.js"></script>
<script>
  window.events = [];
  const endpoint = new URLSearchParams(location.search).get("endpoint");
  window.uppy = new Uppy.Uppy()
    .use(Uppy.Dashboard, { inline: true, target: "#uppy", proudlyDisplayPoweredByUppy: false })
    .use(Uppy.Tus, {
      endpoint,
      chunkSize: ${CHUNK},
      retryDelays: [0, 500, 1000],
      storeFingerprintForResuming: false,
    });
  uppy.on("upload-success", (file, response) => events.push({ type: "success", url: response.uploadURL }));
  uppy.on("upload-error", (file, error, response) =>
    events.push({ type: "error", message: String(error && error.message), status: response ? response.status : null }));
  uppy.on("complete", (result) =>
    events.push({ type: "complete", successful: result.successful.length, failed: result.failed.length }));
</script>
</body>
</html>`;
}

type UppyEvent =
  | { type: "success"; url: string }
  | { type: "error"; message: string; status: number | null }
  | { type: "complete"; successful: number; failed: number };

/** A page on `host`, at a port the system picks: the server and that port. */
async function serve(host: string, body: string) {
  const server = createServer((_, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/**
 * A TCP proxy to the API on loopback that drops the one connection carrying the byte past `cutAfter` of all
 * the client's traffic (the middle of a PATCH body): what a network interruption does to an upload.
 */
async function cuttingProxy(upstreamPort: number, cutAfter: number) {
  let sent = 0;
  let cut = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(upstreamPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => sockets.delete(socket));
    }
    client.on("data", (data: Buffer) => {
      sent += data.length;
      if (!cut && sent > cutAfter) {
        cut = true;
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      upstream.write(data);
    });
    upstream.pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get cut() {
      return cut;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe.skipIf(!existsSync(CHROMIUM))("uploads from browsers (Uppy) in headless Chromium", () => {
  let service: RunningService;
  let browser: Browser;
  let key = "";
  const servers: Server[] = [];
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];

  const api = (p: string, init: RequestInit = {}, base = service.base) =>
    fetch(`${base}${p}`, {
      ...init,
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...init.headers },
    });
  const mintDirect = async (base: string, corsOrigin: string) => {
    const response = await api(
      "/v1/uploads/direct",
      { method: "POST", body: JSON.stringify({ cors_origin: corsOrigin }) },
      base,
    );
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; url: string; expires_at: string };
  };
  const watch = async (p: Page) => {
    p.on("pageerror", (error) => pageErrors.push(error.message));
    await p.addInitScript({
      content: `document.addEventListener("securitypolicyviolation", (event) =>
        console.log("CSP violation: " + event.effectiveDirective + " " + event.blockedURI));`,
    });
    p.on("console", (message) => {
      if (/Content.Security.Policy|CSP violation/i.test(message.text())) cspViolations.push(message.text());
    });
  };
  const events = (p: Page) => p.evaluate<UppyEvent[]>("window.events");
  /** Adds the file to the Dashboard as a user would (its file input) and presses its upload button. */
  const uploadWithDashboard = async (p: Page, file: string) => {
    await p.locator("input.uppy-Dashboard-input[type=file]").first().setInputFiles(file);
    await p.getByRole("button", { name: /^Upload 1 file/ }).click();
  };

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    // `npm run dev` starts wrangler's inspector on PORT + 442 unless told: keep it in this test's range.
    process.env.INSPECTOR_PORT = String(BASE_PORT + 6);
    service = await startService(BASE_PORT);
    const created = await fetch(`${service.base}/admin/v1/accounts`, {
      method: "POST",
      headers: { Authorization: `Bearer ${service.adminToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "uppy customer", credits: 100 }),
    });
    expect(created.status).toBe(201);
    key = ((await created.json()) as { api_key: { key: string } }).api_key.key;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  }, 540_000);

  afterAll(async () => {
    await browser?.close();
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
    service?.stop();
  });

  it("Uppy on another origin uploads ≥ 50 MiB in 5 MiB PATCHes through a direct URL, survives a cut, and the upload probes", async () => {
    const file = bigVideo();
    const bytes = readFileSync(file);
    expect(bytes.byteLength).toBeGreaterThanOrEqual(50 * MiB);
    const apiPort = Number(new URL(service.base).port);
    // The browser reaches the API through the proxy, which cuts the connection 12.5 MiB into the upload: in
    // the middle of the third PATCH (the preflights and the creation are a few hundred bytes).
    const proxy = await cuttingProxy(apiPort, 12.5 * MiB);
    const proxied = `http://127.0.0.1:${proxy.port}`;
    const customer = await serve("127.0.0.1", customerPage(proxied));
    servers.push(customer.server);
    const pageOrigin = `http://127.0.0.1:${customer.port}`;

    const direct = await mintDirect(proxied, pageOrigin);
    expect(direct.url.startsWith(`${proxied}/v1/direct-uploads/`)).toBe(true);

    const context = await browser.newContext();
    const page = await context.newPage();
    await watch(page);
    // What the browser sent to the upload, and what became of it (no interception: the CORS answers are the
    // service's own).
    const tus: {
      method: string;
      offset?: string;
      status?: number;
      answeredOffset?: string;
      failed?: string;
    }[] = [];
    page.on("requestfinished", async (request) => {
      if (!request.url().includes("/v1/direct-uploads/")) return;
      const response = await request.response();
      tus.push({
        method: request.method(),
        offset: request.headers()["upload-offset"],
        status: response?.status(),
        answeredOffset: response?.headers()["upload-offset"],
      });
    });
    page.on("requestfailed", (request) => {
      if (request.url().includes("/v1/direct-uploads/"))
        tus.push({
          method: request.method(),
          offset: request.headers()["upload-offset"],
          failed: request.failure()?.errorText,
        });
    });
    await page.goto(`${pageOrigin}/?endpoint=${encodeURIComponent(direct.url)}`);
    await uploadWithDashboard(page, file);
    const done = await until(
      "Uppy's complete event",
      async () => (await events(page)).find((e) => e.type === "complete"),
      240_000,
    );
    await page.screenshot({ path: path.join(SCREENSHOTS, "uploads-uppy-cross-origin.png") });
    expect(done).toEqual({ type: "complete", successful: 1, failed: 0 });
    const success = (await events(page)).find((e) => e.type === "success") as { url: string };
    expect(success.url).toBe(`${proxied}/v1/direct-uploads/${direct.url.split("/").pop()}/upload`);

    // The connection was cut in the middle of a PATCH, and Uppy went on from the offset the service reported.
    expect(proxy.cut).toBe(true);
    const patches = tus.filter((r) => r.method === "PATCH");
    const cutAt = tus.findIndex((r) => r.method === "PATCH" && (r.failed !== undefined || r.status !== 204));
    expect(cutAt, JSON.stringify(tus)).toBeGreaterThan(0);
    const resumed = tus.slice(cutAt + 1);
    const head = resumed.find((r) => r.method === "HEAD");
    expect(head?.status, JSON.stringify(tus)).toBe(200);
    // Every PATCH that went through moved the offset by 5 MiB exactly (the last by what was left).
    const answered = patches.filter((r) => r.status === 204);
    for (const r of answered) {
      const moved = Number(r.answeredOffset) - Number(r.offset);
      expect(moved === CHUNK || Number(r.answeredOffset) === bytes.byteLength, JSON.stringify(r)).toBe(true);
    }
    expect(answered.length).toBeGreaterThanOrEqual(Math.ceil(bytes.byteLength / CHUNK) - 1);
    console.info(
      `${bytes.byteLength} bytes; tus requests: ${tus.map((r) => `${r.method}@${r.offset ?? "-"}→${r.failed ?? r.status}`).join(" ")}`,
    );
    expect(Number(answered.at(-1)!.answeredOffset)).toBe(bytes.byteLength);

    // The upload is the file, byte for byte, and a task on it sees what ffprobe sees here.
    const upload = (await (await api(`/v1/uploads/${direct.id}`)).json()) as Record<string, unknown>;
    expect(upload).toMatchObject({ id: direct.id, state: "complete", size_bytes: bytes.byteLength });
    const content = await api(`/v1/uploads/${direct.id}/content`);
    expect(content.status).toBe(200);
    expect(sha256(new Uint8Array(await content.arrayBuffer()))).toBe(sha256(bytes));
    const task = await api("/v1/tasks", {
      method: "POST",
      body: JSON.stringify({ type: "video.probe", source_upload_id: direct.id }),
    });
    expect(task.status).toBe(201);
    const taskId = ((await task.json()) as { id: string }).id;
    const ended = (await (await api(`/v1/tasks/${taskId}`, { headers: { Prefer: "wait=60" } })).json()) as {
      status: string;
      outputs: { kind: string; url: string }[];
    };
    expect(ended.status, JSON.stringify(ended)).toBe("succeeded");
    expect(ended.outputs[0]?.kind).toBe("json");
    const probed = (await (await fetch(ended.outputs[0]!.url)).json()) as {
      codec: string;
      width: number;
      height: number;
      durationSec: number;
    };
    const truth = ffprobe(file);
    expect(probed, JSON.stringify(probed)).toMatchObject({
      codec: truth.codec_name,
      width: truth.width,
      height: truth.height,
    });
    expect(Math.abs(probed.durationSec - truth.duration)).toBeLessThan(0.1);

    // A second upload through the spent URL: refused (409), and the browser can read why (CORS on errors too).
    await page.reload();
    await uploadWithDashboard(page, path.resolve(import.meta.dirname, "../../src/docs/samples/sample.png"));
    const refused = await until("the second upload's error", async () =>
      (await events(page)).find((e) => e.type === "error"),
    );
    expect(refused).toMatchObject({ type: "error", status: 409 });
    await context.close();
    await proxy.close();
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 420_000);

  it("a page on a third origin gets no CORS answer from the URL: the browser blocks it, nothing is created", async () => {
    // The third origin differs from the one the URL is minted for by its host alone (same port).
    const thirdPage = await serve("localhost", customerPage(service.base));
    servers.push(thirdPage.server);
    const pageOrigin = `http://127.0.0.1:${thirdPage.port}`;
    const third = `http://localhost:${thirdPage.port}`;
    const direct = await mintDirect(service.base, pageOrigin);

    // What the service answers that origin's preflight: no Access-Control-* header at all.
    const preflight = await fetch(direct.url, {
      method: "OPTIONS",
      headers: {
        Origin: third,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "tus-resumable,upload-length,upload-metadata",
      },
    });
    expect([...preflight.headers.keys()].filter((name) => name.startsWith("access-control-"))).toEqual([]);

    const context = await browser.newContext();
    const page = await context.newPage();
    await watch(page);
    await page.goto(`${third}/?endpoint=${encodeURIComponent(direct.url)}`);
    // A plain fetch of the URL and Uppy's upload both fail in the browser, before any upload exists.
    const fetched = await page.evaluate<string>(`fetch(${JSON.stringify(direct.url)}, {
      method: "POST",
      headers: { "Tus-Resumable": "1.0.0", "Upload-Length": "4" },
    }).then((r) => "answered " + r.status, (e) => e.name + ": " + e.message)`);
    expect(fetched).toMatch(/^TypeError: Failed to fetch/);
    await uploadWithDashboard(page, path.resolve(import.meta.dirname, "../../src/docs/samples/sample.png"));
    const failed = await until("Uppy's error", async () =>
      (await events(page)).find((e) => e.type === "error"),
    );
    // No response reached the page (status 0: blocked by CORS), unlike the 409 the right origin reads above.
    expect(failed).toMatchObject({ type: "error" });
    expect((failed as { status: number | null }).status ?? 0).toBe(0);
    await context.close();

    const upload = (await (await api(`/v1/uploads/${direct.id}`)).json()) as { state: string };
    expect(upload.state).toBe("pending");
    expect(pageErrors).toEqual([]);
  }, 120_000);

  it("the console's Uploads page: a new customer uploads with the Dashboard, sees the file listed, deletes it", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await watch(page);
    const site = service.base;
    await page.goto(`${site}/console/sign-up`);
    await page.getByLabel("Email").fill(`uploader+${Date.now()}@example.com`);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.waitForURL("**/console/welcome");
    const ownKey = await page.inputValue("#new-key");

    await page.getByRole("link", { name: "Uploads" }).click();
    await page.waitForURL("**/console/uploads");
    const csp =
      (await page.request.get(`${site}/console/uploads`)).headers()["content-security-policy"] ?? "";
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(await page.locator("#upload-list").textContent()).toContain("No uploads yet.");
    expect(await page.locator("[data-quota=incomplete]").textContent()).toBe("0 of 20");

    const sample = path.resolve(import.meta.dirname, "../../src/docs/samples/sample.mp4");
    await uploadWithDashboard(page, sample);
    // The list refreshes itself when the Dashboard is done.
    const row = page.locator("#upload-list tr", { hasText: "sample.mp4" });
    await row.waitFor({ timeout: 60_000 });
    const id = (await row.getAttribute("data-id"))!;
    const text = (await row.textContent()) ?? "";
    for (const part of [
      `${readFileSync(sample).byteLength.toLocaleString("en-US")} B`,
      "video/mp4",
      "complete",
    ])
      expect(text).toContain(part);
    await page.screenshot({ path: path.join(SCREENSHOTS, "console-uploads-dashboard.png"), fullPage: true });
    const own = (p: string, init: RequestInit = {}) =>
      fetch(`${site}${p}`, { ...init, headers: { Authorization: `Bearer ${ownKey}` } });
    const stored = await own(`/v1/uploads/${id}/content`);
    expect(sha256(new Uint8Array(await stored.arrayBuffer()))).toBe(sha256(readFileSync(sample)));

    await row.getByRole("button", { name: `Delete upload ${id}` }).click();
    await page.waitForURL("**/console/uploads?done=deleted");
    expect(await page.locator("main").textContent()).toContain("Upload deleted.");
    expect(await page.locator(`tr[data-id="${id}"]`).count()).toBe(0);
    expect((await own(`/v1/uploads/${id}`)).status).toBe(404);
    await context.close();

    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 180_000);
});
