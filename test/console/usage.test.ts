import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call } from "../helpers/api";
import { signedUp } from "./support";

const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function accountOf(email: string) {
  const row = await env.DB.prepare("SELECT account_id FROM users WHERE email = ?")
    .bind(email.toLowerCase())
    .first<{ account_id: string }>();
  return row!.account_id;
}

async function charge(accountId: string, operation: string, credits: number, at: number) {
  await env.DB.prepare(
    `INSERT INTO credit_ledger (id, account_id, kind, amount, balance_after, reason, created_at)
     VALUES (?, ?, 'charge', ?, 0, ?, ?)`,
  )
    .bind(crypto.randomUUID(), accountId, -credits, operation, at)
    .run();
}

describe("console usage page", () => {
  it("shows credits per day and operation as an SVG chart and tables, the numbers GET /v1/usage gives", async () => {
    const { client, email, key } = await signedUp();
    const accountId = await accountOf(email);
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    // Three days, two operations; one charge 40 days ago, outside the default 30 days.
    const charges: [string, number, number][] = [
      ["image.watermark", 3, today + 1000],
      ["image.watermark", 3, today + 2000],
      ["video.trim", 7, today - DAY_MS + 5000],
      ["video.probe", 1, today - 5 * DAY_MS + 5000],
      ["video.trim", 11, today - 40 * DAY_MS],
    ];
    for (const [op, credits, at] of charges) await charge(accountId, op, credits, at);
    // Another account's charge today must not show.
    const other = await signedUp();
    await charge(await accountOf(other.email), "audio.extract", 99, today + 1000);

    const response = await client.get("/console/usage");
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('aria-current="page">Usage</a>');
    expect(html).toContain("14 credits in 30 days"); // 3 + 3 + 7 + 1, from the charges above
    expect(html).not.toContain("audio.extract");
    // One stacked segment per (day, operation) with billed work in the range.
    const segments = [
      ...html.matchAll(
        /<rect x="[^"]+" y="[^"]+" width="[^"]+" height="[^"]+" fill="[^"]+"><title>([^<]+)<\/title>/g,
      ),
    ].map((m) => m[1]);
    expect(segments.sort()).toEqual(
      [
        `${day(today - 5 * DAY_MS)} video.probe: 1×, 1 credits`,
        `${day(today - DAY_MS)} video.trim: 1×, 7 credits`,
        `${day(today)} image.watermark: 2×, 6 credits`,
      ].sort(),
    );

    // The API's answer for the same range has the same rows.
    const from = day(today - 29 * DAY_MS);
    const api = await call(`/v1/usage?from=${from}&to=${day(today)}`, { key });
    expect(api.status).toBe(200);
    const body = (await api.json()) as { results: { date: string; operation: string; credits: number }[] };
    expect(body.results).toHaveLength(3);
    for (const r of body.results) {
      expect(html).toContain(
        `<td data-label="Day">${r.date}</td><td data-label="Operation">${r.operation}</td>`,
      );
    }
    expect(body.results.reduce((s, r) => s + r.credits, 0)).toBe(14);

    const ninety = await (await client.get("/console/usage?days=90")).text();
    expect(ninety).toContain("25 credits in 90 days");
    const empty = await (await other.client.get("/console/usage?days=7")).text();
    expect(empty).toContain("99 credits in 7 days");
    expect((await client.get("/console/usage?days=bogus")).status).toBe(200);
  });
});
