import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { ConsoleEnv, CspAdditions } from "./context";

/**
 * Lets this response's page use more than the console's strict policy (src/ui/security-headers.ts: scripts and
 * styles by nonce only, nothing fetched): the password meter asks the server (connect-src 'self'), the proof of
 * work runs in workers (worker-src 'self'), Turnstile loads and frames challenges.cloudflare.com.
 */
export function allowInCsp(c: Context<ConsoleEnv>, additions: CspAdditions) {
  const current = c.get("cspAdditions") ?? {};
  for (const [directive, sources] of Object.entries(additions) as [keyof CspAdditions, string[]][])
    current[directive] = [...new Set([...(current[directive] ?? []), ...sources])];
  c.set("cspAdditions", current);
}

/** Adds the page's sources to the policy the security headers set. Runs outside them (registered first). */
export const extendCsp = createMiddleware<ConsoleEnv>(async (c, next) => {
  await next();
  const additions = c.get("cspAdditions");
  const policy = c.res.headers.get("Content-Security-Policy");
  if (!additions || !policy) return;
  const directives = policy.split(";").map((d) => d.trim());
  for (const [name, sources] of Object.entries(additions)) {
    const at = directives.findIndex((d) => d === name || d.startsWith(`${name} `));
    if (at >= 0) directives[at] = `${directives[at]} ${sources.join(" ")}`;
    else directives.push(`${name} ${sources.join(" ")}`);
  }
  c.res.headers.set("Content-Security-Policy", directives.join("; "));
});
