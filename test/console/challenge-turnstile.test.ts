import { createExecutionContext, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { clientKey } from "../../src/http/client-key";
import { TURNSTILE_VERIFY_URL } from "../../src/users/challenge";
import { signIn } from "../../src/users/service";
import { SIGN_IN_PAIR } from "../../src/users/throttle";
import { csrfOf, DashboardClient } from "../dashboard/client";
import { BASE, db } from "../helpers/api";
import { clientAt, PASSWORD, signedUp } from "./support";

/**
 * The Turnstile branch of the sign-in challenge (docs/console.md "Throttles"): with TURNSTILE_SITE_KEY and
 * TURNSTILE_SECRET_KEY set, the page shows Turnstile's widget and the answer is checked with its siteverify,
 * played here by a stand-in for Cloudflare's endpoint (the public internet lies outside the system).
 */

const TURNSTILE = {
  TURNSTILE_SITE_KEY: "1x00000000000000000000AA",
  TURNSTILE_SECRET_KEY: "turnstile-secret",
};

afterEach(() => vi.restoreAllMocks());

describe("Turnstile instead of the proof of work", () => {
  it("shows Turnstile's widget, and only a token siteverify vouches for signs in", async () => {
    const asked: Record<string, string>[] = [];
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const request = new Request(input, init);
      if (request.url !== TURNSTILE_VERIFY_URL) return realFetch(request);
      const form = Object.fromEntries((await request.formData()).entries()) as Record<string, string>;
      asked.push(form);
      return Response.json({
        success: form.response === "a-good-token" && form.secret === "turnstile-secret",
      });
    });
    const app = createApp();
    const turnstileEnv = { ...env, ...TURNSTILE } as Env;
    const address = "2001:db8:77:1::5";
    const client = new DashboardClient(BASE, async (request) =>
      app.fetch(request, turnstileEnv, createExecutionContext()),
    );
    client.defaults["CF-Connecting-IP"] = address;
    const { email } = await signedUp(undefined, clientAt());
    for (let i = 0; i < SIGN_IN_PAIR.challengeFrom; i++)
      await signIn(
        db(),
        env,
        { email, password: "wrong", clientAddress: clientKey(address), passes: async () => false },
        Date.now(),
      );

    const page = await (await client.get("/console/sign-in")).text();
    const send = (extra: Record<string, string>) =>
      client.post("/console/sign-in", { _csrf: csrfOf(page), email, password: PASSWORD, ...extra });
    const unsolved = await send({});
    expect(unsolved.status).toBe(403);
    const html = await unsolved.text();
    expect(html).toContain(`class="cf-turnstile" data-sitekey="${TURNSTILE.TURNSTILE_SITE_KEY}"`);
    expect(html).not.toContain("<altcha-widget");
    const csp = unsolved.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/script-src [^;]*https:\/\/challenges\.cloudflare\.com/);
    expect(csp).toMatch(/frame-src [^;]*https:\/\/challenges\.cloudflare\.com/);
    expect(asked).toEqual([]); // no token, nothing asked

    expect((await send({ "cf-turnstile-response": "a-bad-token" })).status).toBe(403);
    const signedIn = await send({ "cf-turnstile-response": "a-good-token" });
    expect(signedIn.status).toBe(303);
    expect(asked).toEqual([
      { secret: "turnstile-secret", response: "a-bad-token", remoteip: address },
      { secret: "turnstile-secret", response: "a-good-token", remoteip: address },
    ]);
  });
});
