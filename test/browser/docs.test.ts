import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningService, startService } from "./service.ts";
import { CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS } from "./support.ts";

/**
 * The API reference (/docs) and the error pages in headless Chromium against the service started like
 * `npm run dev`: every request the page makes stays on the service's origin, nothing trips its CSP, and it
 * shows every operation of the live document, the error table and the webhooks section, on a phone too.
 */

const PHONE = { width: 390, height: 844 };

type Doc = {
  paths: Record<string, Record<string, { summary?: string }>>;
  webhooks?: Record<string, Record<string, unknown>>;
};

describe.skipIf(!existsSync(CHROMIUM))("/docs in headless Chromium", () => {
  let service: RunningService;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    service = await startService(26_000 + Math.floor(Math.random() * 1000) * 2);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
    context.on("request", (request) => requests.push(request.url()));
    page = await context.newPage();
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    service?.stop();
  });

  it("loads from the service alone and shows every operation, the error table and webhooks", async () => {
    const response = await page.goto(`${service.base}/docs`, { waitUntil: "networkidle" });
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("default-src 'none'");

    const doc = (await (await fetch(`${service.base}/v1/openapi.json`)).json()) as Doc;
    // Webhooks are listed like operations, by their name (empty until the document declares them).
    const operations = [...Object.entries(doc.paths), ...Object.entries(doc.webhooks ?? {})].flatMap(
      ([p, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${p}`),
    );
    expect(operations.length).toBeGreaterThan(10);
    const heads = page.locator("section.op .op-head");
    // A long page on a busy machine: wait until every operation has been parsed.
    await expect.poll(() => heads.count(), { timeout: 30_000 }).toBeGreaterThanOrEqual(operations.length);
    const shown = (await heads.allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());
    for (const operation of operations) {
      expect(shown).toContain(operation);
      expect(await heads.nth(shown.indexOf(operation)).isVisible()).toBe(true);
    }

    await expect.poll(() => page.locator("h2#webhooks").isVisible()).toBe(true);
    for (const language of ["TypeScript", "Python", "Go"]) {
      expect(
        await page.getByRole("heading", { name: `Verification in ${language}` }).count(),
      ).toBeGreaterThan(0);
    }
    const errorRows = await page.locator("h2#errors ~ table tbody tr").count();
    const codes = (await page.locator("h2#errors ~ table tbody tr td:nth-child(2)").allTextContents()).map(
      (c) => c.trim(),
    );
    expect(errorRows).toBeGreaterThanOrEqual(16);
    expect(codes).toEqual(
      expect.arrayContaining(["VALIDATION_INVALID_ARGUMENT", "RATE_LIMIT_EXCEEDED", "INTERNAL"]),
    );

    // Readable on a phone: nothing wider than the screen (wide code and tables scroll inside their box).
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(
      PHONE.width,
    );
    await page.screenshot({ path: path.join(SCREENSHOTS, "docs-phone.png") });
    await page.locator("#op-post-v1-tasks, section.op").first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, "docs-phone-operation.png") });
  });

  it("an error table link opens that error's type page", async () => {
    await page.locator('h2#errors ~ table a[href="/errors/rate-limit"]').click();
    await page.waitForURL("**/errors/rate-limit");
    expect(await page.locator("h1").textContent()).toBe("429 Too Many Requests");
    expect(await page.locator("main").textContent()).toContain("Retry-After");
    await page.screenshot({ path: path.join(SCREENSHOTS, "error-page-phone.png") });
  });

  it("made no request outside the service and tripped no CSP rule", () => {
    const origin = new URL(service.base).origin;
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
