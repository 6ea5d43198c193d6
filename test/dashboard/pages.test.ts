import { eq } from "drizzle-orm";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import {
  apiKeys,
  creditLedger,
  webhookAttempts,
  webhookDeliveries,
  webhookSecrets,
} from "../../src/db/schema";
import { call, db, newAccount } from "../helpers/api";
import { insertTask } from "../helpers/tasks";
import { csrfOf, location, signedIn } from "./client";

/** The visible text of a page, tags stripped, for assertions about what an operator reads. */
const textOf = (html: string) =>
  html
    .replace(/<(style|script)[^>]*>[\s\S]*?<\/\1>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");

describe("every page answers 200 with a session", () => {
  it.each([
    ["accounts", () => "/dashboard/accounts"],
    ["account", (a: string) => `/dashboard/accounts/${a}`],
    ["keys", (a: string) => `/dashboard/accounts/${a}/keys`],
    ["revoke confirmation", (a: string, k: string) => `/dashboard/accounts/${a}/keys/${k}/revoke`],
    ["webhook secret", (a: string) => `/dashboard/accounts/${a}/webhook-secret`],
    ["tasks", (a: string) => `/dashboard/accounts/${a}/tasks`],
    ["task", (a: string, _k: string, t: string) => `/dashboard/accounts/${a}/tasks/${t}`],
  ] as const)("%s", async (_name, path) => {
    const { accountId, keyId } = await newAccount({ credits: 5 });
    const task = await insertTask(accountId);
    const client = await signedIn();
    const response = await client.get(path(accountId, keyId, task.id));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    const html = await response.text();
    expect(html).toMatch(/^<!doctype html><html lang="en">/);
    expect(html).toContain('name="viewport"');
    expect(html).toContain("Sign out");
  });

  it("/dashboard goes to the accounts", async () => {
    const client = await signedIn();
    expect(location(await client.get("/dashboard"))).toBe("/dashboard/accounts");
  });
});

describe("accounts", () => {
  it("create: the default key and the webhook secret are shown on the answer to the form, once", async () => {
    const client = await signedIn();
    const response = await client.submit("/dashboard/accounts", "/dashboard/accounts", {
      name: "Acme Studio",
      credits: "1,500",
    });
    expect(response.status).toBe(201);
    const html = await response.text();
    const key = /value="(p6_[0-9A-Z]{26}:[0-9a-f]{64})"/.exec(html)?.[1];
    const secret = /value="(whsec_[^"]+)"/.exec(html)?.[1];
    expect(key).toBeDefined();
    expect(secret).toBeDefined();
    expect(textOf(html)).toContain("Acme Studio has 1,500 credits");
    expect(textOf(html)).toContain("this is the only time it is shown");

    // The key works at once against the public API.
    expect((await call("/v1/tasks", { key })).status).toBe(200);

    // Nowhere else is the secret part of the key ever shown again.
    const accountId = /href="\/dashboard\/accounts\/([0-9A-Z]{26})"/.exec(html)![1]!;
    const keySecret = key!.split(":")[1]!;
    for (const path of [
      "/dashboard/accounts",
      `/dashboard/accounts/${accountId}`,
      `/dashboard/accounts/${accountId}/keys`,
    ]) {
      const page = await (await client.get(path)).text();
      expect(page).not.toContain(keySecret);
    }
    const list = textOf(await (await client.get("/dashboard/accounts")).text());
    expect(list).toContain("Acme Studio");
    const keys = await (await client.get(`/dashboard/accounts/${accountId}/keys`)).text();
    expect(keys).toContain(`p6_${key!.slice(3, 29)}</code>`);
    const ledger = await db().select().from(creditLedger).where(eq(creditLedger.accountId, accountId)).all();
    expect(ledger).toMatchObject([{ kind: "grant", amount: 1500, reason: "opening balance" }]);
  });

  it("invalid input is shown next to its field and creates nothing", async () => {
    const client = await signedIn();
    const response = await client.submit("/dashboard/accounts", "/dashboard/accounts", {
      name: " ",
      credits: "lots",
    });
    expect(response.status).toBe(400);
    const text = textOf(await response.text());
    expect(text).toContain("Please correct the highlighted fields.");
    expect(text).toContain("Give the account a name");
    expect(text).toContain("A whole number of credits from 0 to 1,000,000,000");
  });

  it("lists page by page", async () => {
    for (let i = 0; i < 26; i++) await newAccount();
    const client = await signedIn();
    const first = await (await client.get("/dashboard/accounts")).text();
    const next = /href="([^"]+)">Next page/.exec(first)![1]!.replace(/&amp;/g, "&");
    const second = await client.get(next);
    expect(second.status).toBe(200);
    expect(await second.text()).toContain("First page");
  });

  it("a cursor we did not make → a readable 400 page", async () => {
    const client = await signedIn();
    const response = await client.get("/dashboard/accounts?cursor=bogus");
    expect(response.status).toBe(400);
    expect(textOf(await response.text())).toContain("The cursor is malformed");
  });

  it("an unknown account → a readable 404 page", async () => {
    const client = await signedIn();
    for (const id of ["01JD5Z8X4QK3M7R2T9V6W1Y0AB", "not-an-id"]) {
      const response = await client.get(`/dashboard/accounts/${id}/keys`);
      expect(response.status).toBe(404);
      expect(textOf(await response.text())).toContain("This account does not exist.");
    }
  });
});

describe("balance and ledger", () => {
  it("a grant is one ledger row with its reason and the request id, like the admin API", async () => {
    const { accountId } = await newAccount({ credits: 10 });
    const client = await signedIn();
    const page = `/dashboard/accounts/${accountId}`;
    const response = await client.submit(page, `${page}/credits`, {
      amount: "250",
      reason: "Invoice 2026-118",
    });
    expect(response.status).toBe(303);
    expect(location(response)).toBe(`${page}?done=granted`);
    const rows = await db().select().from(creditLedger).where(eq(creditLedger.accountId, accountId)).all();
    expect(rows.at(-1)).toMatchObject({
      kind: "grant",
      amount: 250,
      balanceAfter: 260,
      reason: "Invoice 2026-118",
      requestId: response.headers.get("x-request-id"),
    });
    const text = textOf(await (await client.get(`${page}?done=granted`)).text());
    expect(text).toContain("Credits granted");
    expect(text).toContain("260");
    expect(text).toContain("+250");
    expect(text).toContain("Invoice 2026-118");
  });

  it("invalid grants are explained and change nothing", async () => {
    const { accountId } = await newAccount({ credits: 10 });
    const client = await signedIn();
    const page = `/dashboard/accounts/${accountId}`;
    for (const [amount, reason] of [
      ["0", "x"],
      ["-5", "x"],
      ["1.5", "x"],
      ["10", ""],
    ]) {
      const response = await client.submit(page, `${page}/credits`, { amount: amount!, reason: reason! });
      expect(response.status).toBe(400);
      const text = textOf(await response.text());
      expect(text).toMatch(/A whole number of credits from 1|Say why/);
    }
    const rows = await db().select().from(creditLedger).where(eq(creditLedger.accountId, accountId)).all();
    expect(rows).toHaveLength(1);
  });
});

describe("keys", () => {
  it("create with name, scopes, expiry and rate limit → the full key once, the record as the API makes it", async () => {
    const { accountId } = await newAccount();
    const client = await signedIn();
    const page = `/dashboard/accounts/${accountId}/keys`;
    const response = await client.submit(page, page, {
      name: "ci",
      scopes: ["read"],
      expires_in_days: "30",
      rate_limit_per_minute: "120",
    });
    expect(response.status).toBe(201);
    const html = await response.text();
    const key = /id="new-key"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*id="new-key"/.exec(html)!;
    const fullKey = (key[1] ?? key[2])!;
    expect(fullKey).toMatch(/^p6_[0-9A-Z]{26}:[0-9a-f]{64}$/);
    expect(html).toContain('data-copy="new-key"');
    const keyId = fullKey.slice(3, 29);
    const row = (await db().select().from(apiKeys).where(eq(apiKeys.id, keyId)).get())!;
    expect(row).toMatchObject({ accountId, name: "ci", scopes: "read", rateLimitPerMinute: 120 });
    expect(row.expiresAt! - row.createdAt).toBe(30 * 86_400_000);
    expect((await call("/v1/tasks", { key: fullKey })).status).toBe(200);

    const listing = await (await client.get(page)).text();
    expect(listing).not.toContain(fullKey.split(":")[1]);
    expect(listing).toContain(`p6_${keyId}</code>`);
  });

  it("invalid keys are explained field by field", async () => {
    const { accountId } = await newAccount();
    const client = await signedIn();
    const page = `/dashboard/accounts/${accountId}/keys`;
    const before = (await db().select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).all()).length;
    const response = await client.submit(page, page, {
      name: "x".repeat(101),
      expires_in_days: "400",
      rate_limit_per_minute: "fast",
    });
    expect(response.status).toBe(400);
    const text = textOf(await response.text());
    expect(text).toContain("At most 100 characters.");
    expect(text).toContain("Choose at least one scope.");
    expect(text).toContain("A whole number of days from 1 to 365");
    expect(text).toContain("A whole number from 1 to 100,000");
    expect((await db().select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).all()).length).toBe(
      before,
    );
  });

  it("revoke: a confirmation, then the API refuses the key on the very next request", async () => {
    const { accountId, key, keyId } = await newAccount();
    expect((await call("/v1/tasks", { key })).status).toBe(200);
    const client = await signedIn();
    const confirm = await client.get(`/dashboard/accounts/${accountId}/keys/${keyId}/revoke`);
    const html = await confirm.text();
    expect(textOf(html)).toContain("cannot be restored");
    const response = await client.post(`/dashboard/accounts/${accountId}/keys/${keyId}/revoke`, {
      _csrf: csrfOf(html),
    });
    expect(response.status).toBe(303);
    expect(location(response)).toBe(`/dashboard/accounts/${accountId}/keys?done=revoked`);
    expect((await call("/v1/tasks", { key })).status).toBe(401);
    const row = (await db().select().from(apiKeys).where(eq(apiKeys.id, keyId)).get())!;
    expect(row.revokedAt).not.toBeNull();
    const listing = textOf(await (await client.get(location(response)!)).text());
    expect(listing).toContain("Key revoked.");
    expect(listing).toContain("revoked");
  });

  it("a key of another account is not found under this one", async () => {
    const { accountId } = await newAccount();
    const other = await newAccount();
    const client = await signedIn();
    const token = csrfOf(await (await client.get(`/dashboard/accounts/${accountId}/keys`)).text());
    const response = await client.post(`/dashboard/accounts/${accountId}/keys/${other.keyId}/revoke`, {
      _csrf: token,
    });
    expect(response.status).toBe(404);
    expect((await call("/v1/tasks", { key: other.key })).status).toBe(200);
  });
});

describe("webhook secret", () => {
  it("masked until revealed; rotation keeps the old secret and shows how long it stays valid", async () => {
    const { accountId, webhookSecret } = await newAccount();
    const client = await signedIn();
    const page = `/dashboard/accounts/${accountId}/webhook-secret`;
    const masked = await (await client.get(page)).text();
    expect(masked).not.toContain(webhookSecret);
    expect(masked).toContain(webhookSecret.slice(-4));

    const revealed = await client.submit(page, `${page}/reveal`);
    expect(revealed.status).toBe(200);
    expect(await revealed.text()).toContain(webhookSecret);

    // The page only links to a confirmation; the confirmation's form rotates.
    expect(masked).not.toContain(`action="${page}/rotate"`);
    expect(masked).toContain(`href="${page}/rotate"`);
    expect(
      (await db().select().from(webhookSecrets).where(eq(webhookSecrets.accountId, accountId)).all()).length,
    ).toBe(1);
    const confirm = await (await client.get(`${page}/rotate`)).text();
    expect(confirm).toContain("Rotate the webhook signing secret?");
    expect(confirm).toContain(`action="${page}/rotate"`);
    const rotated = await client.submit(`${page}/rotate`, `${page}/rotate`);
    expect(rotated.status).toBe(303);
    expect(location(rotated)).toBe(`${page}?done=rotated`);
    const rows = await db()
      .select()
      .from(webhookSecrets)
      .where(eq(webhookSecrets.accountId, accountId))
      .all();
    expect(rows).toHaveLength(2);
    const after = textOf(await (await client.get(location(rotated)!)).text());
    expect(after).toContain("Secret rotated.");
    expect(after).toContain("Previous secret");
    expect(after).toMatch(/(23 h 59 min|24 h) left/);

    const both = await (await client.submit(page, `${page}/reveal`)).text();
    const current = rows.find((r) => r.activeUntil === null)!.secret;
    expect(both).toContain(current);
    expect(both).toContain(webhookSecret);
    expect(both.indexOf(current)).toBeLessThan(both.indexOf(webhookSecret));
  });
});

describe("tasks", () => {
  it("lists with a status filter and pages", async () => {
    const { accountId } = await newAccount();
    const failed = await insertTask(accountId, { status: "failed", errorCode: "SOURCE_UNREACHABLE" });
    for (let i = 0; i < 26; i++) await insertTask(accountId, { status: "succeeded" });
    const client = await signedIn();
    const page = `/dashboard/accounts/${accountId}/tasks`;

    const onlyFailed = await (await client.get(`${page}?status=failed`)).text();
    expect(onlyFailed).toContain(failed.id);
    expect(onlyFailed).not.toContain("badge succeeded");

    const first = await (await client.get(page)).text();
    expect(first).not.toContain(failed.id);
    const next = /href="([^"]+)">Next page/.exec(first)![1]!.replace(/&amp;/g, "&");
    const second = await (await client.get(next)).text();
    expect(second).toContain(failed.id);
    expect(second).not.toContain("Next page");

    const succeededNext = /href="([^"]+)">Next page/
      .exec(await (await client.get(`${page}?status=succeeded`)).text())![1]!
      .replace(/&amp;/g, "&");
    expect(succeededNext).toContain("status=succeeded");
    expect(await (await client.get(succeededNext)).text()).not.toContain(failed.id);
  });

  it("a task's detail: outputs, error, and every webhook delivery attempt with status and latency", async () => {
    const { accountId } = await newAccount();
    const done = await insertTask(accountId, {
      status: "succeeded",
      startedAt: Date.now() - 2000,
      completedAt: Date.now() - 500,
      outputs: JSON.stringify([{ kind: "image", file_id: ulid(), name: "watermarked.png", width: 640 }]),
      webhookUrl: "https://hooks.example.com/p6",
    });
    const delivery = `msg_${ulid()}`;
    await db().insert(webhookDeliveries).values({
      id: delivery,
      taskId: done.id,
      accountId,
      event: "completed",
      url: "https://hooks.example.com/p6",
      body: "{}",
      status: "delivered",
      attemptCount: 2,
      nextAttemptAt: null,
      createdAt: Date.now(),
      completedAt: Date.now(),
    });
    await db()
      .insert(webhookAttempts)
      .values([
        {
          id: ulid(),
          deliveryId: delivery,
          attempt: 1,
          statusCode: null,
          latencyMs: 15000,
          error: "timed out after 15 s",
          createdAt: Date.now(),
        },
        {
          id: ulid(),
          deliveryId: delivery,
          attempt: 2,
          statusCode: 204,
          latencyMs: 87,
          error: null,
          createdAt: Date.now(),
        },
      ]);
    const client = await signedIn();
    const html = await (await client.get(`/dashboard/accounts/${accountId}/tasks/${done.id}`)).text();
    const text = textOf(html);
    expect(html).toMatch(/href="http:\/\/api\.test\/files\/[^"]+watermarked\.png[^"]*"/);
    expect(text).toContain("watermarked.png");
    expect(text).toContain(delivery);
    expect(text).toContain("delivered");
    expect(text).toContain("no response");
    expect(text).toContain("15,000 ms");
    expect(text).toContain("timed out after 15 s");
    expect(text).toContain("204");
    expect(text).toContain("87 ms");

    const failed = await insertTask(accountId, {
      status: "failed",
      errorCode: "SOURCE_UNREACHABLE",
      errorMessage: "The source answered 404.",
      completedAt: Date.now(),
    });
    const failedText = textOf(
      await (await client.get(`/dashboard/accounts/${accountId}/tasks/${failed.id}`)).text(),
    );
    expect(failedText).toContain("SOURCE_UNREACHABLE");
    expect(failedText).toContain("The source answered 404.");
    expect(failedText).toContain("No webhook deliveries for this task.");
  });

  it("another account's task is not found under this one", async () => {
    const { accountId } = await newAccount();
    const other = await newAccount();
    const task = await insertTask(other.accountId);
    const client = await signedIn();
    const response = await client.get(`/dashboard/accounts/${accountId}/tasks/${task.id}`);
    expect(response.status).toBe(404);
    expect(textOf(await response.text())).toContain("This task does not exist.");
  });

  it("an unexpected error is a friendly page with the request id, never a stack trace", async () => {
    const { accountId } = await newAccount();
    const broken = await insertTask(accountId, { params: "{not json" });
    const client = await signedIn();
    const response = await client.get(`/dashboard/accounts/${accountId}/tasks/${broken.id}`);
    expect(response.status).toBe(500);
    const html = await response.text();
    expect(textOf(html)).toContain("Something went wrong on our side.");
    expect(html).toContain(response.headers.get("x-request-id")!);
    expect(html).not.toMatch(/SyntaxError|JSON\.parse|\bat .*\.ts:\d+/);
  });
});
