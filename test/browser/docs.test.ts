import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningService, startService } from "./service.ts";
import { CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS } from "./support.ts";

const run = promisify(execFile);

/**
 * The API reference (/docs: Scalar over /docs/openapi.json) in headless Chromium against the service started
 * like `npm run dev`: navigation, search, the code samples (the extract-audio curl sample is run as shown),
 * every request on the service's own origin, no CSP violation, no serious or critical axe-core finding, at
 * 1280 px and 390 px. The /errors pages the reference links to are the service's own.
 */

/**
 * How long one wait for the reference's rendering may take. Scalar renders in the page's main thread: its first
 * render of an operation took 20–30 s alone on 2 cores and 60–75 s with two clones' `npm test` at once, where
 * a 60 s wait failed (issue 42). Each wait is bounded by this, and each test by the browser project's 180 s.
 */
const RENDER_MS = 150_000;
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const AXE = readFileSync(path.resolve(import.meta.dirname, "../../node_modules/axe-core/axe.min.js"), "utf8");

type Sample = { lang: string; label: string; source: string };
type Doc = { paths: Record<string, Record<string, { operationId?: string; "x-codeSamples"?: Sample[] }>> };
type AxeResult = { violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[] };

/** What one browser context saw: every request URL, CSP violations (events and console), page errors. */
type Watch = { requests: string[]; violations: string[]; errors: string[] };

async function watchedContext(browser: Browser, viewport: { width: number; height: number }, phone = false) {
  const watch: Watch = { requests: [], violations: [], errors: [] };
  const context = await browser.newContext({ viewport, isMobile: phone, hasTouch: phone });
  // Navigations (networkidle) and locator actions wait as long as a render may take.
  context.setDefaultTimeout(RENDER_MS);
  context.on("request", (request) => watch.requests.push(request.url()));
  // Runs through the DevTools protocol, not as a page script: the page's CSP does not apply to it.
  await context.addInitScript({
    content: `document.addEventListener("securitypolicyviolation", (event) =>
      console.log("CSP violation: " + event.effectiveDirective + " " + event.blockedURI + " " + event.sample));`,
  });
  context.on("console", (message) => {
    if (/Content.Security.Policy|CSP violation/i.test(message.text())) watch.violations.push(message.text());
  });
  context.on("weberror", (error) => watch.errors.push(error.error().message));
  return { context, watch };
}

/** axe-core in the page (evaluated over the DevTools protocol, so the CSP need not allow it). */
async function axe(page: Page) {
  await page.evaluate(AXE);
  const result = await page.evaluate<AxeResult>(
    "axe.run(document, { resultTypes: ['violations'] })" as unknown as () => AxeResult,
  );
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

describe.skipIf(!existsSync(CHROMIUM))("/docs in headless Chromium", () => {
  let service: RunningService;
  let browser: Browser;
  let desktop: { context: BrowserContext; watch: Watch };
  let page: Page;
  let doc: Doc;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    service = await startService(27_000 + Math.floor(Math.random() * 1000) * 2);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    desktop = await watchedContext(browser, DESKTOP);
    page = await desktop.context.newPage();
    doc = (await (await fetch(`${service.base}/docs/openapi.json`)).json()) as Doc;
  }, 600_000);

  afterAll(async () => {
    await browser?.close();
    service?.stop();
  });

  it("renders with navigation: every tag and, under Operations, every synchronous operation", async () => {
    const response = await page.goto(`${service.base}/docs`, { waitUntil: "networkidle" });
    expect(response?.status()).toBe(200);
    const csp = response?.headers()["content-security-policy"] ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'nonce-[^']+'/);
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);

    const sidebar = page.getByRole("complementary", { name: /^Sidebar/ });
    await expect
      .poll(() => sidebar.getByText("Operations", { exact: true }).count(), { timeout: RENDER_MS })
      .toBeGreaterThan(0);
    for (const tag of ["Introduction", "Tasks", "Operations", "Files", "Webhooks"]) {
      await expect
        .poll(() => sidebar.getByText(tag, { exact: true }).first().isVisible(), { timeout: RENDER_MS })
        .toBe(true);
    }
    await sidebar.getByText("Operations", { exact: true }).first().click();
    await expect
      .poll(() => sidebar.getByText("Extract the audio track of a video").first().isVisible(), {
        timeout: RENDER_MS,
      })
      .toBe(true);
    await page.screenshot({ path: path.join(SCREENSHOTS, "docs-1280.png") });
  });

  it('search finds "extract-audio" and opens the operation with its curl and TypeScript samples', async () => {
    await page
      .getByRole("button", { name: /search/i })
      .first()
      .click();
    await page.keyboard.type("extract-audio");
    const hit = page.getByRole("option", { name: /Extract the audio track of a video/ });
    await expect.poll(() => hit.count(), { timeout: RENDER_MS }).toBeGreaterThan(0);
    expect(await hit.first().textContent()).toContain("/v1/video/extract-audio");
    await page.screenshot({ path: path.join(SCREENSHOTS, "docs-search-1280.png") });
    await hit.first().click();
    await page.waitForURL(/#tag\/operations\/POST\/v1\/video\/extract-audio$/);

    const samples = doc.paths["/v1/video/extract-audio"]!.post!["x-codeSamples"]!;
    expect(samples.map((s) => s.label)).toEqual(["curl", "TypeScript client"]);
    const section = page.locator('section[id$="tag/operations/POST/v1/video/extract-audio"]');
    const shown = () => section.locator("pre, code").allInnerTexts();
    // The curl sample is the one shown first, as the document has it.
    await expect
      .poll(async () => (await shown()).some((t) => t.trim() === samples[0]!.source), { timeout: RENDER_MS })
      .toBe(true);
    await section.getByRole("button", { name: /Change code sample language/ }).click();
    await page.getByRole("option", { name: "TypeScript client" }).click();
    await expect
      .poll(async () => (await shown()).some((t) => t.trim() === samples[1]!.source), { timeout: RENDER_MS })
      .toBe(true);
    await section.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, "docs-operation-1280.png") });
  });

  it("the extract-audio curl sample, run as shown with $P6_API_KEY, returns the source's audio", async () => {
    const created = await fetch(`${service.base}/admin/v1/accounts`, {
      method: "POST",
      headers: { Authorization: `Bearer ${service.adminToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "docs sample", credits: 100 }),
    });
    expect(created.status).toBe(201);
    const key = ((await created.json()) as { api_key: { key: string } }).api_key.key;
    const curl = doc.paths["/v1/video/extract-audio"]!.post!["x-codeSamples"]![0]!.source;
    expect(curl).toContain(`${service.base}/v1/video/extract-audio`);
    // Children run asynchronously: a blocked event loop misses the service closing its idle keep-alive
    // sockets, and the next fetch went out on a closed one ("other side closed").
    const { stdout: out } = await run("bash", ["-c", `${curl} -sS -w '\\n%{http_code}'`], {
      env: { ...process.env, P6_API_KEY: key },
      encoding: "utf8",
      timeout: 120_000,
    });
    const status = out.slice(out.lastIndexOf("\n") + 1);
    const body = JSON.parse(out.slice(0, out.lastIndexOf("\n"))) as { url: string; duration: number };
    expect(status, out).toBe("200");

    // Checked by its own route: the output downloaded and probed, against the sample source probed too.
    const dir = mkdtempSync(path.join(os.tmpdir(), "p6-docs-sample-"));
    try {
      const probe = async (file: string) =>
        JSON.parse(
          (
            await run("ffprobe", ["-v", "error", "-show_streams", "-show_format", "-of", "json", file], {
              encoding: "utf8",
            })
          ).stdout,
        ) as { streams: { codec_type: string; codec_name: string }[]; format: { duration: string } };
      const sourceFile = path.join(dir, "source.mp4");
      const outputFile = path.join(dir, "output.mp3");
      const sourceUrl = (
        JSON.parse(curl.slice(curl.indexOf("-d '") + 4, curl.lastIndexOf("'"))) as {
          source_url: string;
        }
      ).source_url;
      writeFileSync(sourceFile, Buffer.from(await (await fetch(sourceUrl)).arrayBuffer()));
      writeFileSync(outputFile, Buffer.from(await (await fetch(body.url)).arrayBuffer()));
      const source = await probe(sourceFile);
      const output = await probe(outputFile);
      expect(output.streams.map((s) => `${s.codec_type}/${s.codec_name}`)).toEqual(["audio/mp3"]);
      const sourceAudio = Number(source.format.duration);
      expect(Math.abs(Number(output.format.duration) - sourceAudio)).toBeLessThan(0.2);
      expect(Math.abs(body.duration - sourceAudio)).toBeLessThan(0.2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it("an error code link in the guides opens that error's page", async () => {
    await page.goto(`${service.base}/docs#description/errors`, { waitUntil: "networkidle" });
    const link = page.locator('a[href="/errors/rate-limit"]').first();
    await link.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, "docs-errors-1280.png") });
    await link.click();
    await page.waitForURL("**/errors/rate-limit");
    expect(await page.locator("h1").textContent()).toBe("429 Too Many Requests");
  });

  it("axe-core finds no serious or critical violation at 1280 px", async () => {
    await page.goto(`${service.base}/docs#tag/operations/POST/v1/video/extract-audio`, {
      waitUntil: "networkidle",
    });
    await page.locator('section[id$="tag/operations/POST/v1/video/extract-audio"]').waitFor();
    expect(await axe(page)).toEqual([]);
  });

  it("on a 390 px phone: no sideways scrolling, clean for axe-core", async () => {
    const phone = await watchedContext(browser, PHONE, true);
    try {
      const mobile = await phone.context.newPage();
      await mobile.goto(`${service.base}/docs`, { waitUntil: "networkidle" });
      await mobile.getByRole("heading", { name: "p6 media API" }).first().waitFor();
      expect(await mobile.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(
        PHONE.width,
      );
      await mobile.screenshot({ path: path.join(SCREENSHOTS, "docs-390.png") });
      expect(await axe(mobile)).toEqual([]);
      await mobile.goto(`${service.base}/docs#tag/operations/POST/v1/video/extract-audio`, {
        waitUntil: "networkidle",
      });
      await mobile.locator('section[id$="tag/operations/POST/v1/video/extract-audio"]').waitFor();
      await mobile.screenshot({ path: path.join(SCREENSHOTS, "docs-operation-390.png") });
      expect(await axe(mobile)).toEqual([]);
      const origin = new URL(service.base).origin;
      expect(phone.watch.requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
      expect(phone.watch.violations).toEqual([]);
      expect(phone.watch.errors).toEqual([]);
    } finally {
      await phone.context.close();
    }
  });

  it("made no request outside the service and tripped no CSP rule", () => {
    const origin = new URL(service.base).origin;
    expect(desktop.watch.requests.length).toBeGreaterThan(3);
    expect(desktop.watch.requests.some((url) => url.includes("/docs/assets/chunks/"))).toBe(true);
    expect(desktop.watch.requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
    expect(desktop.watch.violations).toEqual([]);
    expect(desktop.watch.errors).toEqual([]);
  });
});
