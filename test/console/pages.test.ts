import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { webhookDeliveries } from "../../src/db/schema";
import { resendLastEvent } from "../../src/webhooks/resend";
import { csrfOf, DashboardClient, location } from "../dashboard/client";
import { call, db } from "../helpers/api";
import { insertTask } from "../helpers/tasks";
import { newEmail, PASSWORD, signedUp, signInForm } from "./support";

const accountOf = async (email: string) =>
  (await env.DB.prepare("SELECT account_id FROM users WHERE email = ?")
    .bind(email.toLowerCase())
    .first<{ account_id: string }>())!.account_id;

const accountCount = async (email: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM users WHERE email = ?")
    .bind(email.toLowerCase())
    .first<{ n: number }>())!.n;

describe("console pages", () => {
  it("sign-up: one account, its owner, a working default key shown once, a unique email", async () => {
    const { client, email, key, html } = await signedUp();
    expect(html).toContain("only time it is shown");
    expect((await call("/v1/tasks", { key })).status).toBe(200);
    const accountId = await accountOf(email);
    const user = await env.DB.prepare("SELECT role, email, email_verified_at FROM users WHERE account_id = ?")
      .bind(accountId)
      .first();
    expect(user).toEqual({ role: "owner", email: email.toLowerCase(), email_verified_at: null });
    for (const p of ["/console", "/console/keys", "/console/security"]) {
      expect(await (await client.get(p)).text()).not.toContain(key.split(":")[1]);
    }
    // The same email in another case is taken; nothing of the second attempt is left behind.
    const before = await env.DB.prepare("SELECT count(*) AS n FROM accounts").first<{ n: number }>();
    const again = await new DashboardClient().submit("/console/sign-up", "/console/sign-up", {
      email: email.toUpperCase(),
      password: PASSWORD,
    });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("already has an account");
    const after = await env.DB.prepare("SELECT count(*) AS n FROM accounts").first<{ n: number }>();
    expect(after!.n).toBe(before!.n);
  });

  it.each([
    ["too short", "short pass", "At least 12 characters."],
    ["common", "password1234", "similar to a commonly used password"],
    ["one character", "aaaaaaaaaaaaaaaa", "Repeated characters"],
    ["keyboard row", "qwertyuiopas", "Too easy to guess."],
    ["two common words", "correcthorse", "Add more words that are less common."],
    ["repeated pattern", "abcabcabcabc", "Repeated character patterns"],
    ["near repeat", "aaaaaaaaaaab", "Repeated characters"],
  ])("sign-up refuses a %s password, with the estimator's feedback", async (_, password, feedback) => {
    const email = newEmail();
    const response = await new DashboardClient().submit("/console/sign-up", "/console/sign-up", {
      email,
      password,
    });
    expect(response.status).toBe(400);
    const html = await response.text();
    const error = /id="field-password-error"[^>]*>([^<]*)</.exec(html)?.[1];
    expect(error).toContain(feedback);
    expect(await accountCount(email)).toBe(0);
  });

  it("a password made of the email's own name is refused; a long passphrase is accepted", async () => {
    const refused = await new DashboardClient().submit("/console/sign-up", "/console/sign-up", {
      email: "jonathanwalsh@example.com",
      password: "jonathanwalsh1",
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("personal");
    const accepted = await signedUp(newEmail(), new DashboardClient(), "plum kettle orbit sandal");
    expect(accepted.key).toMatch(/^p6_/);
  });

  it("keys: a read-only key is refused on POST, revoking needs a confirmation, then 401", async () => {
    const { client } = await signedUp();
    const created = await client.submit("/console/keys", "/console/keys", { name: "reader", scopes: "read" });
    expect(created.status).toBe(303);
    expect(location(created)).toBe("/console/keys");
    const key = /id="new-key"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*id="new-key"/.exec(
      await (await client.get("/console/keys")).text(),
    );
    const readOnly = (key?.[1] ?? key?.[2])!;
    expect((await call("/v1/tasks", { key: readOnly })).status).toBe(200);
    expect((await call("/v1/tasks", { key: readOnly, method: "POST", json: {} })).status).toBe(403);
    const keyId = readOnly.slice(3, 29);
    const confirm = await client.get(`/console/keys/${keyId}/revoke`);
    expect(await confirm.text()).toContain("cannot be restored");
    const revoked = await client.submit(`/console/keys/${keyId}/revoke`, `/console/keys/${keyId}/revoke`);
    expect(location(revoked)).toBe("/console/keys?done=revoked");
    expect((await call("/v1/tasks", { key: readOnly })).status).toBe(401);
  });

  it("every successful POST answers 303 to a GET; a new key is shown once after it, never in a URL", async () => {
    const { client, email, key: firstKey } = await signedUp();
    // The welcome page showed the sign-up key once; opening it again goes to the overview, without the key.
    const again = await client.get("/console/welcome");
    expect(location(again)).toBe("/console");
    const keyCount = async () =>
      (await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE account_id = ?")
        .bind(await accountOf(email))
        .first<{ n: number }>())!.n;
    expect(await keyCount()).toBe(1);

    const created = await client.submit("/console/keys", "/console/keys", { name: "ci", scopes: "read" });
    expect(created.status).toBe(303);
    const target = location(created)!;
    expect(target).toBe("/console/keys");
    // The flash cookie is HttpOnly, short-lived, for /console only, and holds no readable key.
    const flash = created.headers.getSetCookie().find((c) => c.startsWith("p6_console_flash="))!;
    expect(flash).toMatch(/HttpOnly/);
    expect(flash).toMatch(/Max-Age=120/);
    expect(flash).toMatch(/Path=\/console/);
    const sealed = client.cookies.get("p6_console_flash")!;
    const shown = await (await client.get(target)).text();
    const newKey = /value="(p6_[^"]+)"/.exec(shown)?.[1];
    expect(newKey).toMatch(/^p6_[0-9A-Z]{26}:[0-9a-f]{64}$/);
    expect(newKey).not.toBe(firstKey);
    for (const part of [newKey!, newKey!.split(":")[1]!]) {
      expect(target).not.toContain(part);
      expect(sealed).not.toContain(part);
      expect(decodeURIComponent(sealed)).not.toContain(part);
    }
    // Listed by its whole id.
    expect(shown).toContain(`p6_${newKey!.slice(3, 29)}`);
    expect(await keyCount()).toBe(2);
    // A reload of the page after the redirect: no second key, and the key is not shown again.
    const reloaded = await (await client.get(target)).text();
    expect(reloaded).not.toContain(newKey!.split(":")[1]);
    expect(await keyCount()).toBe(2);

    // Another session cannot open a flash sealed for this one.
    const other = await signedUp();
    await client.submit("/console/keys", "/console/keys", { name: "second" });
    const stolen = client.cookies.get("p6_console_flash")!;
    other.client.cookies.set("p6_console_flash", stolen);
    expect(await (await other.client.get("/console/keys")).text()).not.toContain('id="new-key"');

    // Rotation asks first; the POST then redirects.
    const confirm = await client.get("/console/webhooks/rotate");
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain("Rotate the webhook signing secret?");
    const webhooks = await (await client.get("/console/webhooks")).text();
    expect(webhooks).toContain('href="/console/webhooks/rotate"');
    expect(webhooks).not.toContain('action="/console/webhooks/rotate"');
    const rotated = await client.submit("/console/webhooks/rotate", "/console/webhooks/rotate");
    expect(location(rotated)).toBe("/console/webhooks?done=rotated");
  });

  it("keys: the rate limit may not exceed the operator's ceiling", async () => {
    const { client } = await signedUp();
    const response = await client.submit("/console/keys", "/console/keys", {
      scopes: ["read", "write"],
      rate_limit_per_minute: "61",
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("A whole number from 1 to 60");
  });

  it("another account's task, key and delivery are not found", async () => {
    const first = await signedUp();
    const firstAccount = await accountOf(first.email);
    const task = await insertTask(firstAccount, {
      status: "succeeded",
      webhookUrl: "http://127.0.0.1:9/p6",
    });
    await db()
      .insert(webhookDeliveries)
      .values({
        id: `msg_${task.id}`,
        taskId: task.id,
        accountId: firstAccount,
        event: "completed",
        url: "http://127.0.0.1:9/p6",
        body: "{}",
        status: "delivered",
        attemptCount: 1,
        nextAttemptAt: null,
        createdAt: Date.now(),
        completedAt: Date.now(),
      });
    const firstKeyId = first.key.slice(3, 29);
    expect((await first.client.get(`/console/tasks/${task.id}`)).status).toBe(200);

    const { client } = await signedUp();
    expect((await client.get(`/console/tasks/${task.id}`)).status).toBe(404);
    expect((await client.get(`/console/keys/${firstKeyId}/revoke`)).status).toBe(404);
    const token = csrfOf(await (await client.get("/console/keys")).text());
    expect((await client.post(`/console/keys/${firstKeyId}/revoke`, { _csrf: token })).status).toBe(404);
    expect((await client.post("/console/webhooks/resend", { _csrf: token, task_id: task.id })).status).toBe(
      404,
    );
    for (const p of ["/console", "/console/tasks", "/console/keys", "/console/credits"]) {
      const html = await (await client.get(p)).text();
      expect(html, p).not.toContain(task.id);
      // The whole key id: its masked form is the ULID's time, which a key made in the same instant shares.
      expect(html, p).not.toContain(firstKeyId);
    }
    expect((await call("/v1/tasks", { key: first.key })).status).toBe(200);

    // The owner resends: a new delivery of the same body, queued.
    const ownToken = csrfOf(await (await first.client.get("/console/webhooks")).text());
    const resent = await first.client.post("/console/webhooks/resend", { _csrf: ownToken, task_id: task.id });
    expect(location(resent)).toBe(`/console/tasks/${task.id}?done=resent`);
    const rows = await env.DB.prepare("SELECT id, status, body FROM webhook_deliveries WHERE task_id = ?")
      .bind(task.id)
      .all();
    expect(rows.results).toHaveLength(2);
  });

  it("webhook resend: 3 a minute per task; a burst of 8 makes 3 deliveries, the rest refused back to the page", async () => {
    const { client, email } = await signedUp();
    const accountId = await accountOf(email);
    const task = await insertTask(accountId, { status: "succeeded", webhookUrl: "http://127.0.0.1:9/p6" });
    await db()
      .insert(webhookDeliveries)
      .values({
        id: `msg_${task.id}`,
        taskId: task.id,
        accountId,
        event: "completed",
        url: "http://127.0.0.1:9/p6",
        body: "{}",
        status: "delivered",
        attemptCount: 1,
        nextAttemptAt: null,
        createdAt: Date.now(),
        completedAt: Date.now(),
      });
    const deliveries = async () =>
      (await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE task_id = ?")
        .bind(task.id)
        .first<{ n: number }>())!.n;
    const token = csrfOf(await (await client.get("/console/webhooks")).text());
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        client.post("/console/webhooks/resend", { _csrf: token, task_id: task.id }),
      ),
    );
    // Every answer redirects (Post/Redirect/Get): the resends to the task, the refusals back to the form's page.
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(303));
    const to = answers.map((r) => r.headers.get("location"));
    expect(to.filter((l) => l === `/console/tasks/${task.id}?done=resent`)).toHaveLength(3);
    expect(to.filter((l) => l === "/console/webhooks")).toHaveLength(5);
    // The page tells why, once, with the task id kept in its field and the wait in seconds.
    const page = await (await client.get("/console/webhooks")).text();
    const wait = Number(/try again in (\d+) s\./.exec(page)?.[1]);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(page).toContain("resent 3 times in the last minute. Nothing was sent;");
    expect(page).toContain(`value="${task.id}"`);
    expect(await (await client.get("/console/webhooks")).text()).not.toContain("Nothing was sent");
    expect(await deliveries()).toBe(1 + 3);
    // A minute later the task may be resent again (the domain call, with the time moved).
    const later = Date.now() + 61_000;
    const again = await resendLastEvent(db(), env, { accountId, taskId: task.id }, later);
    expect(again.ok).toBe(true);
    expect(await deliveries()).toBe(1 + 4);
  });

  it("overview: balance, this month's usage as an SVG chart, recent tasks", async () => {
    const { client, email } = await signedUp();
    const accountId = await accountOf(email);
    await env.DB.prepare(
      `INSERT INTO credit_ledger (id, account_id, kind, amount, balance_after, reason, created_at)
       VALUES (?, ?, 'charge', -3, 0, 'image.watermark', ?)`,
    )
      .bind(crypto.randomUUID(), accountId, Date.now())
      .run();
    const task = await insertTask(accountId);
    const html = await (await client.get("/console")).text();
    expect(html).toContain("<svg");
    expect(html).toContain("image.watermark 3");
    expect(html).toContain(task.id);
  });

  it("password change ends the other sessions; sign out everywhere ends all", async () => {
    const { client, email } = await signedUp();
    const other = new DashboardClient();
    expect((await signInForm(other, email, PASSWORD)).status).toBe(303);
    expect((await other.get("/console")).status).toBe(200);

    const newPassword = "another quite long passphrase";
    const changed = await client.submit("/console/security", "/console/security/password", {
      current_password: PASSWORD,
      new_password: newPassword,
    });
    expect(location(changed)).toBe("/console/security?done=password");
    expect((await client.get("/console")).status).toBe(200);
    expect(location(await other.get("/console"))).toBe("/console/sign-in");

    const third = new DashboardClient();
    expect((await signInForm(third, email, newPassword)).status).toBe(303);
    const out = await client.submit("/console/security", "/console/sign-out-everywhere");
    expect(location(out)).toBe("/console/sign-in");
    expect(location(await client.get("/console/keys"))).toBe("/console/sign-in?next=%2Fconsole%2Fkeys");
    expect(location(await third.get("/console"))).toBe("/console/sign-in");
  });
});
