import { describe, expect, it } from "vitest";
import { clientAt, signedUp } from "../console/support";
import { csrfOf, DashboardClient, signedIn } from "../dashboard/client";
import { admin, call, newAccount, newKey, send } from "../helpers/api";

/**
 * Issue 40, headers: an authenticated API answer (a customer's account, tasks, keys; errors too) is never kept
 * by a shared cache, and an HTTPS answer tells browsers to stay on HTTPS. And a cap on keys per account, on
 * every path that makes one.
 */

describe("Cache-Control: no-store on every authenticated API answer", () => {
  const cases: [string, (key: string) => Promise<Response>, number][] = [
    ["GET /v1/account", (key) => call("/v1/account", { key }), 200],
    ["GET /v1/tasks", (key) => call("/v1/tasks", { key }), 200],
    ["GET /v1/usage", (key) => call("/v1/usage", { key }), 200],
    ["a 404 task", (key) => call("/v1/tasks/01JD5Z8X4QK3M7R2T9V6W1Y0AB", { key }), 404],
    ["a 400 task creation", (key) => call("/v1/tasks", { key, method: "POST", json: { type: "nope" } }), 400],
    ["a 401 (bad key)", () => call("/v1/tasks", { key: "p6_01JD5Z8X4QK3M7R2T9V6W1Y0AB:00" }), 401],
    ["GET /admin/v1/accounts", () => admin("/admin/v1/accounts"), 200],
    ["an admin 401", () => admin("/admin/v1/accounts", { token: "wrong" }), 401],
  ];
  it.each(cases)("%s", async (_, request, status) => {
    const { key } = await newAccount();
    const response = await request(key);
    expect(response.status).toBe(status);
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it("public documents keep their own caching", async () => {
    const response = await call("/v1/openapi.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).not.toBe("no-store");
  });
});

describe("Strict-Transport-Security on HTTPS answers", () => {
  const https = (path: string, init: RequestInit = {}) => send(new Request(`https://api.test${path}`, init));

  it.each(["/", "/v1/tasks", "/docs", "/console/sign-in", "/nowhere"])("https %s", async (path) => {
    const response = await https(path);
    expect(response.headers.get("strict-transport-security")).toBe("max-age=31536000");
  });

  it("not on plain http (a browser ignores it there, and local development is http)", async () => {
    expect((await call("/")).headers.get("strict-transport-security")).toBeNull();
  });
});

/** The documented cap (docs/decisions.md "Accounts, keys, credits"). */
const MAX_ACTIVE_KEYS = 10;

describe(`at most ${MAX_ACTIVE_KEYS} active keys per account`, () => {
  it("the admin API: the next key is a 409 problem+json; revoking one makes room", async () => {
    const { accountId } = await newAccount();
    // The default key is one of them.
    for (let i = 1; i < MAX_ACTIVE_KEYS; i++) await newKey(accountId);
    const refused = await admin(`/admin/v1/accounts/${accountId}/keys`, { method: "POST", json: {} });
    expect(refused.status).toBe(409);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    const body = (await refused.json()) as { code: string; detail: string };
    expect(body.code).toBe("RESOURCE_CONFLICT");
    expect(body.detail).toContain(`${MAX_ACTIVE_KEYS} active keys`);
    const listed = (await (await admin(`/admin/v1/accounts/${accountId}/keys`)).json()) as {
      results: { id: string }[];
    };
    expect(listed.results).toHaveLength(MAX_ACTIVE_KEYS);
    await admin(`/admin/v1/keys/${listed.results[0]!.id}/revoke`, { method: "POST" });
    expect((await admin(`/admin/v1/accounts/${accountId}/keys`, { method: "POST", json: {} })).status).toBe(
      201,
    );
  });

  it("a burst of 20 creations at once makes exactly up to the cap", async () => {
    const { accountId } = await newAccount();
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () =>
        admin(`/admin/v1/accounts/${accountId}/keys`, { method: "POST", json: {} }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_ACTIVE_KEYS - 1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(20 - (MAX_ACTIVE_KEYS - 1));
  });

  it("the dashboard: the operator's form is refused the same way (409 page)", async () => {
    const { accountId } = await newAccount();
    for (let i = 1; i < MAX_ACTIVE_KEYS; i++) await newKey(accountId);
    const operator = await signedIn(new DashboardClient());
    const page = `/dashboard/accounts/${accountId}/keys`;
    const refused = await operator.submit(page, page, { name: "one more", scopes: "read" });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain(`${MAX_ACTIVE_KEYS} active keys`);
  });

  it("the console: the form says why and makes nothing", async () => {
    const { client } = await signedUp(undefined, clientAt());
    for (let i = 1; i < MAX_ACTIVE_KEYS; i++) {
      const made = await client.submit("/console/keys", "/console/keys", { name: `k${i}`, scopes: "read" });
      expect(made.status).toBe(303);
    }
    const page = await client.get("/console/keys");
    const refused = await client.post("/console/keys", {
      _csrf: csrfOf(await page.text()),
      name: "one more",
      scopes: "read",
    });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain(`${MAX_ACTIVE_KEYS} active keys`);
  });
});
