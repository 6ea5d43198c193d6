import type { Context, Hono } from "hono";
import { resetMail, verificationMail } from "../../mail/messages";
import { type Mail, sendMail } from "../../mail/send";
import { createSession } from "../../sessions/store";
import { Field, Notice, PostForm } from "../../ui/components";
import { type FieldErrors, text } from "../../ui/forms";
import { issueEmailToken } from "../../users/email-tokens";
import { passwordProblem } from "../../users/password";
import { normalizeEmail } from "../../users/service";
import { takeResetSlot, takeVerifySlot } from "../../users/throttle";
import { resetPassword, userForReset, verifyEmail } from "../../users/verification";
import type { ConsoleEnv } from "../context";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";
import { clientAddress } from "../rp";
import { preparePreSession, setSessionCookie, verifyPreSessionForm } from "../session";
import { allowPasswordStrength, PasswordStrength } from "../views/password-strength";

type Ctx = Context<ConsoleEnv>;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const minutes = (seconds: number) => Math.max(1, Math.ceil(seconds / 60));
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** What every refused link is told, whatever the reason (malformed, unknown, expired, used). */
const BAD_LINK = "This link does not work: it is mistyped, was used already, or expired.";

/**
 * The link's token arrives in the URL fragment, which the browser never sends: this moves it into the form's
 * field and drops it from the address bar (and so from history). Without script the field takes the mail's code.
 */
const TOKEN_SCRIPT = `(() => {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  const field = document.getElementById("field-token");
  if (m && field && !field.value) field.value = decodeURIComponent(m[1]);
  if (m) history.replaceState(null, "", location.pathname + location.search);
})();`;

function TokenScript(props: { nonce: string }) {
  return <script nonce={props.nonce} dangerouslySetInnerHTML={{ __html: TOKEN_SCRIPT }} />;
}

/**
 * Where a mail's links point: PUBLIC_ORIGIN, never the request's Host (which anyone can set on a request to a
 * workers.dev or custom-domain address, and which used to become the link a victim was mailed). Without it no
 * mail is sent: logged, and the page answers as usual.
 */
function mailOrigin(c: Ctx): string | undefined {
  const origin = c.get("config").publicOrigin;
  if (origin === undefined) console.error("console mail not sent: PUBLIC_ORIGIN is not set");
  return origin;
}

/** Sends after the response (waitUntil): an answer takes as long for an unknown email as for a known one. */
function sendLater(c: Ctx, mail: Mail) {
  const sending = sendMail(c.env, c.get("config"), mail).catch((error: unknown) => {
    // The address and the link stay out of the log: only that a send failed, and why.
    console.error("console mail not sent", { subject: mail.subject, error: String(error) });
  });
  try {
    c.executionCtx.waitUntil(sending);
  } catch {
    return sending;
  }
  return undefined;
}

/** Issues a verification link for the signed-in (or just signed-up) user and mails it. */
export async function sendVerification(c: Ctx, user: ConsoleEnv["Variables"]["user"]) {
  const origin = mailOrigin(c);
  if (origin === undefined) return;
  const { token } = await issueEmailToken(c.get("db"), user, "verify", Date.now());
  await sendLater(c, verificationMail({ origin, to: user.email, token, credits: user.pendingCredits }));
}

async function verifyPage(c: Ctx, state: { error?: string; status?: 200 | 400 } = {}) {
  await preparePreSession(c);
  const done = c.req.query("done") === "verified";
  return renderConsole(
    c,
    { title: "Verify your email", status: state.status ?? 200 },
    <div class="login panel">
      <h1>Verify your email</h1>
      {done ? (
        <>
          <Notice kind="ok">Your email is verified. Any sign-up credits are on your balance now.</Notice>
          <p>
            <a href={consolePaths.overview}>Continue to the console</a>
          </p>
        </>
      ) : (
        <>
          {state.error ? <Notice kind="error">{state.error}</Notice> : null}
          <p class="muted">The link in the mail fills in the code below; or paste the code from the mail.</p>
          <PostForm action={consolePaths.verify} class="stack">
            <Field label="Code from the email" name="token" required autocomplete="off" />
            <button type="submit">Verify my email</button>
          </PostForm>
          <p class="muted small">
            Signed in? A new link can be sent from the <a href={consolePaths.overview}>overview</a>.
          </p>
          <TokenScript nonce={c.get("nonce")} />
        </>
      )}
    </div>,
  );
}

async function resetRequestPage(
  c: Ctx,
  state: { email?: string; errors?: FieldErrors; status?: 200 | 400 | 429 } = {},
) {
  await preparePreSession(c);
  const sent = c.req.query("sent") === "1";
  return renderConsole(
    c,
    { title: "Reset your password", status: state.status ?? (state.errors ? 400 : 200) },
    <div class="login panel">
      <h1>Reset your password</h1>
      {sent ? (
        <Notice kind="ok">
          If an account has this email, a link to choose a new password is on its way. It works once, for 1
          hour.
        </Notice>
      ) : null}
      {state.errors?.form ? <Notice kind="error">{state.errors.form}</Notice> : null}
      <PostForm action={consolePaths.reset} class="stack">
        <Field
          label="Email"
          name="email"
          type="email"
          value={state.email}
          errors={state.errors}
          required
          autocomplete="username"
        />
        <button type="submit">Mail me a link</button>
      </PostForm>
      <p class="muted">
        Remembered it? <a href={consolePaths.signIn}>Sign in</a>.
      </p>
    </div>,
  );
}

async function resetNewPage(
  c: Ctx,
  state: { token?: string; errors?: FieldErrors; status?: 200 | 400 } = {},
) {
  await preparePreSession(c);
  allowPasswordStrength(c);
  return renderConsole(
    c,
    { title: "Choose a new password", status: state.status ?? (state.errors ? 400 : 200) },
    <div class="login panel">
      <h1>Choose a new password</h1>
      {state.errors?.form ? (
        <Notice kind="error">
          {state.errors.form} <a href={consolePaths.reset}>Ask for a new link</a>.
        </Notice>
      ) : null}
      <PostForm action={consolePaths.resetNew} class="stack">
        <Field
          label="Code from the email"
          name="token"
          value={state.token}
          errors={state.errors}
          required
          autocomplete="off"
        />
        <Field
          label="New password"
          name="password"
          type="password"
          hint="At least 12 characters and hard to guess. Every session of your account is signed out."
          errors={state.errors}
          required
          autocomplete="new-password"
        />
        <PasswordStrength field="field-password" />
        <button type="submit">Set the password and sign in</button>
      </PostForm>
      <TokenScript nonce={c.get("nonce")} />
    </div>,
  );
}

export function registerEmailPages(app: Hono<ConsoleEnv>) {
  app.get("/verify", (c) => verifyPage(c));

  // Opening the link only shows the form: a mail scanner's GET spends nothing; the POST spends the token.
  app.post("/verify", verifyPreSessionForm, async (c) => {
    const result = await verifyEmail(c.get("db"), text(c.get("form"), "token").slice(0, 200), Date.now());
    if (!result.ok) return verifyPage(c, { status: 400, error: BAD_LINK });
    return c.redirect(`${consolePaths.verify}?done=verified`, 303);
  });

  // Signed in (the session's CSRF token): a new link, at most 3 an hour.
  app.post("/verify/resend", async (c) => {
    const user = c.get("user");
    if (user.emailVerifiedAt !== null) return c.redirect(consolePaths.overview, 303);
    const slot = await takeVerifySlot(c.env, user.id, Date.now());
    if (slot.blocked) {
      c.header("Retry-After", String(slot.retryAfterSeconds));
      return c.redirect(`${consolePaths.overview}?mail=wait-${minutes(slot.retryAfterSeconds)}`, 303);
    }
    await sendVerification(c, user);
    return c.redirect(`${consolePaths.overview}?mail=sent`, 303);
  });

  app.get("/reset", (c) => resetRequestPage(c));

  app.post("/reset", verifyPreSessionForm, async (c) => {
    const email = normalizeEmail(text(c.get("form"), "email"));
    if (!EMAIL.test(email) || email.length > 254) {
      return resetRequestPage(c, { email, errors: { email: "An email address, like name@example.com." } });
    }
    // Counted whether or not the email has an account, so the limit tells nothing about it.
    const slot = await takeResetSlot(c.env, email, clientAddress(c), Date.now());
    if (slot.blocked) {
      c.header("Retry-After", String(slot.retryAfterSeconds));
      return resetRequestPage(c, {
        email,
        status: 429,
        errors: {
          form: `Too many reset links asked for. Try again in ${plural(minutes(slot.retryAfterSeconds), "minute")}.`,
        },
      });
    }
    const user = await userForReset(c.get("db"), email);
    const origin = user ? mailOrigin(c) : undefined;
    if (user && origin !== undefined) {
      const { token } = await issueEmailToken(c.get("db"), user, "reset", Date.now());
      await sendLater(c, resetMail({ origin, to: user.email, token }));
    }
    return c.redirect(`${consolePaths.reset}?sent=1`, 303);
  });

  app.get("/reset/new", (c) => resetNewPage(c));

  app.post("/reset/new", verifyPreSessionForm, async (c) => {
    const form = c.get("form");
    const token = text(form, "token").slice(0, 200);
    const password = text(form, "password");
    const result = await resetPassword(
      c.get("db"),
      c.env,
      {
        token,
        password,
        clientAddress: clientAddress(c),
        problem: (email) => passwordProblem(password, email),
      },
      Date.now(),
    );
    if (!result.ok) {
      if (result.reason === "weak") return resetNewPage(c, { token, errors: { password: result.problem } });
      return resetNewPage(c, { errors: { form: BAD_LINK } });
    }
    const { token: session } = await createSession(c.get("db"), result.user.id, Date.now());
    setSessionCookie(c, session);
    return c.redirect(`${consolePaths.security}?done=reset`, 303);
  });
}
