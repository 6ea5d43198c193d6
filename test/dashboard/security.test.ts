import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { newLoginSession, operatorSessionId, sealSession } from "../../src/dashboard/session";
import { accounts, apiKeys, creditLedger, sessions, webhookSecrets } from "../../src/db/schema";
import { createSession, newSessionToken } from "../../src/sessions/store";
import { signUp } from "../../src/users/service";
import { base64UrlEncode } from "../../src/util/encoding";
import { newEmail, PASSWORD } from "../console/support";
import { ADMIN_TOKEN, BASE, db, newAccount } from "../helpers/api";
import { insertTask } from "../helpers/tasks";
import { csrfOf, DashboardClient, location, signedIn } from "./client";

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

/** The app with other bindings (a changed or unset ADMIN_TOKEN), through the same fetch. */
const withEnv = (overrides: Partial<Env>) => (request: Request) =>
  createApp().fetch(request, { ...env, ...overrides }, ctx) as Promise<Response>;

async function pages() {
  const { accountId, keyId } = await newAccount();
  const task = await insertTask(accountId);
  return [
    "/dashboard",
    "/dashboard/accounts",
    `/dashboard/accounts/${accountId}`,
    `/dashboard/accounts/${accountId}/keys`,
    `/dashboard/accounts/${accountId}/keys/${keyId}/revoke`,
    `/dashboard/accounts/${accountId}/webhook-secret`,
    `/dashboard/accounts/${accountId}/tasks`,
    `/dashboard/accounts/${accountId}/tasks/${task.id}`,
    "/dashboard/no-such-page",
  ];
}

/** Every state-changing form, with what must not have happened when it is refused. */
async function actions() {
  const { accountId, keyId } = await newAccount();
  const count = async () => ({
    accounts: (await db().select().from(accounts).all()).length,
    ledger: (await db().select().from(creditLedger).where(eq(creditLedger.accountId, accountId)).all())
      .length,
    revoked: (await db().select().from(apiKeys).where(eq(apiKeys.id, keyId)).get())?.revokedAt ?? null,
    keys: (await db().select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).all()).length,
    secrets: (await db().select().from(webhookSecrets).where(eq(webhookSecrets.accountId, accountId)).all())
      .length,
  });
  const forms: [string, Record<string, string | string[]>][] = [
    ["/dashboard/accounts", { name: "Mallory", credits: "1000000" }],
    [`/dashboard/accounts/${accountId}/credits`, { amount: "1000000", reason: "free money" }],
    [`/dashboard/accounts/${accountId}/keys`, { name: "stolen", scopes: ["read", "write"] }],
    [`/dashboard/accounts/${accountId}/keys/${keyId}/revoke`, {}],
    [`/dashboard/accounts/${accountId}/webhook-secret/rotate`, {}],
    [`/dashboard/accounts/${accountId}/webhook-secret/reveal`, {}],
  ];
  return { accountId, forms, count };
}

describe("without a session", () => {
  it("every page redirects to sign-in and shows nothing", async () => {
    const client = new DashboardClient();
    for (const path of await pages()) {
      const response = await client.get(path);
      expect(response.status, path).toBe(303);
      expect(location(response), path).toMatch(/^\/dashboard\/login(\?next=|$)/);
      expect(await response.text()).toBe("");
    }
  });

  it("a GET comes back to its page after signing in", async () => {
    const { accountId } = await newAccount();
    const client = new DashboardClient();
    const response = await client.get(`/dashboard/accounts/${accountId}/keys`);
    const login = location(response)!;
    expect(login).toBe(
      `/dashboard/login?next=${encodeURIComponent(`/dashboard/accounts/${accountId}/keys`)}`,
    );
    const html = await (await client.get(login)).text();
    const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, "&");
    const signIn = await client.post(action, { _csrf: csrfOf(html), token: ADMIN_TOKEN });
    expect(location(signIn)).toBe(`/dashboard/accounts/${accountId}/keys`);
  });

  it("never redirects off the dashboard after sign-in", async () => {
    for (const next of [
      "https://evil.example/",
      "//evil.example/",
      "/v1/tasks",
      "/dashboard//evil.example",
    ]) {
      const client = new DashboardClient();
      const html = await (await client.get(`/dashboard/login?next=${encodeURIComponent(next)}`)).text();
      const response = await client.post(`/dashboard/login?next=${encodeURIComponent(next)}`, {
        _csrf: csrfOf(html),
        token: ADMIN_TOKEN,
      });
      expect(location(response), next).toBe("/dashboard/accounts");
    }
  });

  it("every form is refused and changes nothing", async () => {
    const { forms, count } = await actions();
    const before = await count();
    const client = new DashboardClient();
    for (const [path, fields] of forms) {
      const response = await client.post(path, fields);
      expect(response.status, path).toBe(303);
      expect(location(response)).toBe("/dashboard/login");
      expect(await response.text()).not.toContain("whsec_");
    }
    expect(await count()).toEqual(before);
  });
});

describe("forged and stale session cookies", () => {
  const forgeries: [string, () => Promise<string>][] = [
    ["random bytes", async () => "definitely-not-a-session"],
    ["a well-formed token that names no session", async () => newSessionToken()],
    [
      "a signed stateless session cookie (the former format), even with the right key",
      () => sealSession(ADMIN_TOKEN, { kind: "session", id: "x", expiresAt: Date.now() + 3_600_000 }),
    ],
    [
      "a hand-made payload without a valid signature",
      async () =>
        `${base64UrlEncode(JSON.stringify({ k: "session", i: "x", e: Date.now() + 3_600_000 }))}.${"A".repeat(43)}`,
    ],
    ["the sign-in form's pre-session", () => sealSession(ADMIN_TOKEN, newLoginSession(Date.now()))],
    [
      "a customer's live console session",
      async () => {
        const created = await signUp(db(), { email: newEmail(), password: PASSWORD, credits: 0 }, Date.now());
        if (!created.ok) throw new Error("sign-up failed");
        return (await createSession(db(), created.user.id, Date.now())).token;
      },
    ],
  ];

  it.each(forgeries)("%s → sign-in, cookie cleared", async (_name, forge) => {
    const client = new DashboardClient();
    client.cookies.set("p6_dashboard", await forge());
    const response = await client.get("/dashboard/accounts");
    expect(response.status).toBe(303);
    expect(location(response)).toBe("/dashboard/login");
    expect(client.cookies.has("p6_dashboard")).toBe(false);
  });

  it("a new ADMIN_TOKEN signs every operator out", async () => {
    const client = await signedIn();
    expect((await client.get("/dashboard/accounts")).status).toBe(200);
    const rotated = new DashboardClient(BASE, withEnv({ ADMIN_TOKEN: "the-new-admin-token" }));
    for (const [name, value] of client.cookies) rotated.cookies.set(name, value);
    expect((await rotated.get("/dashboard/accounts")).status).toBe(303);
  });
});

describe("CSRF", () => {
  it("a form without its token, with another session's token, or from another origin is refused", async () => {
    const { forms, count } = await actions();
    const client = await signedIn();
    const other = await signedIn();
    const otherToken = csrfOf(await (await other.get("/dashboard/accounts")).text());
    const token = csrfOf(await (await client.get("/dashboard/accounts")).text());
    const before = await count();
    for (const [path, fields] of forms) {
      const attempts = [
        () => client.post(path, fields),
        () => client.post(path, { ...fields, _csrf: "" }),
        () => client.post(path, { ...fields, _csrf: otherToken }),
        () => client.post(path, { ...fields, _csrf: token }, { headers: { Origin: "https://evil.example" } }),
        () => client.post(path, { ...fields, _csrf: token }, { headers: { Origin: "null" } }),
      ];
      for (const attempt of attempts) {
        const response = await attempt();
        expect(response.status, path).toBe(403);
        const html = await response.text();
        expect(html).toContain("Form refused");
        expect(html).not.toContain("whsec_");
      }
    }
    expect(await count()).toEqual(before);
  });

  it("a cross-site fetch without Origin is refused by Sec-Fetch-Site", async () => {
    const client = await signedIn();
    const token = csrfOf(await (await client.get("/dashboard/accounts")).text());
    const response = await client.post(
      "/dashboard/accounts",
      { _csrf: token, name: "x" },
      { headers: { Origin: "", "Sec-Fetch-Site": "cross-site" } },
    );
    expect(response.status).toBe(403);
  });

  it("only form posts are accepted", async () => {
    const client = await signedIn();
    const token = csrfOf(await (await client.get("/dashboard/accounts")).text());
    const response = await client.fetcher(
      new Request(`${BASE}/dashboard/accounts`, {
        method: "POST",
        headers: {
          Cookie: `p6_dashboard=${client.cookies.get("p6_dashboard")}`,
          Origin: BASE,
          "Content-Type": "application/json",
        },
        body: JSON.stringify({ _csrf: token, name: "json" }),
        redirect: "manual",
      }),
    );
    expect(response.status).toBe(415);
    expect(response.headers.get("content-type")).toContain("text/html");
  });

  it("the sign-in form needs its own token", async () => {
    const client = new DashboardClient();
    await client.get("/dashboard/login");
    const response = await client.post("/dashboard/login", { token: ADMIN_TOKEN });
    expect(response.status).toBe(403);
    expect(client.cookies.has("p6_dashboard")).toBe(false);
    const noCookie = new DashboardClient();
    const html = await (await noCookie.get("/dashboard/login")).text();
    noCookie.cookies.clear();
    expect(
      (await noCookie.post("/dashboard/login", { _csrf: csrfOf(html), token: ADMIN_TOKEN })).status,
    ).toBe(403);
  });

  it("sign-out needs the token too", async () => {
    const client = await signedIn();
    expect((await client.post("/dashboard/logout")).status).toBe(403);
    expect(client.cookies.has("p6_dashboard")).toBe(true);
  });
});

describe("sign-in and sign-out", () => {
  it("a wrong token → 401 with a readable message, no session", async () => {
    const client = new DashboardClient();
    for (const token of ["wrong", "", `${ADMIN_TOKEN}x`]) {
      const response = await client.submit("/dashboard/login", "/dashboard/login", { token });
      expect(response.status).toBe(401);
      expect(await response.text()).toContain("That is not the admin token.");
      expect(client.cookies.has("p6_dashboard")).toBe(false);
    }
  });

  it("the session cookie is HttpOnly, SameSite=Strict, Secure, scoped to /dashboard and expires in 12 h", async () => {
    const client = new DashboardClient();
    const html = await (await client.get("/dashboard/login")).text();
    const response = await client.post("/dashboard/login", { _csrf: csrfOf(html), token: ADMIN_TOKEN });
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith("p6_dashboard="))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; Path=\/dashboard(;|$)/);
    expect(Number(/Max-Age=(\d+)/.exec(cookie)![1])).toBeGreaterThan(12 * 3600 - 5);
    expect(Number(/Max-Age=(\d+)/.exec(cookie)![1])).toBeLessThanOrEqual(12 * 3600);
  });

  it("on localhost the cookie is not Secure (plain http), and everything else holds", async () => {
    const client = await signedIn(new DashboardClient("http://localhost:8787"));
    const response = await client.get("/dashboard/accounts");
    expect(response.status).toBe(200);
    const local = new DashboardClient("http://127.0.0.1:8787");
    const html = await (await local.get("/dashboard/login")).text();
    const signIn = await local.post("/dashboard/login", { _csrf: csrfOf(html), token: ADMIN_TOKEN });
    const cookie = signIn.headers.getSetCookie().find((c) => c.startsWith("p6_dashboard="))!;
    expect(cookie).not.toMatch(/Secure/);
    expect(cookie).toMatch(/HttpOnly/);
  });

  it("signed in, /dashboard/login goes to the accounts", async () => {
    const client = await signedIn();
    expect(location(await client.get("/dashboard/login"))).toBe("/dashboard/accounts");
  });

  it("sign-out clears the cookie and ends the session: a copy of the cookie is refused afterwards", async () => {
    const client = await signedIn();
    const copy = new DashboardClient();
    copy.cookies.set("p6_dashboard", client.cookies.get("p6_dashboard")!);
    expect((await copy.get("/dashboard/accounts")).status).toBe(200);
    const response = await client.submit("/dashboard/accounts", "/dashboard/logout");
    expect(response.status).toBe(303);
    expect(location(response)).toBe("/dashboard/login");
    expect(client.cookies.has("p6_dashboard")).toBe(false);
    expect((await client.get("/dashboard/accounts")).status).toBe(303);
    const refused = await copy.get("/dashboard/accounts");
    expect(refused.status).toBe(303);
    expect(location(refused)).toBe("/dashboard/login");
    expect(copy.cookies.has("p6_dashboard")).toBe(false);
  });

  it("signing out ends only that session", async () => {
    const first = await signedIn();
    const second = await signedIn();
    await first.submit("/dashboard/accounts", "/dashboard/logout");
    expect((await second.get("/dashboard/accounts")).status).toBe(200);
  });

  it("the session is a row keyed by a digest of the cookie's token, never the token itself", async () => {
    const client = await signedIn();
    const token = client.cookies.get("p6_dashboard")!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const id = await operatorSessionId(ADMIN_TOKEN, token);
    const row = await db().select().from(sessions).where(eq(sessions.id, id)).get();
    expect(row).toMatchObject({ kind: "operator", userId: null });
    const leaks = await env.DB.prepare("SELECT count(*) AS n FROM sessions WHERE instr(id, ?) > 0")
      .bind(token)
      .first<{ n: number }>();
    expect(leaks!.n).toBe(0);
  });
});

describe("headers and availability", () => {
  it("pages are not cached, not framed, and allow only their own nonce'd style and script", async () => {
    const client = await signedIn();
    const response = await client.get("/dashboard/accounts");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    const csp = response.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self'");
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    const html = await response.text();
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).not.toMatch(/<script(?![^>]*nonce)/);
    expect(html).not.toMatch(/ style="/);
    expect(html).not.toMatch(/ on[a-z]+="/);
    const again = (await client.get("/dashboard/accounts")).headers.get("content-security-policy")!;
    expect(again).not.toContain(nonce);
  });

  it("ADMIN_TOKEN unset → the dashboard does not exist (404 like the admin API)", async () => {
    const client = new DashboardClient(BASE, withEnv({ ADMIN_TOKEN: "" }));
    for (const path of ["/dashboard", "/dashboard/login", "/dashboard/accounts"]) {
      const response = await client.get(path);
      expect(response.status, path).toBe(404);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
    }
    expect((await client.post("/dashboard/login", { token: "" })).status).toBe(404);
  });

  it("the dashboard needs no API key and is not part of the public OpenAPI document", async () => {
    const document = (await (await createApp().request(`${BASE}/v1/openapi.json`, {}, env)).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(document.paths).some((p) => p.startsWith("/dashboard"))).toBe(false);
  });
});
