import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { csrfOf, DashboardClient } from "../dashboard/client";
import { ADMIN_TOKEN, BASE, problem, send } from "../helpers/api";

/**
 * Guessing ADMIN_TOKEN is throttled like customer sign-in (issue 13): 10 wrong tokens per client address in
 * 15 minutes, through the admin API and the dashboard's sign-in alike; then that address is refused, even with
 * the right token, while other addresses are not.
 */

let n = 0;
const address = () => `198.51.100.${++n}`;

function adminCall(ip: string, token: string) {
  return send(
    new Request(`${BASE}/admin/v1/accounts`, {
      headers: { Authorization: `Bearer ${token}`, "CF-Connecting-IP": ip },
    }),
  );
}

describe("the admin API", () => {
  it("10 wrong tokens → 401 each; the 11th attempt, right token or not → 429 with Retry-After", async () => {
    const ip = address();
    for (let i = 0; i < 10; i++) expect((await adminCall(ip, `wrong-${i}`)).status).toBe(401);
    for (const token of ["wrong-again", ADMIN_TOKEN]) {
      const refused = await adminCall(ip, token);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(800);
      const body = await problem(refused);
      expect(body.code).toBe("RATE_LIMIT_EXCEEDED");
      expect(body.detail).toMatch(/^Too many wrong admin tokens from this address \(10 in 15 minutes\)/);
    }
    // Another address is not affected.
    expect((await adminCall(address(), ADMIN_TOKEN)).status).toBe(200);
  });

  it("the right token does not count, and requests without a token are not guesses", async () => {
    const ip = address();
    for (let i = 0; i < 12; i++) expect((await adminCall(ip, ADMIN_TOKEN)).status).toBe(200);
    for (let i = 0; i < 12; i++) {
      const response = await send(
        new Request(`${BASE}/admin/v1/accounts`, { headers: { "CF-Connecting-IP": ip } }),
      );
      expect(response.status).toBe(401);
    }
    expect((await adminCall(ip, ADMIN_TOKEN)).status).toBe(200);
  });
});

describe("the dashboard's sign-in", () => {
  /** A browser whose requests come from `ip`. */
  const browserAt = (ip: string) =>
    new DashboardClient(BASE, (request) => {
      request.headers.set("CF-Connecting-IP", ip);
      return exports.default.fetch(request);
    });

  async function signIn(client: DashboardClient, token: string) {
    const page = await client.get("/dashboard/login");
    return client.post("/dashboard/login", { _csrf: csrfOf(await page.text()), token });
  }

  it("10 wrong tokens → the form says so; then refused with a page message, even with the right token", async () => {
    const ip = address();
    const client = browserAt(ip);
    for (let i = 0; i < 10; i++) expect((await signIn(client, `wrong-${i}`)).status).toBe(401);
    const refused = await signIn(client, ADMIN_TOKEN);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(800);
    expect(await refused.text()).toContain("Too many wrong tokens from this address (10 in 15 minutes)");
    expect(client.cookies.has("p6_dashboard")).toBe(false);
    // The right token from elsewhere signs in.
    expect((await signIn(browserAt(address()), ADMIN_TOKEN)).status).toBe(303);
  });

  it("the dashboard and the admin API count against one budget", async () => {
    const ip = address();
    for (let i = 0; i < 5; i++) expect((await adminCall(ip, `wrong-${i}`)).status).toBe(401);
    const client = browserAt(ip);
    for (let i = 0; i < 5; i++) expect((await signIn(client, `wrong-${i}`)).status).toBe(401);
    expect((await adminCall(ip, ADMIN_TOKEN)).status).toBe(429);
    expect((await signIn(client, ADMIN_TOKEN)).status).toBe(429);
  });
});
