import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { creditLedger } from "../../../src/db/schema";
import { call, db, newAccount, newKey, problem } from "../../helpers/api";
import { insertTask } from "../../helpers/tasks";

type Account = {
  id: string;
  balance: number;
  reserved_credits: number;
  tasks_in_progress: number;
  key: {
    id: string;
    name: string;
    scopes: string[];
    rate_limit_per_minute: number;
    expires_at: string | null;
  };
};
type Usage = {
  from: string;
  to: string;
  results: { date: string; operation: string; count: number; credits: number }[];
  total_count: number;
  total_credits: number;
};

const at = (iso: string) => Date.parse(iso);

/** A ledger row as the charging code writes it (its own insert here: the usage route only reads). */
function ledger(
  accountId: string,
  kind: "grant" | "charge" | "reserve" | "refund",
  amount: number,
  createdAt: number,
  extra: { reason?: string; taskId?: string } = {},
) {
  return db()
    .insert(creditLedger)
    .values({
      id: ulid(createdAt),
      accountId,
      kind,
      amount,
      balanceAfter: 0,
      taskId: extra.taskId ?? null,
      requestId: null,
      reason: extra.reason ?? null,
      createdAt,
    });
}

describe("GET /v1/account", () => {
  it("balance, the credits held by unfinished tasks, and the calling key's scopes and rate limit", async () => {
    const { accountId, key, keyId } = await newAccount({ credits: 40 });
    await insertTask(accountId, { status: "queued", cost: 2 });
    await insertTask(accountId, { status: "processing", cost: 3 });
    await insertTask(accountId, { status: "succeeded", cost: 5 });
    await insertTask(accountId, { status: "failed", cost: 7 });
    const response = await call("/v1/account", { key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      id: accountId,
      name: expect.any(String),
      balance: 40,
      reserved_credits: 5,
      tasks_in_progress: 2,
      key: {
        id: keyId,
        name: expect.any(String),
        scopes: ["read", "write"],
        rate_limit_per_minute: 60,
        expires_at: null,
      },
      uploads: { incomplete: 0, max_incomplete: 20, stored_bytes: 0, max_stored_bytes: 50 * 1024 ** 3 },
    });
  });

  it("describes the key the request was made with: its own limit, scopes and expiry", async () => {
    const { accountId } = await newAccount();
    const readOnly = await newKey(accountId, {
      name: "ro",
      scopes: ["read"],
      rateLimitPerMinute: 7,
      expiresInDays: 3,
    });
    const view = (await (await call("/v1/account", { key: readOnly })).json()) as Account;
    expect(view.key).toMatchObject({ name: "ro", scopes: ["read"], rate_limit_per_minute: 7 });
    expect(Date.parse(view.key.expires_at!) - Date.now()).toBeGreaterThan(2.9 * 86_400_000);
    expect(view.key.id).toBe(readOnly.slice(3, 29));
  });

  it("another account's tasks never count; each key sees its own account", async () => {
    const mine = await newAccount({ credits: 1 });
    const theirs = await newAccount({ credits: 99 });
    await insertTask(theirs.accountId, { status: "queued", cost: 9 });
    const view = (await (await call("/v1/account", { key: mine.key })).json()) as Account;
    expect(view).toMatchObject({ id: mine.accountId, balance: 1, reserved_credits: 0, tasks_in_progress: 0 });
  });

  it("401 without a key, 403 for a key without the read scope, 405 for POST", async () => {
    expect((await problem(await call("/v1/account"))).code).toBe("AUTH_UNAUTHORIZED");
    const { accountId } = await newAccount();
    const writeOnly = await newKey(accountId, { scopes: ["write"] });
    const forbidden = await call("/v1/account", { key: writeOnly });
    expect(forbidden.status).toBe(403);
    expect((await problem(forbidden)).code).toBe("PERMISSION_FORBIDDEN");
    const { key } = await newAccount();
    const post = await call("/v1/account", { method: "POST", key, json: {} });
    expect(post.status).toBe(405);
    await problem(post);
  });
});

describe("GET /v1/usage", () => {
  it("per UTC day and operation: charges on their day, tasks on their creation day unless refunded", async () => {
    const { accountId, key } = await newAccount();
    await ledger(accountId, "grant", 100, at("2026-10-01T01:00:00Z"), { reason: "top-up" });
    await ledger(accountId, "charge", -1, at("2026-10-01T08:00:00Z"), { reason: "video.probe" });
    await ledger(accountId, "charge", -1, at("2026-10-01T23:59:59.999Z"), { reason: "video.probe" });
    await ledger(accountId, "reserve", -2, at("2026-10-01T12:00:00Z"), {
      reason: "video.trim",
      taskId: ulid(),
    });
    // Reserved on the 2nd, refunded (failed): nothing spent.
    const failed = ulid();
    await ledger(accountId, "reserve", -2, at("2026-10-02T10:00:00Z"), {
      reason: "video.trim",
      taskId: failed,
    });
    await ledger(accountId, "refund", 2, at("2026-10-02T10:01:00Z"), {
      reason: "task failed",
      taskId: failed,
    });
    await ledger(accountId, "charge", -3, at("2026-10-02T00:00:00Z"), { reason: "image.watermark" });
    // Outside the range, on both sides.
    await ledger(accountId, "charge", -1, at("2026-09-30T23:59:59.999Z"), { reason: "video.probe" });
    await ledger(accountId, "charge", -1, at("2026-10-03T00:00:00Z"), { reason: "video.probe" });

    const response = await call("/v1/usage?from=2026-10-01&to=2026-10-02", { key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      from: "2026-10-01",
      to: "2026-10-02",
      results: [
        { date: "2026-10-01", operation: "video.probe", count: 2, credits: 2 },
        { date: "2026-10-01", operation: "video.trim", count: 1, credits: 2 },
        { date: "2026-10-02", operation: "image.watermark", count: 1, credits: 3 },
      ],
      total_count: 4,
      total_credits: 7,
    });
  });

  it("defaults to the 30 days up to today, and counts a real synchronous charge", async () => {
    const { accountId, key } = await newAccount();
    await ledger(accountId, "charge", -2, Date.now(), { reason: "video.trim" });
    const usage = (await (await call("/v1/usage", { key })).json()) as Usage;
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.to).toBe(today);
    expect(Date.parse(usage.to) - Date.parse(usage.from)).toBe(29 * 86_400_000);
    expect(usage.results).toEqual([{ date: today, operation: "video.trim", count: 1, credits: 2 }]);
  });

  it("another account's usage is never visible", async () => {
    const mine = await newAccount();
    const theirs = await newAccount();
    await ledger(theirs.accountId, "charge", -5, at("2026-10-05T10:00:00Z"), { reason: "video.probe" });
    const usage = (await (
      await call("/v1/usage?from=2026-10-01&to=2026-10-31", { key: mine.key })
    ).json()) as Usage;
    expect(usage).toMatchObject({ results: [], total_count: 0, total_credits: 0 });
  });

  it.each([
    ["from=2026-13-01", "from"],
    ["from=2026-02-30", "from"],
    ["from=yesterday", "from"],
    ["to=2026-1-5", "to"],
    ["from=2026-10-05&to=2026-10-04", "from"],
    ["from=2026-01-01&to=2026-04-03", "to"],
  ])("%s is a 400 naming %s", async (query, field) => {
    const { key } = await newAccount();
    const response = await call(`/v1/usage?${query}`, { key });
    expect(response.status).toBe(400);
    const body = await problem(response);
    expect(body.code).toBe("VALIDATION_INVALID_ARGUMENT");
    expect(body.errors?.map((e) => e.field)).toEqual([field]);
  });

  it("a refusal names the bound the client left out and the value it defaulted to", async () => {
    const { key } = await newAccount();
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const body = await problem(await call(`/v1/usage?from=${tomorrow}`, { key }));
    expect(body.errors?.[0]?.message).toContain(`\`to\` (not given: today, ${today})`);
    const long = await problem(await call("/v1/usage?to=2026-10-01&from=2026-01-01", { key }));
    expect(long.errors?.[0]?.message).toContain("`to` (2026-10-01)");
  });

  it("92 days is the longest range", async () => {
    const { key } = await newAccount();
    expect((await call("/v1/usage?from=2026-01-01&to=2026-04-02", { key })).status).toBe(200);
  });

  it("401 without a key, 403 for a key without the read scope", async () => {
    expect((await call("/v1/usage")).status).toBe(401);
    const { accountId } = await newAccount();
    const response = await call("/v1/usage", { key: await newKey(accountId, { scopes: ["write"] }) });
    expect((await problem(response)).code).toBe("PERMISSION_FORBIDDEN");
  });
});
