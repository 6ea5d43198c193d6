import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { ADMIN_TOKEN, admin, BASE, call, problem } from "../../helpers/api";

type Json = Record<string, unknown>;

async function createAccount(credits?: number) {
  const response = await admin("/admin/v1/accounts", { method: "POST", json: { name: "Acme", credits } });
  expect(response.status).toBe(201);
  return (await response.json()) as Json & { id: string; api_key: { key: string; id: string } };
}

describe("admin API guard", () => {
  it("wrong or missing ADMIN_TOKEN → 401 problem", async () => {
    for (const token of ["wrong", ""]) {
      const response = await admin("/admin/v1/accounts", { token });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
      expect((await problem(response)).code).toBe("AUTH_UNAUTHORIZED");
    }
  });

  it("ADMIN_TOKEN unset → 404 for every admin route", async () => {
    const app = createApp();
    const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
    for (const path of ["/admin/v1/accounts", "/admin/v1/openapi.json", "/admin/v1/keys/x/revoke"]) {
      const response = await app.fetch(
        new Request(`${BASE}${path}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } }),
        { ...env, ADMIN_TOKEN: "" },
        ctx,
      );
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
    }
  });

  it("an API key is not an admin token", async () => {
    const account = await createAccount();
    const response = await admin("/admin/v1/accounts", { token: account.api_key.key });
    expect(response.status).toBe(401);
  });
});

describe("accounts", () => {
  it("create → 201 {id, name, credits, webhook_secret} plus the default key, usable at once", async () => {
    const account = await createAccount(250);
    expect(account).toMatchObject({ name: "Acme", credits: 250 });
    expect(account.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(account.api_key.key).toMatch(/^p6_[0-9A-Z]{26}:[0-9a-f]{64}$/);
    expect((await call("/v1/tasks", { key: account.api_key.key })).status).toBe(200);
  });

  it("get and list (newest first, cursor)", async () => {
    const first = await createAccount();
    const second = await createAccount();
    const got = (await (await admin(`/admin/v1/accounts/${first.id}`)).json()) as Json;
    expect(got).toEqual({ id: first.id, name: "Acme", credits: 0, created_at: expect.any(String) });
    const page = (await (await admin("/admin/v1/accounts?limit=1")).json()) as {
      results: Json[];
      has_next: boolean;
      next_cursor: string;
    };
    expect(page.results[0]!.id).toBe(second.id);
    expect(page.has_next).toBe(true);
    const next = (await (await admin(`/admin/v1/accounts?limit=1&cursor=${page.next_cursor}`)).json()) as {
      results: Json[];
    };
    expect(next.results[0]!.id).toBe(first.id);
  });

  it("validation and unknown ids", async () => {
    const bad = await admin("/admin/v1/accounts", {
      method: "POST",
      json: { name: "", credits: -1, extra: 1 },
    });
    expect(bad.status).toBe(400);
    expect((await problem(bad)).errors?.map((e) => e.field).sort()).toEqual(["credits", "extra", "name"]);
    expect((await admin("/admin/v1/accounts/01JD5Z8X4QK3M7R2T9V6W1Y0AB")).status).toBe(404);
  });
});

describe("keys", () => {
  it("create with options → the full key once; listing never shows a secret", async () => {
    const account = await createAccount();
    const response = await admin(`/admin/v1/accounts/${account.id}/keys`, {
      method: "POST",
      json: { name: "ci", scopes: ["read"], expires_in_days: 30, rate_limit_per_minute: 5 },
    });
    expect(response.status).toBe(201);
    const created = (await response.json()) as Json & { key: string; id: string; expires_at: string };
    expect(created).toMatchObject({
      name: "ci",
      scopes: ["read"],
      rate_limit_per_minute: 5,
      prefix: `p6_${created.id.slice(0, 8)}...`,
    });
    expect(Date.parse(created.expires_at) - Date.now()).toBeGreaterThan(29.9 * 86_400_000);

    const listed = await (await admin(`/admin/v1/accounts/${account.id}/keys`)).text();
    const secret = created.key.split(":")[1]!;
    expect(listed).not.toContain(secret);
    expect(listed).not.toContain(account.api_key.key.split(":")[1]!);
    expect(listed).not.toMatch(/secret_hash|secretHash/);
    const keys = (JSON.parse(listed) as { results: Json[] }).results;
    expect(keys.map((k) => k.id).sort()).toEqual([account.api_key.id, created.id].sort());
    expect(keys[0]).toHaveProperty("last_used_at");
    expect(keys[0]).toHaveProperty("revoked_at");
  });

  it("an empty body gives a default read+write key without expiry", async () => {
    const account = await createAccount();
    const response = await admin(`/admin/v1/accounts/${account.id}/keys`, { method: "POST" });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({
      scopes: ["read", "write"],
      expires_at: null,
      rate_limit_per_minute: null,
    });
  });

  it("rejects bad options", async () => {
    const account = await createAccount();
    const response = await admin(`/admin/v1/accounts/${account.id}/keys`, {
      method: "POST",
      json: { scopes: ["admin"], expires_in_days: 366 },
    });
    expect(response.status).toBe(400);
    expect((await problem(response)).errors?.map((e) => e.field).sort()).toEqual([
      "expires_in_days",
      "scopes[0]",
    ]);
  });

  it("revoke → 200 {id, revoked_at}; the key is refused on the next request; unknown → 404", async () => {
    const account = await createAccount();
    const { key, id } = account.api_key;
    expect((await call("/v1/tasks", { key })).status).toBe(200);
    const response = await admin(`/admin/v1/keys/${id}/revoke`, { method: "POST" });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Json;
    expect(body).toEqual({ id, revoked_at: expect.any(String) });
    expect((await call("/v1/tasks", { key })).status).toBe(401);
    const again = (await (await admin(`/admin/v1/keys/${id}/revoke`, { method: "POST" })).json()) as Json;
    expect(again.revoked_at).toBe(body.revoked_at);
    expect((await admin("/admin/v1/keys/01JD5Z8X4QK3M7R2T9V6W1Y0AB/revoke", { method: "POST" })).status).toBe(
      404,
    );
  });
});

describe("credits and ledger", () => {
  it("grant → new balance; the ledger records every change with balance_after", async () => {
    const account = await createAccount(100);
    const response = await admin(`/admin/v1/accounts/${account.id}/credits`, {
      method: "POST",
      json: { amount: 40, reason: "top-up" },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ credits: 140 });
    const ledger = (await (await admin(`/admin/v1/accounts/${account.id}/ledger`)).json()) as {
      results: Json[];
    };
    expect(ledger.results.map((r) => [r.kind, r.amount, r.balance_after, r.reason])).toEqual([
      ["grant", 40, 140, "top-up"],
      ["grant", 100, 100, "opening balance"],
    ]);
    expect(ledger.results[0]!.request_id).toMatch(/^[0-9A-Z]{26}$/);
  });

  it("rejects non-positive amounts and a missing reason", async () => {
    const account = await createAccount();
    const response = await admin(`/admin/v1/accounts/${account.id}/credits`, {
      method: "POST",
      json: { amount: 0 },
    });
    expect(response.status).toBe(400);
    expect((await problem(response)).errors?.map((e) => e.field).sort()).toEqual(["amount", "reason"]);
  });
});

describe("webhook secret", () => {
  it("show → the current secret; rotate keeps the old one active 24 h", async () => {
    const account = await createAccount();
    const shown = (await (await admin(`/admin/v1/accounts/${account.id}/webhook-secret`)).json()) as Json;
    expect(shown).toEqual({ secrets: [{ secret: account.webhook_secret, active_until: null }] });

    const rotated = (await (
      await admin(`/admin/v1/accounts/${account.id}/webhook-secret/rotate`, { method: "POST" })
    ).json()) as { secret: string; previous_active_until: string };
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(account.webhook_secret);
    const overlap = Date.parse(rotated.previous_active_until) - Date.now();
    expect(overlap).toBeGreaterThan(23.9 * 3_600_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3_600_000);

    const after = (await (await admin(`/admin/v1/accounts/${account.id}/webhook-secret`)).json()) as Json;
    expect(after).toEqual({
      secrets: [
        { secret: rotated.secret, active_until: null },
        { secret: account.webhook_secret, active_until: rotated.previous_active_until },
      ],
    });
  });

  it("unknown account → 404", async () => {
    expect((await admin("/admin/v1/accounts/01JD5Z8X4QK3M7R2T9V6W1Y0AB/webhook-secret")).status).toBe(404);
  });
});
