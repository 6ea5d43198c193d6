import type { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { clientThrottleKey } from "../../http/client-key";
import { passwordProblem } from "../../users/password";
import { normalizeEmail } from "../../users/service";
import { type Rule, takeSlot } from "../../users/throttle";
import type { ConsoleEnv } from "../context";

/**
 * Estimates a client may ask for: twice a second on average. Each costs up to tens of milliseconds of CPU
 * (docs/console.md "Passwords"), and the meter asks at most once per pause in typing.
 */
const ESTIMATES: Rule = { limit: 120, windowSeconds: 60 };

/**
 * POST /console/password-strength {password, email?} → {acceptable, message}: the password meter's question,
 * answered by the very check sign-up, reset and change run (passwordProblem). JSON only, so a page of another
 * origin cannot send it without a CORS preflight this never answers; it changes nothing, so it needs no CSRF
 * token and works before sign-in. The password is neither stored nor logged.
 */
export function registerPasswordStrength(app: Hono<ConsoleEnv>) {
  app.post(
    "/password-strength",
    bodyLimit({ maxSize: 4096, onError: (c) => c.json({ message: "At most 4 KiB." }, 413) }),
    async (c) => {
      if (!/^application\/json\b/i.test(c.req.header("content-type") ?? ""))
        return c.json({ message: "Send the password as JSON." }, 415);
      const slot = await takeSlot(
        c.env,
        { subject: `strength:${clientThrottleKey(c)}`, rule: ESTIMATES },
        Date.now(),
      );
      if (slot.blocked) {
        c.header("Retry-After", String(slot.retryAfterSeconds));
        return c.json({ message: "Too many checks; the form still checks when you submit." }, 429);
      }
      const body = (await c.req.json().catch(() => null)) as { password?: unknown; email?: unknown } | null;
      const password = typeof body?.password === "string" ? body.password : "";
      const email =
        typeof body?.email === "string" && body.email !== "" ? normalizeEmail(body.email) : undefined;
      const problem = passwordProblem(password, email);
      return c.json({ acceptable: problem === null, message: problem ?? "Hard to guess: good." });
    },
  );
}
