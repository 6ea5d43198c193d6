import type { Context, Hono } from "hono";
import { OPERATOR_THROTTLE, operatorRetryAfter, recordOperatorFailure } from "../../auth/operator-throttle";
import { digestsEqual, hashSecret } from "../../auth/token";
import { Notice, PostForm } from "../../ui/components";
import { text } from "../../ui/forms";
import { query } from "../../ui/query-string";
import type { DashboardEnv } from "../context";
import {
  adminToken,
  clearCookie,
  LOGIN_COOKIE,
  readLoginSession,
  readOperatorSession,
  SESSION_COOKIE,
  setSessionCookie,
  verifyForm,
} from "../middleware";
import { paths, safeNext } from "../paths";
import { render } from "../render";
import { csrfToken, newLoginSession, sealSession, startOperatorSession } from "../session";

function SignIn(props: { next?: string; error?: string }) {
  return (
    <div class="login panel">
      <h1>Sign in</h1>
      <p class="muted">Operators sign in with the deployment's admin token (ADMIN_TOKEN).</p>
      {props.error ? <Notice kind="error">{props.error}</Notice> : null}
      <PostForm action={`${paths.login}${query({ next: props.next })}`} class="stack">
        <label for="token">
          Admin token
          <input id="token" name="token" type="password" required autocomplete="current-password" />
        </label>
        <button type="submit">Sign in</button>
      </PostForm>
    </div>
  );
}

/**
 * The sign-in form is protected like every other form: it carries the CSRF token of a short-lived signed
 * pre-session, kept in a cookie that only the sign-in path receives.
 */
async function showSignIn(c: Context<DashboardEnv>, status: 200 | 401 | 403 | 429, error?: string) {
  let pre = await readLoginSession(c);
  if (!pre) {
    pre = newLoginSession(Date.now());
    setSessionCookie(c, LOGIN_COOKIE, await sealSession(adminToken(c), pre), pre);
  }
  c.set("csrf", await csrfToken(adminToken(c), pre));
  const next = c.req.query("next");
  return render(c, "Sign in", <SignIn next={next ? safeNext(next) : undefined} error={error} />, status);
}

export function registerSignIn(app: Hono<DashboardEnv>) {
  app.get("/login", async (c) => {
    if (await readOperatorSession(c)) return c.redirect(safeNext(c.req.query("next")), 303);
    return showSignIn(c, 200);
  });

  app.post("/login", verifyForm(readLoginSession), async (c) => {
    // Throttled like customer sign-in, before the token is looked at (auth/operator-throttle.ts).
    const retryAfter = await operatorRetryAfter(c);
    if (retryAfter !== null) {
      c.header("Retry-After", String(retryAfter));
      return showSignIn(
        c,
        429,
        `Too many wrong tokens from this address (${OPERATOR_THROTTLE.failures} in ${OPERATOR_THROTTLE.windowMinutes} minutes). Try again in ${Math.ceil(retryAfter / 60)} minute${retryAfter > 60 ? "s" : ""}.`,
      );
    }
    // Compared as digests: constant time, and the lengths leak nothing.
    const [presented, wanted] = await Promise.all([
      hashSecret(text(c.get("form"), "token").trim()),
      hashSecret(adminToken(c)),
    ]);
    if (!digestsEqual(presented, wanted)) {
      await recordOperatorFailure(c);
      return showSignIn(c, 401, "That is not the admin token.");
    }
    const { token, session } = await startOperatorSession(c.get("db"), adminToken(c), Date.now());
    setSessionCookie(c, SESSION_COOKIE, token, session);
    clearCookie(c, LOGIN_COOKIE);
    return c.redirect(safeNext(c.req.query("next")), 303);
  });
}
