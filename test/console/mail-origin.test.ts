import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { listMailbox } from "../../src/mail/mailbox";
import { DashboardClient } from "../dashboard/client";
import { BASE } from "../helpers/api";
import { signedUp } from "./support";

/** Issue 40: reset and verify links were built from the request's Host header. */

let prefixes = 0;
/** A /64 of its own for each test (the documentation prefix 2001:db8::/32). */
const newPrefix = () =>
  `2001:db8:${(0xa100 + ++prefixes).toString(16)}:${(Date.now() % 0xffff).toString(16)}`;

describe("mail links come from the configured public origin", () => {
  it("POST /console/reset with Host: evil.example mails a link to PUBLIC_ORIGIN", async () => {
    const { email } = await signedUp();
    // What a Worker behind `Host: evil.example` sees: every URL of the request on that host.
    const attacker = new DashboardClient("http://evil.example", (request) => exports.default.fetch(request));
    attacker.defaults["CF-Connecting-IP"] = `${newPrefix()}::1`;
    const asked = await attacker.submit("/console/reset", "/console/reset", { email });
    expect(asked.status).toBe(303);
    let mail: Awaited<ReturnType<typeof listMailbox>>[number] | undefined;
    for (let i = 0; i < 60 && !mail; i++) {
      mail = (await listMailbox(env, { to: email.toLowerCase() })).find((m) => /Reset/.test(m.subject));
      if (!mail) await new Promise((r) => setTimeout(r, 50));
    }
    expect(mail).toBeDefined();
    const links = [...`${mail!.text} ${mail!.html}`.matchAll(/https?:\/\/[^\s"<#]+/g)].map((m) => m[0]);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(new URL(link).origin).toBe(BASE);
    expect(mail!.text).not.toContain("evil.example");
    expect(mail!.html).not.toContain("evil.example");
  });
});
