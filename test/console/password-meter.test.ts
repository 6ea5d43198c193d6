import { describe, expect, it } from "vitest";
import { call } from "../helpers/api";

/**
 * The password meter's endpoint (issue 40): the very check sign-up, reset and change run, answered as the user
 * types. JSON only, changes nothing, limited per client.
 */

let n = 0;
const ask = (body: unknown, headers: Record<string, string> = {}) =>
  call("/console/password-strength", {
    method: "POST",
    headers: { "CF-Connecting-IP": `2001:db8:99:${++n}::1`, ...headers },
    json: body,
  });

describe("POST /console/password-strength", () => {
  it.each([
    ["Summer2026!!", false, /^Too easy to guess\./],
    ["monkey dragon", false, /^Too easy to guess\./],
    ["short", false, /^At least 12 characters\./],
    ["plum kettle orbit sandal", true, /^Hard to guess: good\.$/],
  ])("%s", async (password, acceptable, message) => {
    const response = await ask({ password });
    expect(response.status).toBe(200);
    const verdict = (await response.json()) as { acceptable: boolean; message: string };
    expect(verdict.acceptable).toBe(acceptable);
    expect(verdict.message).toMatch(message);
  });

  it("judges with the email, as the form does", async () => {
    const verdict = (await (
      await ask({ password: "rosalind.franklin", email: "Rosalind.Franklin@example.com" })
    ).json()) as {
      acceptable: boolean;
    };
    expect(verdict.acceptable).toBe(false);
  });

  it("JSON only: a form post (which another site could send) is 415", async () => {
    const response = await call("/console/password-strength", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "password=plum+kettle+orbit+sandal",
    });
    expect(response.status).toBe(415);
  });

  it("120 checks a minute per client, then 429 with Retry-After", async () => {
    const headers = { "CF-Connecting-IP": "2001:db8:98:1::1" };
    const statuses = await Promise.all(
      Array.from({ length: 125 }, (_, i) =>
        ask({ password: `x${i}` }, { "CF-Connecting-IP": `2001:db8:98:1::${(i + 1).toString(16)}` }).then(
          (r) => r.status,
        ),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(120);
    const refused = await ask({ password: "x" }, headers);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
