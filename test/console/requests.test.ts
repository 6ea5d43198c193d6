import { createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { requestLogFor } from "../../src/requests/log";
import type { RequestLog } from "../../src/requests/request-log";
import { record } from "../helpers/answers";
import { BASE, newKey } from "../helpers/api";
import { signedUp } from "./support";

/** An API request through the app, waiting for its waitUntil work (the log row) before returning. */
async function api(path: string, key: string, init: RequestInit = {}) {
  const ctx = createExecutionContext();
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${key}`);
  const request = new Request(`${BASE}${path}`, { ...init, headers });
  const response = record(request, await createApp().fetch(request, env, ctx));
  await waitOnExecutionContext(ctx);
  return { status: response.status, requestId: response.headers.get("x-request-id")! };
}

const accountOf = async (email: string) =>
  (await env.DB.prepare("SELECT account_id FROM users WHERE email = ?")
    .bind(email.toLowerCase())
    .first<{ account_id: string }>())!.account_id;

/** Every row of an account's log as its object's SQLite holds it, oldest first. */
const storedRows = (accountId: string) =>
  runInDurableObject(requestLogFor(env, accountId), (_instance: RequestLog, state) =>
    state.storage.sql.exec<Record<string, SqlStorageValue>>("SELECT * FROM requests ORDER BY id").toArray(),
  );

const countOf = async (accountId: string) => (await storedRows(accountId)).length;

/** The request ids listed in a request-log page's table rows. */
const listedIds = (html: string) => [...html.matchAll(/<tr data-id="([0-9A-Z]{26})"/g)].map((m) => m[1]);

const UNKNOWN_TASK = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

describe("console request log", () => {
  it("lists a request made with the key: time, key, method, route pattern, status, error, request_id", async () => {
    const { client, key, email } = await signedUp();
    const ok = await api("/v1/tasks?status=succeeded&limit=5", key);
    const missing = await api(`/v1/tasks/${UNKNOWN_TASK}`, key);
    expect(ok.status).toBe(200);
    expect(missing.status).toBe(404);

    const page = await client.get("/console/requests");
    expect(page.status).toBe(200);
    const html = await page.text();
    // Newest first, each by the request_id its response carried.
    expect(listedIds(html)).toEqual([missing.requestId, ok.requestId]);
    const row = (id: string) => html.slice(html.indexOf(`<tr data-id="${id}"`)).split("</tr>")[0]!;
    const keyId = key.slice(3, key.indexOf(":"));
    expect(row(missing.requestId)).toContain(`p6_${keyId}`);
    expect(row(missing.requestId)).toContain("/v1/tasks/:id");
    expect(row(missing.requestId)).toContain(">404<");
    expect(row(missing.requestId)).toContain("not-found");
    expect(row(ok.requestId)).toContain(">GET<");
    expect(row(ok.requestId)).toContain(">200<");
    // The route pattern only: neither the task id of the path nor the query string is kept.
    expect(html).not.toContain(UNKNOWN_TASK);
    expect(html).not.toContain("limit=5");
    const stored = JSON.stringify(await storedRows(await accountOf(email)));
    expect(stored).toContain(keyId);
    expect(stored).not.toContain(key.split(":")[1]);
    expect(stored).not.toContain(UNKNOWN_TASK);
    expect(stored).not.toContain("limit");
  });

  it("filters by status class and by key; a scope refusal is logged, an unknown key is not", async () => {
    const { client, key, email } = await signedUp();
    const accountId = await accountOf(email);
    const reader = await newKey(accountId, { name: "reader", scopes: ["read"] });
    const readerId = reader.slice(3, reader.indexOf(":"));
    const a = await api("/v1/tasks", key);
    const b = await api(`/v1/tasks/${UNKNOWN_TASK}`, reader);
    const forbidden = await api("/v1/tasks/00000000000000000000000000/cancel", reader, { method: "POST" });
    expect([a.status, b.status, forbidden.status]).toEqual([200, 404, 403]);
    const stranger = await api("/v1/tasks", `p6_${readerId}:wrong-secret-wrong-secret-wrong`);
    expect(stranger.status).toBe(401);

    const ids = async (q: string) => listedIds(await (await client.get(`/console/requests${q}`)).text());
    expect(await ids("")).toEqual([forbidden.requestId, b.requestId, a.requestId]);
    expect(await ids("?status=2xx")).toEqual([a.requestId]);
    expect(await ids("?status=4xx")).toEqual([forbidden.requestId, b.requestId]);
    expect(await ids("?status=5xx")).toEqual([]);
    expect(await ids(`?key=${readerId}`)).toEqual([forbidden.requestId, b.requestId]);
    expect(await ids(`?key=${readerId}&status=2xx`)).toEqual([]);
    const html = await (await client.get("/console/requests?status=4xx")).text();
    expect(html).toContain("authorization");
    expect(await countOf(accountId)).toBe(3);
  });

  it("never shows another account's requests, even when filtered by that account's key", async () => {
    const first = await signedUp();
    const seen = await api("/v1/tasks", first.key);
    const firstKeyId = first.key.slice(3, first.key.indexOf(":"));
    const second = await signedUp();
    const own = await api("/v1/tasks", second.key);
    for (const q of ["", "?status=2xx", `?key=${firstKeyId}`]) {
      const html = await (await second.client.get(`/console/requests${q}`)).text();
      expect(listedIds(html), q).toEqual([own.requestId]);
      expect(html, q).not.toContain(seen.requestId);
      expect(html, q).not.toContain(firstKeyId);
    }
  });

  it("logs every one of many requests at once, each once (an isolate sends them to the account's log together)", async () => {
    const { key, email } = await signedUp();
    const accountId = await accountOf(email);
    const made = await Promise.all(Array.from({ length: 12 }, () => api("/v1/tasks", key)));
    const ids = made.map((m) => m.requestId).sort();
    expect(new Set(ids).size).toBe(12);
    expect((await storedRows(accountId)).map((r) => r.id)).toEqual(ids);
  });

  it("keeps the newest 1,000 rows per account, and no other account's rows are trimmed", async () => {
    const { client, key, email } = await signedUp();
    const accountId = await accountOf(email);
    const otherAccount = await accountOf((await signedUp()).email);
    // 1,000 old rows (ids below any real request_id) for this account, 5 for the other, through the object's
    // own write path.
    const seed = (account: string, n: number, tag: string) =>
      runInDurableObject(requestLogFor(env, account), (log: RequestLog) =>
        log.record(
          Array.from({ length: n }, (_, k) => ({
            id: `0000000000000000000${tag}${String(k + 1).padStart(6, "0")}`,
            keyId: "seed",
            method: "GET",
            route: "/v1/tasks",
            status: 200,
            durationMs: 1,
            errorCode: null,
            createdAt: k + 1,
          })),
        ),
      );
    await seed(accountId, 1000, "A");
    await seed(otherAccount, 5, "B");
    expect(await countOf(accountId)).toBe(1000);

    const made = [];
    for (let i = 0; i < 3; i++) made.push((await api("/v1/tasks", key)).requestId);
    const rows = await storedRows(accountId);
    expect(rows).toHaveLength(1000);
    // The 3 oldest seeds went; the 4th oldest is now the oldest.
    expect(rows[0]!.id).toBe("0000000000000000000A000004");
    expect(rows.slice(-3).map((r) => r.id)).toEqual(made);
    expect(await countOf(otherAccount)).toBe(5);
    expect(listedIds(await (await client.get("/console/requests")).text()).slice(0, 3)).toEqual(
      made.reverse(),
    );
  });

  it("pages through the log by cursor, 50 a page, newest first, with the filter kept", async () => {
    const { client, key, email } = await signedUp();
    const accountId = await accountOf(email);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await api(`/v1/tasks/${UNKNOWN_TASK}`, key)).requestId);
    // 120 rows besides, older than the three: 2xx and 4xx alternating.
    await runInDurableObject(requestLogFor(env, accountId), (log: RequestLog) =>
      log.record(
        Array.from({ length: 120 }, (_, k) => ({
          id: `00000000000000000000${String(k + 1).padStart(6, "0")}`,
          keyId: "seed",
          method: "GET",
          route: "/v1/tasks",
          status: (k + 1) % 2 === 0 ? 200 : 404,
          durationMs: 1,
          errorCode: (k + 1) % 2 === 0 ? null : "not-found",
          createdAt: k + 1,
        })),
      ),
    );
    const seen: string[] = [];
    let path: string | undefined = "/console/requests?status=4xx";
    while (path) {
      const html: string = await (await client.get(path)).text();
      const ids = listedIds(html);
      expect(ids.length).toBeLessThanOrEqual(50);
      seen.push(...(ids as string[]));
      const next: string | undefined = /<a[^>]*href="([^"]*cursor=[^"]*)"[^>]*>[^<]*Next/i.exec(html)?.[1];
      path = next?.replaceAll("&amp;", "&");
    }
    const seeded4xx = Array.from({ length: 60 }, (_, k) => 120 - 1 - 2 * k).map(
      (i) => `00000000000000000000${String(i).padStart(6, "0")}`,
    );
    expect(seen).toEqual([...made.reverse(), ...seeded4xx]);
  });
});
