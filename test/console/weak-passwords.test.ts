import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { clientAt, newEmail } from "./support";

/** Issue 40: passwords an attacker guesses first were accepted by the estimator. */

let prefixes = 0;
/** A /64 of its own for each test (the documentation prefix 2001:db8::/32). */
const newPrefix = () =>
  `2001:db8:${(0xa200 + ++prefixes).toString(16)}:${(Date.now() % 0xffff).toString(16)}`;

describe("passwords an attacker guesses first are refused", () => {
  it.each(["Summer2026!!", "monkey dragon"])("%s is refused at sign-up", async (password) => {
    const email = newEmail();
    const response = await clientAt(`${newPrefix()}::1`).submit("/console/sign-up", "/console/sign-up", {
      email,
      password,
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("Too easy to guess.");
    const made = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE email = ?")
      .bind(email.toLowerCase())
      .first<{ n: number }>();
    expect(made!.n).toBe(0);
  });
});
