import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import os from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningService, startService } from "./service.ts";
import { CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, startHelperServer, until } from "./support.ts";

/**
 * The dashboard in a real browser (Debian's Chromium, headless) against the service started like `npm run dev`:
 * an operator's whole day, one step per test, with a screenshot of every page in test-artifacts/screenshots.
 */

const LAPTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

describe.skipIf(!existsSync(CHROMIUM))("dashboard in headless Chromium", () => {
  let service: RunningService;
  let helper: Awaited<ReturnType<typeof startHelperServer>>;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];

  // Shared along the journey.
  let accountId = "";
  let defaultKey = "";
  let newKey = "";
  let taskId = "";

  const api = (p: string, key: string, init: RequestInit = {}) =>
    fetch(`${service.base}${p}`, {
      ...init,
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...init.headers },
    });
  const pathname = () => new URL(page.url()).pathname;
  const shot = async (name: string) => {
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  };
  const text = async () => (await page.locator("main").textContent()) ?? "";

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    helper = await startHelperServer();
    service = await startService(24_000 + Math.floor(Math.random() * 1000) * 2);
    profile = mkdtempSync(path.join(os.tmpdir(), "p6-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: LAPTOP,
    });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: service.base });
    page = context.pages()[0] ?? (await context.newPage());
    page.on("console", (message) => {
      if (message.type() === "error" && /Content.Security.Policy/i.test(message.text())) {
        cspViolations.push(message.text());
      }
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));
  }, 300_000);

  afterAll(async () => {
    await context?.close();
    service?.stop();
    await new Promise((resolve) => (helper?.server as Server | undefined)?.close(resolve) ?? resolve(null));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it("refuses everything without a session, and signs in with the admin token", async () => {
    await page.goto(`${service.base}/dashboard/accounts`);
    expect(pathname()).toBe("/dashboard/login");
    await shot("sign-in");

    await page.fill("#token", "not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    expect(await text()).toContain("That is not the admin token.");

    await page.fill("#token", service.adminToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL("**/dashboard/accounts");
    const cookie = (await context.cookies()).find((c) => c.name === "p6_dashboard")!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/dashboard" });
    expect(cookie.expires - Date.now() / 1000).toBeGreaterThan(11.9 * 3600);
    await shot("accounts");
  });

  it("creates an account: its default key is shown once, and the copy button copies it", async () => {
    await page.fill("#field-name", "Browser Co");
    await page.fill("#field-credits", "100");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForSelector("#new-key");
    defaultKey = await page.inputValue("#new-key");
    expect(defaultKey).toMatch(/^p6_[0-9A-Z]{26}:[0-9a-f]{64}$/);
    expect(await page.inputValue("#webhook-secret")).toMatch(/^whsec_/);
    await page.click('[data-copy="new-key"]');
    await expect.poll(() => page.locator('[data-copy="new-key"]').textContent()).toBe("Copied");
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(defaultKey);
    await shot("account-created");

    const open = page.getByRole("link", { name: "Open the account" });
    accountId = (await open.getAttribute("href"))!.split("/").pop()!;
    await open.click();
    expect(await page.content()).not.toContain(defaultKey.split(":")[1]);
  });

  it("grants credits: the ledger shows the grant and the new balance", async () => {
    await page.fill("#field-amount", "50");
    await page.fill("#field-reason", "Browser test top-up");
    await page.getByRole("button", { name: "Grant" }).click();
    await page.waitForURL("**?done=granted");
    const main = await text();
    expect(main).toContain("Credits granted");
    expect(main).toContain("150");
    expect(main).toContain("Browser test top-up");
    await shot("account");
  });

  it("creates a key with name, scopes, expiry and rate limit, and it works against /v1/tasks", async () => {
    await page.getByRole("link", { name: "API keys" }).click();
    await page.fill("#field-name", "browser");
    await page.fill("#field-expires_in_days", "7");
    await page.fill("#field-rate_limit_per_minute", "30");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.waitForSelector("#new-key");
    newKey = await page.inputValue("#new-key");
    await page.click('[data-copy="new-key"]');
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(newKey);
    const row = page.locator(`tr[data-id="${newKey.slice(3, 29)}"]`);
    // Keys are shown by their whole id (issue 31: the time part alone told keys a second apart not apart).
    expect(await row.textContent()).toContain(`p6_${newKey.slice(3, 29)}`);
    expect(await row.textContent()).toContain("30");
    await shot("key-created");

    const list = await api("/v1/tasks", newKey);
    expect(list.status).toBe(200);
    expect(list.headers.get("ratelimit-policy")).toContain("q=30");

    // A task made with the new key (when the service has task creation), watched through to its webhook.
    const created = await api("/v1/tasks", newKey, {
      method: "POST",
      body: JSON.stringify({
        type: "image.watermark",
        source_url: `${helper.base}/photo.png`,
        params: { text: "p6" },
        webhook: `${helper.base}/hook`,
      }),
    });
    if (created.status === 201) taskId = ((await created.json()) as { id: string }).id;
  });

  it("revokes the key after a confirmation, and the API refuses it at once", async () => {
    const keyId = newKey.slice(3, 29);
    await page.goto(`${service.base}/dashboard/accounts/${accountId}/keys`);
    await page.locator(`tr[data-id="${keyId}"]`).getByRole("link", { name: "Revoke…" }).click();
    expect(await text()).toContain("cannot be restored");
    await shot("revoke-confirm");
    await page.getByRole("button", { name: "Revoke the key" }).click();
    await page.waitForURL("**?done=revoked");
    expect(await page.locator(`tr[data-id="${keyId}"]`).textContent()).toContain("revoked");
    await shot("keys");

    const refused = await api("/v1/tasks", newKey);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe("AUTH_INVALID_TOKEN");
    expect((await api("/v1/tasks", defaultKey)).status).toBe(200);
  });

  it("reveals and rotates the webhook secret; the old one's remaining validity is shown", async () => {
    await page.getByRole("link", { name: "Webhook secret" }).click();
    expect(await page.locator("#secret-0").count()).toBe(0);
    await page.getByRole("button", { name: "Reveal secret" }).click();
    const before = await page.inputValue("#secret-0");
    expect(before).toMatch(/^whsec_/);

    await page.getByRole("link", { name: "Rotate…" }).click();
    await page.waitForURL("**/webhook-secret/rotate");
    expect(await text()).toContain("Rotate the webhook signing secret?");
    await page.getByRole("button", { name: "Rotate the secret" }).click();
    await page.waitForURL("**?done=rotated");
    expect(await text()).toMatch(/(23 h 59 min|24 h) left/);
    await page.getByRole("button", { name: "Reveal secrets" }).click();
    const current = await page.inputValue("#secret-0");
    expect(current).toMatch(/^whsec_/);
    expect(current).not.toBe(before);
    expect(await page.inputValue("#secret-1")).toBe(before);
    await shot("webhook-secret");
  });

  it("lists the account's tasks with a status filter and opens a task's detail", async () => {
    if (taskId) {
      // Wait for the end of the task and its webhook, so the detail page has outputs and an attempt.
      await until("the task to end", async () => {
        const task = (await (await api(`/v1/tasks/${taskId}`, defaultKey)).json()) as { status: string };
        return ["succeeded", "failed"].includes(task.status) ? task : undefined;
      });
      await until("the webhook delivery", async () => (helper.deliveries.length > 0 ? true : undefined));
    } else {
      taskId = insertTaskWithDelivery(service, accountId);
    }
    await page.getByRole("link", { name: "Tasks" }).click();
    const row = page.locator("tr", { has: page.locator(`a[href$="/tasks/${taskId}"]`) });
    const status = (await row.locator(".badge").textContent()) ?? "";
    await page.locator(".pills").getByRole("link", { name: status, exact: true }).click();
    expect(page.url()).toContain(`status=${status}`);
    await shot("tasks");

    await page.locator(`a[href$="/tasks/${taskId}"]`).click();
    const main = await until("the delivery attempt on the page", async () => {
      await page.reload();
      const content = await text();
      return /\d+ ms/.test(content) ? content : undefined;
    });
    expect(main).toContain(taskId);
    expect(main).toContain("Webhook deliveries");
    expect(main).toMatch(/delivered|pending|dead/);
    if (status === "succeeded") expect(await page.locator('a[href*="/files/"]').count()).toBeGreaterThan(0);
    await shot("task");
  });

  it("reads well on a phone: nothing wider than the screen", async () => {
    await page.setViewportSize(PHONE);
    for (const [name, url] of [
      ["accounts-phone", "/dashboard/accounts"],
      ["keys-phone", `/dashboard/accounts/${accountId}/keys`],
      ["task-phone", `/dashboard/accounts/${accountId}/tasks/${taskId}`],
    ] as const) {
      await page.goto(`${service.base}${url}`);
      expect(await page.evaluate<number>("document.documentElement.scrollWidth"), name).toBeLessThanOrEqual(
        PHONE.width,
      );
      await shot(name);
    }
    await page.setViewportSize(LAPTOP);
  });

  it("signs out; a forged cookie gets nowhere; no CSP violation or script error on any page", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL("**/dashboard/login");
    await page.goto(`${service.base}/dashboard/accounts`);
    expect(pathname()).toBe("/dashboard/login");

    const host = new URL(service.base).hostname;
    await context.addCookies([
      { name: "p6_dashboard", value: "eyJrIjoic2Vzc2lvbiJ9.forged", domain: host, path: "/dashboard" },
    ]);
    await page.goto(`${service.base}/dashboard/accounts`);
    expect(pathname()).toBe("/dashboard/login");

    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});

/**
 * Before task creation exists in the service, the task (failed, with one delivery of two attempts) goes straight
 * into the instance's local D1, as the tasks code would write it.
 */
function insertTaskWithDelivery(service: RunningService, accountId: string) {
  const id = ulid();
  const now = Date.now();
  const delivery = `msg_${ulid()}`;
  service.sql(
    `INSERT INTO tasks (id, account_id, type, status, source, source_url, params, request_id, cost, progress,
       error_code, error_message, error_request_id, outputs, data_removed, created_at, started_at, completed_at,
       expires_at, webhook_url)
     VALUES ('${id}', '${accountId}', 'image.watermark', 'failed', 'api', 'https://example.com/missing.png',
       '{"text":"p6"}', '${ulid()}', 1, 0, 'SOURCE_UNREACHABLE', 'The source answered 404.', NULL, '[]', 0,
       ${now - 3000}, ${now - 2500}, ${now - 2000}, ${now + 86_400_000}, 'https://hooks.example.com/p6');
     INSERT INTO webhook_deliveries (id, task_id, account_id, event, url, body, status, attempt_count,
       next_attempt_at, created_at, completed_at)
     VALUES ('${delivery}', '${id}', '${accountId}', 'failed', 'https://hooks.example.com/p6', '{}', 'delivered', 2,
       NULL, ${now - 2000}, ${now - 1000});
     INSERT INTO webhook_attempts (id, delivery_id, attempt, status_code, latency_ms, error, created_at)
     VALUES ('${ulid()}', '${delivery}', 1, 503, 412, 'HTTP 503', ${now - 2000}),
            ('${ulid()}', '${delivery}', 2, 200, 87, NULL, ${now - 1000});`,
  );
  return id;
}
