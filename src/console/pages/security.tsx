import type { Context, Hono } from "hono";
import { countUserSessions, endSession, endUserSessions } from "../../sessions/store";
import { Field, Notice, PostForm, Table, Time } from "../../ui/components";
import { notFound } from "../../ui/error-page";
import { type FieldErrors, text } from "../../ui/forms";
import { addPasskey, listPasskeys, registrationOptions, removePasskey } from "../../users/passkeys";
import { passwordProblem } from "../../users/password";
import { checkPassword, setPassword } from "../../users/service";
import type { ConsoleEnv } from "../context";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";
import { relyingParty } from "../rp";
import { clearSessionCookie, setChallenge, takeChallenge } from "../session";
import { PasskeyForm } from "../views/passkey-form";
import { allowPasswordStrength, PasswordStrength } from "../views/password-strength";

type Ctx = Context<ConsoleEnv>;

const DONE: Record<string, string> = {
  password: "Password changed. Every other session was signed out.",
  passkey: "Passkey added. You can sign in with it from now on.",
  removed: "Passkey removed.",
  reset: "Password reset. Every other session was signed out.",
};

async function securityPage(
  c: Ctx,
  state: { passwordErrors?: FieldErrors; passkeyError?: string; status?: 200 | 400 } = {},
) {
  const user = c.get("user");
  const db = c.get("db");
  const [keys, sessionCount, options] = await Promise.all([
    listPasskeys(db, user.id),
    countUserSessions(db, user.id, Date.now()),
    registrationOptions(db, relyingParty(c), user),
  ]);
  setChallenge(c, options.challenge);
  allowPasswordStrength(c);
  const done = c.req.query("done");
  return renderConsole(
    c,
    { title: "Security", tab: "security", status: state.status ?? 200 },
    <>
      <h1>Security</h1>
      {done && Object.hasOwn(DONE, done) ? <Notice kind="ok">{DONE[done]}</Notice> : null}
      <div class="grid">
        <section class="panel">
          <h2>Password</h2>
          {state.passwordErrors?.form ? <Notice kind="error">{state.passwordErrors.form}</Notice> : null}
          <PostForm action={consolePaths.password} class="stack">
            <Field
              label="Current password"
              name="current_password"
              type="password"
              errors={state.passwordErrors}
              required
              autocomplete="current-password"
            />
            <Field
              label="New password"
              name="new_password"
              type="password"
              hint="At least 12 characters and hard to guess. Changing it signs out every other session."
              errors={state.passwordErrors}
              required
              autocomplete="new-password"
            />
            <PasswordStrength field="field-new_password" email={user.email} />
            <button type="submit">Change password</button>
          </PostForm>
        </section>
        <section class="panel">
          <h2>Sessions</h2>
          <p>
            Signed in in {sessionCount} place{sessionCount === 1 ? "" : "s"}, this one included.
          </p>
          <PostForm action={consolePaths.signOutEverywhere}>
            <button type="submit" class="danger">
              Sign out everywhere
            </button>
          </PostForm>
        </section>
      </div>
      <section class="panel">
        <h2>Passkeys</h2>
        <Table
          empty="No passkeys yet."
          columns={[{ label: "Name" }, { label: "Created" }, { label: "Last used" }, { label: "" }]}
          rows={keys.map((key) => ({
            id: key.id,
            cells: [
              key.name,
              <Time ms={key.createdAt} />,
              <Time ms={key.lastUsedAt} empty="never" />,
              <PostForm action={consolePaths.removePasskey(key.id)} class="inline">
                <button type="submit" class="secondary" aria-label={`Remove ${key.name}`}>
                  Remove
                </button>
              </PostForm>,
            ],
          }))}
        />
        {state.passkeyError ? <Notice kind="error">{state.passkeyError}</Notice> : null}
        <PasskeyForm action={consolePaths.passkeys} mode="register" options={options} button="Add a passkey">
          <Field label="Passkey name" name="name" hint="To tell it apart, e.g. “work laptop”." value="" />
        </PasskeyForm>
      </section>
    </>,
  );
}

export function registerSecurityPages(app: Hono<ConsoleEnv>) {
  app.get("/security", (c) => securityPage(c));

  app.post("/security/password", async (c) => {
    const user = c.get("user");
    const form = c.get("form");
    const current = text(form, "current_password").slice(0, 1024);
    const next = text(form, "new_password");
    if (!(await checkPassword(user, current))) {
      return securityPage(c, {
        status: 400,
        passwordErrors: { current_password: "That is not your password." },
      });
    }
    const problem = passwordProblem(next, user.email);
    if (problem) return securityPage(c, { status: 400, passwordErrors: { new_password: problem } });
    await setPassword(c.get("db"), user.id, next);
    await endUserSessions(c.get("db"), user.id, c.get("sessionId"));
    return c.redirect(`${consolePaths.security}?done=password`, 303);
  });

  app.post("/security/passkeys", async (c) => {
    const challenge = takeChallenge(c);
    const form = c.get("form");
    const name = text(form, "name").trim().slice(0, 100) || "Passkey";
    let response: unknown = null;
    try {
      response = JSON.parse(text(form, "response"));
    } catch {}
    const added =
      challenge && response && typeof response === "object"
        ? await addPasskey(
            c.get("db"),
            relyingParty(c),
            c.get("user"),
            { response: response as Parameters<typeof addPasskey>[3]["response"], challenge, name },
            Date.now(),
          )
        : false;
    if (!added)
      return securityPage(c, { status: 400, passkeyError: "The passkey could not be added. Try again." });
    return c.redirect(`${consolePaths.security}?done=passkey`, 303);
  });

  app.post("/security/passkeys/:id/remove", async (c) => {
    if (!(await removePasskey(c.get("db"), c.get("user").id, c.req.param("id"))))
      throw notFound("This passkey");
    return c.redirect(`${consolePaths.security}?done=removed`, 303);
  });
}

/** Sign out (this session) and sign out everywhere (every session of the user). */
export function registerSignOut(app: Hono<ConsoleEnv>) {
  app.post("/sign-out", async (c) => {
    await endThisSession(c);
    clearSessionCookie(c);
    return c.redirect(consolePaths.signIn, 303);
  });
  app.post("/sign-out-everywhere", async (c) => {
    await endUserSessions(c.get("db"), c.get("user").id);
    clearSessionCookie(c);
    return c.redirect(consolePaths.signIn, 303);
  });
}

async function endThisSession(c: Ctx) {
  await endSession(c.get("db"), c.get("sessionId"));
}
