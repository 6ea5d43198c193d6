import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import os from "node:os";
import path from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningService, startService } from "./service.ts";
import { CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, startHelperServer, until } from "./support.ts";

/**
 * The customer console in a real browser (Debian's Chromium, headless) against the service started like
 * `npm run dev` (which grants 100 sign-up credits): a new customer's first hour, one step per test, then a
 * second customer who must see nothing of the first. Screenshots in test-artifacts/screenshots/console-*.
 */

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const PASSWORD = "violet staircase under the sea";
const NEW_PASSWORD = "plum kettle orbit sandal";

const AXE = readFileSync(path.resolve(import.meta.dirname, "../../node_modules/axe-core/axe.min.js"), "utf8");
type AxeResult = { violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[] };

/** axe-core's serious and critical findings on the page (evaluated over DevTools, so the CSP need not allow it). */
async function axe(p: Page) {
  await p.evaluate(AXE);
  const result = await p.evaluate<AxeResult>(
    "axe.run(document, { resultTypes: ['violations'] })" as unknown as () => AxeResult,
  );
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
}

describe.skipIf(!existsSync(CHROMIUM))("customer console in headless Chromium", () => {
  let service: RunningService;
  let helper: Awaited<ReturnType<typeof startHelperServer>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];

  const email = `first.customer+${randomUUID().slice(0, 8)}@example.com`;
  let defaultKey = "";
  let readOnlyKey = "";
  let firstTaskId = "";
  let firstUploadId = "";
  const secrets: string[] = [];

  /** The browser's address: WebAuthn refuses an IP address as relying party id, so "localhost", not 127.0.0.1. */
  let site = "";
  const api = (p: string, key: string, init: RequestInit = {}) =>
    fetch(`${service.base}${p}`, {
      ...init,
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...init.headers },
    });
  const pathname = (p = page) => new URL(p.url()).pathname;
  const shot = async (name: string, p = page) => {
    await p.screenshot({ path: path.join(SCREENSHOTS, `console-${name}.png`), fullPage: true });
  };
  /** The page as it is, at 1280 px and at 390 px (console-<name>.png and console-<name>-phone.png). */
  const shots = async (name: string, p = page) => {
    await shot(name, p);
    await p.setViewportSize(PHONE);
    expect(await p.evaluate<number>("document.documentElement.scrollWidth"), name).toBeLessThanOrEqual(
      PHONE.width,
    );
    await shot(`${name}-phone`, p);
    await p.setViewportSize(DESKTOP);
  };
  /** How the stylesheet draws a form field: border, corners, padding, type size, width. */
  const fieldLook = (p: Page, selector: string) =>
    p.evaluate<string>(`(() => {
      const field = document.querySelector(${JSON.stringify(selector)});
      const s = getComputedStyle(field);
      return [s.borderTopWidth, s.borderTopStyle, s.borderTopColor, s.borderTopLeftRadius, s.paddingLeft,
        s.fontSize, Math.round(field.getBoundingClientRect().width)].join(" ");
    })()`);
  const userSql = (what: string) => `SELECT count(*) FROM ${what} AND u.email = '${email.toLowerCase()}'`;
  /** The newest mail to `to` whose subject matches, opened in the dev mailbox, and its link followed. */
  const followMailedLink = async (p: Page, to: string, subject: string, count: number) => {
    await until(`${count} mail(s) to ${to}`, async () => {
      await p.goto(`${site}/dev/mailbox?to=${encodeURIComponent(to)}`);
      return (await p.getByRole("link", { name: subject }).count()) >= count ? true : undefined;
    });
    await p.getByRole("link", { name: subject }).first().click();
    await p.waitForURL("**/dev/mailbox/*");
    const link = p.locator("pre.mail a");
    expect(await link.getAttribute("href")).toMatch(/#token=[0-9A-Z]{26}\.[A-Za-z0-9_-]{43}$/);
    await link.click();
    // The page's script moves the token from the fragment into the form and drops it from the address bar.
    await expect.poll(() => p.url()).not.toContain("#token");
    expect(await p.inputValue("#field-token")).toMatch(/^[0-9A-Z]{26}\.[A-Za-z0-9_-]{43}$/);
  };
  const watch = (p: Page) => {
    p.on("pageerror", (error) => pageErrors.push(error.message));
    p.on("console", (message) => {
      if (message.type() === "error" && /Content.Security.Policy/i.test(message.text())) {
        cspViolations.push(message.text());
      }
    });
  };
  const createTask = (key: string, hook: string) =>
    api("/v1/tasks", key, {
      method: "POST",
      body: JSON.stringify({
        type: "image.watermark",
        source_url: `${helper.base}/photo.png`,
        params: { text: "p6" },
        webhook: `${helper.base}${hook}`,
      }),
    });
  const signInWithPassword = async (p: Page, address: string) => {
    await p.goto(`${site}/console/sign-in`);
    await p.getByLabel("Email").fill(address);
    await p.getByLabel("Password").fill(PASSWORD);
    await p.getByRole("button", { name: "Sign in", exact: true }).click();
    await p.waitForURL(`${site}/console`);
  };

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    helper = await startHelperServer({ width: 320, height: 200 });
    // 30000-31999: the dashboard's tests use 24000-25999 and /docs' 26000-27999, so all three can run at once.
    service = await startService(30_000 + Math.floor(Math.random() * 1000) * 2);
    site = service.base.replace("127.0.0.1", "localhost");
    profile = mkdtempSync(path.join(os.tmpdir(), "p6-console-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: { width: 1280, height: 800 },
    });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: site });
    page = context.pages()[0] ?? (await context.newPage());
    watch(page);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  }, 540_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    service?.stop();
    await new Promise((resolve) => (helper?.server as Server | undefined)?.close(resolve) ?? resolve(null));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it("signs up: the default key is shown once with a copy button, and it works on /v1/tasks", async () => {
    await page.goto(`${site}/console`);
    expect(pathname()).toBe("/console/sign-in");
    await page.getByRole("link", { name: "Sign up" }).click();
    await page.getByLabel("Email").fill(email);
    // The meter judges as the user types, with the server's own check, before anything is submitted.
    const posts: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => {
      if (r.method() === "POST") posts.push(new URL(r.url()).pathname);
    };
    page.on("request", onRequest);
    const meter = page.locator("#field-password-strength");
    // The email field is drawn like the password field under it (it was the browser's bare input).
    // (Soft checks for how pages look: a miss is reported without stopping the journey the next steps need.)
    expect.soft(await fieldLook(page, "#field-email")).toBe(await fieldLook(page, "#field-password"));
    await page.getByLabel("Password").pressSequentially("Summer2026!!", { delay: 20 });
    await expect.poll(() => meter.textContent(), { timeout: 10_000 }).toContain("Too easy to guess.");
    expect(await meter.getAttribute("data-acceptable")).toBe("false");
    await shot("sign-up-meter", page);
    await page.getByLabel("Password").fill("");
    await page.getByLabel("Password").pressSequentially(PASSWORD, { delay: 10 });
    await expect.poll(() => meter.textContent(), { timeout: 10_000 }).toBe("Hard to guess: good.");
    expect(new Set(posts)).toEqual(new Set(["/console/password-strength"]));
    page.off("request", onRequest);
    await page.getByLabel("Password").fill("password1234");
    await page.getByRole("button", { name: "Sign up" }).click();
    expect(await page.locator("main").textContent()).toContain("Too easy to guess.");
    await page.getByLabel("Password").fill("qwertyuiopas");
    await page.getByRole("button", { name: "Sign up" }).click();
    expect(await page.locator("#field-password-error").textContent()).toContain("Too easy to guess.");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.waitForURL("**/console/welcome");
    await page.waitForSelector("#new-key");
    defaultKey = await page.inputValue("#new-key");
    expect(defaultKey).toMatch(/^p6_[0-9A-Z]{26}:[0-9a-f]{64}$/);
    await page.click('[data-copy="new-key"]');
    await expect.poll(() => page.locator('[data-copy="new-key"]').textContent()).toBe("Copied");
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(defaultKey);
    await shot("signed-up");
    expect(await axe(page)).toEqual([]);
    // Reloading the page after the sign-up: no second account, and the key is not shown again.
    expect((await page.reload())!.request().method()).toBe("GET");
    expect(pathname()).toBe("/console");
    expect(await page.content()).not.toContain(defaultKey.split(":")[1]);
    expect(await service.count(`SELECT count(*) FROM users WHERE email = '${email.toLowerCase()}'`)).toBe(1);

    const cookie = (await context.cookies()).find((c) => c.name === "p6_console")!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/console" });
    expect((await api("/v1/tasks", defaultKey)).status).toBe(200);

    const secret = defaultKey.split(":")[1]!;
    for (const p of ["/console", "/console/keys", "/console/security", "/console/credits"]) {
      await page.goto(`${site}${p}`);
      expect(await page.content(), p).not.toContain(secret);
    }
    // The sign-up credits wait for the email's verification.
    await page.goto(`${site}/console`);
    expect(await page.locator("[data-balance]").textContent()).toBe("0");
    expect(await page.locator("#verify-banner").textContent()).toContain(
      "Your 100 sign-up credits are added once it is verified.",
    );
  });

  it("verifies the email through the local mailbox: the credits arrive once; reloads repeat nothing", async () => {
    const verifyTokens = userSql(
      "email_tokens t JOIN users u ON u.id = t.user_id WHERE t.purpose = 'verify'",
    );
    await page.goto(`${site}/console`);
    await page.getByRole("button", { name: "Send a new link" }).click();
    await page.waitForURL("**/console?mail=sent");
    expect((await page.reload())!.request().method()).toBe("GET");
    expect(await service.count(verifyTokens)).toBe(2); // the sign-up's and this one, not a third
    await shots("verify-banner");

    await until("two mails in the mailbox", async () => {
      await page.goto(`${site}/dev/mailbox?to=${encodeURIComponent(email)}`);
      return (await page.locator("tbody tr").count()) === 2 ? true : undefined;
    });
    await shots("mailbox");
    await page.getByRole("link", { name: "Verify your email for p6 media API" }).first().click();
    await shots("mailbox-message");
    await followMailedLink(page, email, "Verify your email for p6 media API", 2);
    await shots("verify");
    await page.getByRole("button", { name: "Verify my email" }).click();
    await page.waitForURL("**/console/verify?done=verified");
    expect((await page.reload())!.request().method()).toBe("GET");
    await shots("verified");
    const grants = userSql(
      "credit_ledger l JOIN users u ON u.account_id = l.account_id WHERE l.kind = 'grant'",
    );
    expect(await service.count(grants)).toBe(1);
    await page.goto(`${site}/console`);
    expect(await page.locator("[data-balance]").textContent()).toBe("100");
    expect(await page.locator("#verify-banner").count()).toBe(0);
  });

  it("creates a read-only key (POST refused 403), then revokes it after a confirmation (401)", async () => {
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByLabel("Name").fill("reader");
    await page.getByLabel("write").uncheck();
    await page.getByRole("button", { name: "Create key" }).click();
    await page.waitForSelector("#new-key");
    expect(pathname()).toBe("/console/keys");
    readOnlyKey = await page.inputValue("#new-key");
    const keyId = readOnlyKey.slice(3, 29);
    expect(await page.locator(`tr[data-id="${keyId}"]`).textContent()).toContain(`p6_${keyId}`);
    await shot("key-created");
    // A reload after "Create key": the same rows (3 did become 4 before), the key not shown again.
    const rows = await page.locator("tr[data-id]").count();
    expect((await page.reload())!.request().method()).toBe("GET");
    expect(await page.locator("tr[data-id]").count()).toBe(rows);
    expect(await page.locator("#new-key").count()).toBe(0);

    expect((await api("/v1/tasks", readOnlyKey)).status).toBe(200);
    const post = await createTask(readOnlyKey, "/never");
    expect(post.status).toBe(403);

    await page.locator(`tr[data-id="${keyId}"]`).getByRole("link", { name: "Revoke…" }).click();
    await page.getByRole("button", { name: "Revoke" }).click();
    await page.waitForURL("**/console/keys?done=revoked");
    expect(await page.locator(`tr[data-id="${keyId}"]`).textContent()).toContain("revoked");
    expect((await page.reload())!.request().method()).toBe("GET");
    expect(await page.locator("tr[data-id]").count()).toBe(rows);
    expect((await api("/v1/tasks", readOnlyKey)).status).toBe(401);
  });

  it("reveals and rotates the webhook secret; deliveries during the overlap carry both signatures", async () => {
    const first = await createTask(defaultKey, "/before");
    expect(first.status).toBe(201);
    firstTaskId = ((await first.json()) as { id: string }).id;

    await page.getByRole("link", { name: "Webhooks" }).click();
    const secretRows = await service.count("SELECT count(*) FROM webhook_secrets");
    await page.getByRole("button", { name: "Reveal" }).click();
    secrets.push(await page.inputValue("#secret-0"));
    expect(secrets[0]).toMatch(/^whsec_/);
    // Rotating asks first; Cancel leaves the secret as it was.
    await page.getByRole("link", { name: "Rotate…" }).click();
    expect(await page.locator("main h1").textContent()).toBe("Rotate the webhook signing secret?");
    await shot("rotate-confirm");
    await page.getByRole("link", { name: "Cancel" }).click();
    await page.getByRole("link", { name: "Rotate…" }).click();
    await page.getByRole("button", { name: "Rotate the secret" }).click();
    await page.waitForURL("**?done=rotated");
    expect(await service.count("SELECT count(*) FROM webhook_secrets")).toBe(secretRows + 1);
    // A reload after the rotation rotates nothing.
    expect((await page.reload())!.request().method()).toBe("GET");
    expect(await service.count("SELECT count(*) FROM webhook_secrets")).toBe(secretRows + 1);
    expect(await page.locator("main").textContent()).toMatch(/(23 h 59 min|24 h) left/);
    await page.getByRole("button", { name: "Reveal" }).click();
    secrets.unshift(await page.inputValue("#secret-0"));
    expect(await page.inputValue("#secret-1")).toBe(secrets[1]);
    // Each panel names its secret once ("current Current secret" was a badge read before the heading).
    expect.soft(await page.locator('[data-secret-role="current"] h3').textContent()).toBe("Current secret");
    expect.soft(await page.locator('[data-secret-role="previous"] h3').textContent()).toBe("Previous secret");
    await shot("webhooks");

    const second = await createTask(defaultKey, "/after");
    expect(second.status).toBe(201);
    const secondId = ((await second.json()) as { id: string }).id;
    const delivery = await until("the delivery after rotation", async () =>
      helper.deliveries.find((d) => d.path === "/after"),
    );
    expect(delivery.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    for (const secret of secrets) {
      expect(new Webhook(secret).verify(delivery.body, delivery.headers)).toMatchObject({
        id: secondId,
        status: "succeeded",
      });
    }
  });

  it("lists tasks with a status filter and shows a task's outputs and delivery attempts", async () => {
    await until("the first delivery", async () => helper.deliveries.find((d) => d.path === "/before"));
    await page.getByRole("link", { name: "Tasks" }).click();
    await page.locator(".pills").getByRole("link", { name: "succeeded", exact: true }).click();
    expect(page.url()).toContain("status=succeeded");
    await page.locator(`a[href="/console/tasks/${firstTaskId}"]`).click();
    const main = await until("the delivery attempt on the page", async () => {
      await page.reload();
      const content = (await page.locator("main").textContent()) ?? "";
      return /\d+ ms/.test(content) ? content : undefined;
    });
    expect(main).toContain("Webhook deliveries");
    expect(await page.locator('a[href*="/files/"]').count()).toBeGreaterThan(0);
    await shots("task");
    // The output's facts as a person reads them: its size in binary units, against the file's own byte count
    // (downloaded here), and the watermarked image's dimensions (the helper's 320×200 source).
    const outputs = page
      .locator("section.panel")
      .filter({ has: page.getByRole("heading", { name: "Outputs" }) });
    const fileUrl = (await outputs.locator('a[href*="/files/"]').first().getAttribute("href"))!;
    const fileBytes = (await (await fetch(fileUrl.replace(site, service.base))).arrayBuffer()).byteLength;
    const facts = ((await outputs.locator("tbody tr").first().textContent()) ?? "").replace(/\s+/g, " ");
    expect.soft(facts).not.toContain("size bytes");
    expect.soft(facts).toContain("320 × 200 px");
    const [, amount, unit] = /([\d.]+) (B|KiB|MiB)\b/.exec(facts) ?? [];
    const shown = Number(amount) * { B: 1, KiB: 1024, MiB: 1024 ** 2 }[unit as "B" | "KiB" | "MiB"];
    expect
      .soft(Math.abs(shown - fileBytes) / fileBytes, `${facts} for ${fileBytes} bytes`)
      .toBeLessThan(0.06);

    // Resend, then reload: one new delivery, not two; the fourth resend within a minute is refused, and the
    // refusal is a redirect back to the task page with a notice (Post/Redirect/Get), as every console action.
    const deliveries = `SELECT count(*) FROM webhook_deliveries WHERE task_id = '${firstTaskId}'`;
    const before = await service.count(deliveries);
    const taskPath = `/console/tasks/${firstTaskId}`;
    const resend = async () => {
      // Both waits start before the click: the redirect's GET can arrive before a wait started after the 303.
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith("/console/webhooks/resend")),
        page.waitForResponse((r) => r.request().method() === "GET" && new URL(r.url()).pathname === taskPath),
        page.getByRole("button", { name: "Resend the last event" }).click(),
      ]);
      await page.waitForLoadState();
      return answer;
    };
    expect((await resend()).status()).toBe(303);
    expect(page.url()).toBe(`${site}${taskPath}?done=resent`);
    expect((await page.reload())!.request().method()).toBe("GET");
    expect(await service.count(deliveries)).toBe(before + 1);
    for (let i = 0; i < 2; i++) expect((await resend()).status()).toBe(303);
    const refused = await resend();
    expect(refused.status()).toBe(303);
    expect(page.url()).toBe(`${site}${taskPath}`);
    const notice = page.locator("main .notice.error");
    expect(await notice.textContent()).toMatch(
      /resent 3 times in the last minute\. Nothing was sent; try again in \d+ s\./,
    );
    await shot("task-resend-refused");
    // A reload asks nothing again (a GET) and shows the page without the one-time notice.
    expect((await page.reload())!.request().method()).toBe("GET");
    expect(await notice.count()).toBe(0);
    expect(await service.count(deliveries)).toBe(before + 3);
  });

  it("lists a request made with the API in the request log, by the request_id of its response", async () => {
    /** Rows of the log whose request id is not wholly inside the table's card (cut off or scrolled out of it). */
    const requestIdsInView = () =>
      page.evaluate<{ rows: number; cut: string[] }>(`(() => {
        const card = document.querySelector("main section.panel").getBoundingClientRect();
        const ids = [...document.querySelectorAll("tr[data-id] td:last-child code")];
        const cut = ids.filter((code) => {
          const box = code.getBoundingClientRect();
          return box.left < card.left || box.right > card.right || box.width === 0;
        });
        const wrap = document.querySelector("main section.panel .table-wrap");
        // A table wider than its card scrolls inside it: what is past the edge is not seen.
        const wider = wrap.scrollWidth - wrap.clientWidth;
        return { rows: ids.length, cut: cut.map((code) => code.textContent).concat(wider > 0 ? [wider + " px wider"] : []) };
      })()`);
    // The widest rows the log holds: a long route refused with an error code, beside the key it was made with.
    const wide = await api("/v1/video/extract-cover", defaultKey, { method: "POST", body: "{}" });
    expect(wide.status).toBe(400);
    const answer = await api(`/v1/tasks/${firstTaskId}`, defaultKey);
    expect(answer.status).toBe(200);
    const requestId = answer.headers.get("x-request-id")!;
    expect(requestId).toMatch(/^[0-9A-Z]{26}$/);
    await page.getByRole("link", { name: "Request log" }).click();
    expect(pathname()).toBe("/console/requests");
    // The row is written after the response (waitUntil): reload until it is there.
    const row = await until("the request in the log", async () => {
      await page.reload();
      const found = page.locator(`tr[data-id="${requestId}"]`);
      return (await found.count()) === 1 ? found : undefined;
    });
    const text = (await row.textContent()) ?? "";
    expect(text).toContain(requestId);
    expect(text).toContain("/v1/tasks/:id");
    expect(text).toContain(`p6_${defaultKey.slice(3, 29)}`);
    expect(text).toContain("200");
    await page.locator(".pills").getByRole("link", { name: "4xx", exact: true }).click();
    expect(page.url()).toContain("status=4xx");
    expect(await page.locator(`tr[data-id="${requestId}"]`).count()).toBe(0);
    await page.locator(".pills").getByRole("link", { name: "all", exact: true }).click();
    await shot("requests");
    await page.setViewportSize(PHONE);
    await page.reload();
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(
      PHONE.width,
    );
    await shot("requests-phone");
    // Every request id whole inside the card (it was cut off at 1280 px and below), on a phone, a tablet and
    // a laptop.
    for (const viewport of [PHONE, { width: 768, height: 1024 }, DESKTOP]) {
      await page.setViewportSize(viewport);
      const { rows, cut } = await requestIdsInView();
      expect(rows, `${viewport.width} px`).toBeGreaterThan(0);
      expect.soft(cut, `${viewport.width} px`).toEqual([]);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("lists an upload made with the API (tus) on the uploads page, with its size, sniffed type and state", async () => {
    const png = new Uint8Array(await (await fetch(`${helper.base}/photo.png`)).arrayBuffer());
    const created = await fetch(`${service.base}/v1/uploads`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${defaultKey}`,
        "Tus-Resumable": "1.0.0",
        "Upload-Length": String(png.byteLength),
        "Upload-Metadata": `filename ${btoa("photo.png")}`,
        "Content-Type": "application/offset+octet-stream",
      },
      body: png,
    });
    expect(created.status).toBe(201);
    firstUploadId = created.headers.get("location")!.split("/").pop()!;
    await page.getByRole("link", { name: "Uploads" }).click();
    expect(pathname()).toBe("/console/uploads");
    const text = (await page.locator(`tr[data-id="${firstUploadId}"]`).textContent()) ?? "";
    for (const part of [
      "photo.png",
      `${png.byteLength.toLocaleString("en-US")} B`,
      "image/png",
      "complete",
    ]) {
      expect(text).toContain(part);
    }
    await shots("uploads");
  });

  it("adds a passkey and signs in with it (Chromium's virtual authenticator)", async () => {
    const cdp = await context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });
    await page.goto(`${site}/console/security`);
    await page.getByLabel("Passkey name").fill("virtual laptop");
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await page.waitForURL("**?done=passkey", { timeout: 15_000 }).catch(async (error) => {
      throw new Error(`${error}; page says: ${await page.locator("main").textContent()}`);
    });
    expect(await page.locator("main").textContent()).toContain("virtual laptop");
    await shot("security");
    expect((await page.reload())!.request().method()).toBe("GET");
    expect(await page.locator("tr", { hasText: "virtual laptop" }).count()).toBe(1);

    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.waitForURL("**/console/sign-in");
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await page.waitForURL(`${site}/console`);
    await page.goto(`${site}/console/security`);
    expect(await page.locator("tr", { hasText: "virtual laptop" }).textContent()).not.toContain("never");
  });

  it("the passkey button stays disabled until its script has run: an early click posts nothing", async () => {
    const other = await browser.newContext();
    const p = await other.newPage();
    watch(p);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await p.route("**/console/assets/webauthn.js", async (route) => {
      await held;
      await route.continue();
    });
    const posts: string[] = [];
    p.on("request", (r) => {
      if (r.method() === "POST") posts.push(r.url());
    });
    const loaded = p.goto(`${site}/console/sign-in`);
    const button = p.getByRole("button", { name: "Sign in with a passkey" });
    await button.waitFor();
    expect(await button.isDisabled()).toBe(true);
    await button.click({ force: true }).catch(() => {});
    release();
    await loaded;
    await expect.poll(() => button.isDisabled()).toBe(false);
    expect(posts).toEqual([]);
    await other.close();
  });

  it("signs out everywhere: a second session ends too", async () => {
    const other = await browser.newContext();
    const second = await other.newPage();
    watch(second);
    await signInWithPassword(second, email);
    await second.goto(`${site}/console/keys`);
    expect(pathname(second)).toBe("/console/keys");

    await page.goto(`${site}/console/security`);
    await page.getByRole("button", { name: "Sign out everywhere" }).click();
    await page.waitForURL("**/console/sign-in");
    await second.goto(`${site}/console/keys`);
    expect(pathname(second)).toBe("/console/sign-in");
    await other.close();
  });

  it("sign-in challenge: past 3 failures a proof of work, solved in Chromium; the owner elsewhere, a neighbour and a passkey are not asked", async () => {
    // The second customer, who shares the attacker's address (a NAT) and signs in while the owner is attacked.
    const neighbour = `neighbour+${randomUUID().slice(0, 8)}@example.com`;
    const nat = await browser.newContext({ extraHTTPHeaders: { "CF-Connecting-IP": "198.51.100.20" } });
    const attacker = await nat.newPage();
    watch(attacker);
    await attacker.goto(`${site}/console/sign-up`);
    await attacker.getByLabel("Email").fill(neighbour);
    await attacker.getByLabel("Password").fill(PASSWORD);
    await attacker.getByRole("button", { name: "Sign up" }).click();
    await attacker.waitForURL("**/console/welcome");
    await attacker.getByRole("button", { name: "Sign out", exact: true }).click();
    await attacker.waitForURL("**/console/sign-in");

    const tryPassword = async (p: Page, address: string, password: string) => {
      await p.goto(`${site}/console/sign-in`);
      await p.getByLabel("Email").fill(address);
      await p.getByLabel("Password").fill(password);
      const [answer] = await Promise.all([
        p.waitForResponse((r) => r.request().method() === "POST" && r.url().includes("/console/sign-in")),
        p.getByRole("button", { name: "Sign in", exact: true }).click(),
      ]);
      await p.waitForLoadState();
      return answer.status();
    };
    for (let i = 0; i < 3; i++) expect(await tryPassword(attacker, email, `wrong guess ${i}`)).toBe(401);
    // The third failure's page asks for a proof of work: the widget renders and solves it by itself, in
    // workers the page's CSP allows; with it solved the right password signs in from that very address.
    const state = attacker.locator("altcha-widget [data-state]");
    await expect.poll(() => state.getAttribute("data-state"), { timeout: 60_000 }).toBe("verified");
    expect(await attacker.locator("altcha-widget input[name=altcha]").inputValue()).toMatch(
      /^[A-Za-z0-9+/=]{40,}$/,
    );
    await shot("sign-in-challenge", attacker);
    await attacker.getByLabel("Password").fill(PASSWORD);
    const [solved] = await Promise.all([
      attacker.waitForResponse(
        (r) => r.request().method() === "POST" && r.url().includes("/console/sign-in"),
      ),
      attacker.getByRole("button", { name: "Sign in", exact: true }).click(),
    ]);
    expect(solved.status()).toBe(303);
    await attacker.waitForURL(`${site}/console`);
    await attacker.getByRole("button", { name: "Sign out", exact: true }).click();
    await attacker.waitForURL("**/console/sign-in");
    // Someone else behind the same address signs in without any challenge.
    expect(await tryPassword(attacker, neighbour, PASSWORD)).toBe(303);
    await attacker.waitForURL(`${site}/console`);
    await nat.close();

    // The owner, from another address, signs in with the password.
    const home = await browser.newContext({ extraHTTPHeaders: { "CF-Connecting-IP": "203.0.113.7" } });
    const owner = await home.newPage();
    watch(owner);
    expect(await tryPassword(owner, email, PASSWORD)).toBe(303);
    await owner.waitForURL(`${site}/console`);
    await home.close();

    // And from the attacked address itself, with the passkey (the virtual authenticator of the first page).
    await context.setExtraHTTPHeaders({ "CF-Connecting-IP": "198.51.100.20" });
    try {
      await page.goto(`${site}/console/sign-in`);
      await page.getByLabel("Email").fill(email);
      await page.getByLabel("Password").fill(PASSWORD);
      const [unsolved] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST" && r.url().includes("/console/sign-in")),
        page.getByRole("button", { name: "Sign in", exact: true }).click(),
      ]);
      await page.waitForLoadState();
      // The pair's failures call for a challenge the page could not know of before the email: nothing is
      // checked, the challenge is asked for, and the passkey sign-in is still there.
      expect(unsolved.status()).toBe(403);
      expect(await page.locator("main").textContent()).toContain(
        "sign in with a passkey, or reset your password",
      );
      await page.getByRole("button", { name: "Sign in with a passkey" }).click();
      await page.waitForURL(`${site}/console`);
    } finally {
      await context.setExtraHTTPHeaders({});
    }
  });

  it("sign-up: 5 accounts an hour from one address; the 6th is refused and makes nothing", async () => {
    const office = await browser.newContext({ extraHTTPHeaders: { "CF-Connecting-IP": "192.0.2.55" } });
    const p = await office.newPage();
    watch(p);
    const stamp = Date.now();
    const signUp = async (n: number) => {
      await p.goto(`${site}/console/sign-up`);
      await p.getByLabel("Email").fill(`office${n}+${stamp}@example.com`);
      await p.getByLabel("Password").fill(PASSWORD);
      const [answer] = await Promise.all([
        // The form's post (the password meter posts too, as the password is typed).
        p.waitForResponse((r) => r.request().method() === "POST" && r.url().endsWith("/console/sign-up")),
        p.getByRole("button", { name: "Sign up" }).click(),
      ]);
      await p.waitForLoadState();
      if (answer.status() === 303) {
        await p.getByRole("button", { name: "Sign out", exact: true }).click();
        await p.waitForURL("**/console/sign-in");
      }
      return answer.status();
    };
    for (let n = 1; n <= 5; n++) expect(await signUp(n)).toBe(303);
    expect(await signUp(6)).toBe(429);
    expect(await p.locator("main").textContent()).toContain(
      "Too many sign-ups from your network. Try again in",
    );
    await shot("sign-up-limited", p);
    expect(
      await service.count(`SELECT count(*) FROM users WHERE email LIKE 'office%+${stamp}@example.com'`),
    ).toBe(5);
    await office.close();
  });

  it("a second customer sees nothing of the first", async () => {
    const other = await browser.newContext({ viewport: PHONE });
    const intruder = await other.newPage();
    watch(intruder);
    await intruder.goto(`${site}/console/sign-up`);
    await intruder.getByLabel("Email").fill(`second+${randomUUID().slice(0, 8)}@example.com`);
    await intruder.getByLabel("Password").fill(PASSWORD);
    await intruder.getByRole("button", { name: "Sign up" }).click();
    await intruder.waitForURL("**/console/welcome");
    await intruder.waitForSelector("#new-key");

    const firstKeyId = defaultKey.slice(3, 29);
    for (const p of [
      "/console",
      "/console/keys",
      "/console/tasks",
      "/console/credits",
      "/console/webhooks",
      "/console/requests",
      "/console/uploads",
      "/console/usage",
    ]) {
      await intruder.goto(`${site}${p}`);
      const content = await intruder.content();
      expect(content, p).not.toContain(firstTaskId);
      expect(content, p).not.toContain(firstUploadId);
      expect(content, p).not.toContain(firstKeyId);
      expect(content, p).not.toContain(email);
      expect(await intruder.evaluate<number>("document.documentElement.scrollWidth"), p).toBeLessThanOrEqual(
        PHONE.width,
      );
    }
    await shot("phone-overview", intruder);
    expect((await intruder.goto(`${site}/console/tasks/${firstTaskId}`))!.status()).toBe(404);
    expect((await intruder.goto(`${site}/console/keys/${firstKeyId}/revoke`))!.status()).toBe(404);
    // Posting the revoke form with the intruder's own valid token: still not found, and the key still works.
    await intruder.goto(`${site}/console/keys`);
    const token = await intruder.locator('input[name="_csrf"]').first().inputValue();
    const revoke = await other.request.post(`${site}/console/keys/${firstKeyId}/revoke`, {
      form: { _csrf: token },
      headers: { Origin: site },
      maxRedirects: 0,
    });
    expect(revoke.status()).toBe(404);
    expect((await api("/v1/tasks", defaultKey)).status).toBe(200);
    await other.close();

    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("shows usage per day and operation as a chart, the numbers of GET /v1/usage", async () => {
    await page.goto(`${site}/console`);
    await page.getByRole("link", { name: "Usage" }).click();
    await page.waitForURL("**/console/usage");
    const today = new Date().toISOString().slice(0, 10);
    const usage = (await (await api(`/v1/usage?from=${today}&to=${today}`, defaultKey)).json()) as {
      results: { operation: string; count: number; credits: number }[];
      total_credits: number;
    };
    expect(usage.total_credits).toBeGreaterThan(0);
    await page.getByRole("link", { name: "7 days" }).click();
    await page.waitForURL("**/console/usage?days=7");
    expect(await page.locator("main h2").first().textContent()).toBe(
      `${usage.total_credits} credits in 7 days`,
    );
    for (const r of usage.results) {
      expect(await page.locator(`svg.daily rect title`).allTextContents()).toContain(
        `${today} ${r.operation}: ${r.count}×, ${r.credits} credits`,
      );
    }
    // The credits axis can be read where the chart opens, at 1280 px and on a phone, where it scrolls.
    const axisLabelsInView = async () =>
      page.evaluate<number>(`(() => {
        const wrap = document.querySelector(".chart-wrap").getBoundingClientRect();
        return [...document.querySelectorAll("svg.daily text")]
          .filter((t) => /^[0-9,]+$/.test(t.textContent))
          .map((t) => t.getBoundingClientRect())
          .filter((r) => r.width > 0 && r.left >= wrap.left && r.right <= wrap.right).length;
      })()`);
    const ticks = await page
      .locator("svg.daily text")
      .evaluateAll(
        (nodes) => new Set(nodes.map((n) => n.textContent).filter((t) => /^[0-9,]+$/.test(t ?? ""))).size,
      );
    expect(ticks).toBeGreaterThanOrEqual(2);
    expect(await axisLabelsInView()).toBeGreaterThanOrEqual(ticks);
    await page.setViewportSize(PHONE);
    expect(await axisLabelsInView()).toBeGreaterThanOrEqual(ticks);
    await page.setViewportSize(DESKTOP);
    await shots("usage");
  });

  // axe-core on every console page at both widths, a test each: 40 runs of axe took over 180 s as one test with
  // two clones' `npm test` at once (issue 42), and a failure names its page. `:key` and `:task` are the default
  // key's id and the first task's, known once the tests above have run.
  const AXE_PAGES: { at: string; signedIn: boolean }[] = [
    ...[
      "/console",
      "/console/keys",
      "/console/keys/:key/revoke",
      "/console/webhooks",
      "/console/webhooks/rotate",
      "/console/tasks",
      "/console/tasks/:task",
      "/console/requests",
      "/console/uploads",
      "/console/usage",
      "/console/credits",
      "/console/security",
      "/console/verify?done=verified",
      "/console/no-such-page",
      "/dev/mailbox",
    ].map((at) => ({ at, signedIn: true })),
    ...[
      "/console/sign-in",
      "/console/sign-up",
      "/console/reset",
      "/console/reset/new",
      "/console/verify",
    ].map((at) => ({ at, signedIn: false })),
  ];
  for (const [viewport, width] of [
    [DESKTOP, "1280"],
    [PHONE, "390"],
  ] as const) {
    for (const { at, signedIn } of AXE_PAGES) {
      it(`axe-core: no serious or critical violation on ${at}${signedIn ? "" : " (signed out)"} at ${width} px`, async () => {
        const url = `${site}${at.replace(":key", defaultKey.slice(3, 29)).replace(":task", firstTaskId)}`;
        if (signedIn) {
          await page.setViewportSize(viewport);
          try {
            await page.goto(url);
            expect(await axe(page)).toEqual([]);
          } finally {
            await page.setViewportSize(DESKTOP);
          }
        } else {
          const fresh = await browser.newContext({ viewport });
          try {
            const stranger = await fresh.newPage();
            await stranger.goto(url);
            expect(await axe(stranger)).toEqual([]);
          } finally {
            await fresh.close();
          }
        }
      });
    }
  }

  it("resets the password through the local mailbox: every session ends, the new one signs in", async () => {
    const elsewhere = await browser.newContext();
    const second = await elsewhere.newPage();
    await signInWithPassword(second, email);
    await page.goto(`${site}/console`);
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.waitForURL("**/console/sign-in");
    await page.getByRole("link", { name: "Forgot your password?" }).click();
    await page.getByLabel("Email").fill(email);
    await page.getByRole("button", { name: "Mail me a link" }).click();
    await page.waitForURL("**/console/reset?sent=1");
    expect((await page.reload())!.request().method()).toBe("GET");
    const resetTokens = userSql("email_tokens t JOIN users u ON u.id = t.user_id WHERE t.purpose = 'reset'");
    expect(await service.count(resetTokens)).toBe(1);
    await shots("reset");

    await followMailedLink(page, email, "Reset your p6 media API password", 1);
    await page.getByLabel("New password").fill("password1234");
    await page.getByRole("button", { name: "Set the password and sign in" }).click();
    expect(await page.locator("#field-password-error").textContent()).toContain("Too easy to guess.");
    await shots("reset-new");
    await page.getByLabel("New password").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Set the password and sign in" }).click();
    await page.waitForURL("**/console/security?done=reset");
    expect((await page.reload())!.request().method()).toBe("GET");
    expect(await page.locator("main").textContent()).toContain("Password reset.");

    // The other session ended; the old password no longer signs in, the new one does.
    await second.goto(`${site}/console/keys`);
    expect(new URL(second.url()).pathname).toBe("/console/sign-in");
    await second.getByLabel("Email").fill(email);
    await second.getByLabel("Password").fill(PASSWORD);
    await second.getByRole("button", { name: "Sign in", exact: true }).click();
    expect(await second.locator("main").textContent()).toContain("do not match");
    await second.getByLabel("Password").fill(NEW_PASSWORD);
    await second.getByRole("button", { name: "Sign in", exact: true }).click();
    await second.waitForURL(`${site}/console/keys`); // back where the ended session was sent to sign in
    await elsewhere.close();

    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
