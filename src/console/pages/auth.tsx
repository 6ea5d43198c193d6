import type { Context, Hono } from "hono";
import { keyLabel } from "../../auth/token";
import { ApiError } from "../../errors/api-error";
import { createSession } from "../../sessions/store";
import { Field, Notice, PostForm, SecretField } from "../../ui/components";
import { formatNumber } from "../../ui/format";
import { type FieldErrors, text } from "../../ui/forms";
import { checkSolution, checkTurnstile, issueChallenge } from "../../users/challenge";
import { authenticationOptions, signInWithPasskey } from "../../users/passkeys";
import { passwordProblem } from "../../users/password";
import { normalizeEmail, signIn, signUp } from "../../users/service";
import { challengeLevel, clientSubject, takeSignUpSlot } from "../../users/throttle";
import type { ConsoleEnv } from "../context";
import { setFlash, takeFlash } from "../flash";
import { consolePaths, safeConsoleNext } from "../paths";
import { renderConsole } from "../render";
import { clientAddress, relyingParty } from "../rp";
import {
  currentSession,
  preparePreSession,
  setChallenge,
  setSessionCookie,
  takeChallenge,
  verifyPreSessionForm,
} from "../session";
import { allowChallenge, ChallengeField, type ChallengeWidget } from "../views/challenge";
import { PasskeyForm } from "../views/passkey-form";
import { allowPasswordStrength, PasswordStrength } from "../views/password-strength";
import { sendVerification } from "./email";

type Ctx = Context<ConsoleEnv>;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

async function signUpPage(
  c: Ctx,
  state: { email?: string; errors?: FieldErrors; status?: 200 | 400 | 429 } = {},
) {
  await preparePreSession(c);
  allowPasswordStrength(c);
  return renderConsole(
    c,
    { title: "Sign up", status: state.status ?? (state.errors ? 400 : 200) },
    <div class="login panel">
      <h1>Sign up</h1>
      <p class="muted">
        An account with an API key to start with. Already have one? <a href={consolePaths.signIn}>Sign in</a>.
      </p>
      {state.errors?.form ? <Notice kind="error">{state.errors.form}</Notice> : null}
      <PostForm action={consolePaths.signUp} class="stack">
        <Field
          label="Email"
          name="email"
          type="email"
          value={state.email}
          errors={state.errors}
          required
          autocomplete="email"
        />
        <Field
          label="Password"
          name="password"
          type="password"
          hint="At least 12 characters and hard to guess: a few uncommon words work well."
          errors={state.errors}
          required
          autocomplete="new-password"
        />
        <PasswordStrength field="field-password" />
        <button type="submit">Sign up</button>
      </PostForm>
    </div>,
  );
}

/** The secret challenges are signed with (derived per purpose in src/users/challenge.ts). */
function challengeSecret(c: Ctx) {
  const secret = c.get("config").fileSigningSecret;
  if (!secret) throw new ApiError("INTERNAL", "FILE_SIGNING_SECRET is not set.");
  return secret;
}

/** The widget for a challenge of `level`: Turnstile where the operator configured it, else a fresh ALTCHA one. */
async function challengeWidget(c: Ctx, level: number): Promise<ChallengeWidget> {
  const turnstile = c.get("config").turnstile;
  if (turnstile) return { kind: "turnstile", siteKey: turnstile.siteKey };
  return { kind: "altcha", challenge: await issueChallenge(challengeSecret(c), level, Date.now()) };
}

/** Whether the posted form passes a challenge of `level`: the widget's answer, checked on the server. */
function passes(c: Ctx, form: Record<string, string | string[]>) {
  return (level: number) => {
    const turnstile = c.get("config").turnstile;
    if (turnstile)
      return checkTurnstile(
        turnstile.secretKey,
        text(form, "cf-turnstile-response"),
        c.req.header("cf-connecting-ip"),
      );
    const payload = text(form, "altcha");
    if (payload === "") return Promise.resolve(false);
    return checkSolution(c.env, challengeSecret(c), payload, level, Date.now());
  };
}

async function signInPage(
  c: Ctx,
  state: { email?: string; error?: string; status?: 200 | 401 | 403; level?: number } = {},
) {
  await preparePreSession(c);
  const options = await authenticationOptions(relyingParty(c));
  setChallenge(c, options.challenge);
  const widget = state.level ? await challengeWidget(c, state.level) : undefined;
  if (widget) allowChallenge(c, widget);
  const next = c.req.query("next");
  const action = next
    ? `${consolePaths.signIn}?next=${encodeURIComponent(safeConsoleNext(next))}`
    : consolePaths.signIn;
  return renderConsole(
    c,
    { title: "Sign in", status: state.status ?? 200 },
    <div class="login panel">
      <h1>Sign in</h1>
      {state.error ? <Notice kind="error">{state.error}</Notice> : null}
      <PostForm action={action} class="stack">
        <Field label="Email" name="email" type="email" value={state.email} required autocomplete="username" />
        <Field label="Password" name="password" type="password" required autocomplete="current-password" />
        {widget ? <ChallengeField widget={widget} /> : null}
        <button type="submit">Sign in</button>
      </PostForm>
      <PasskeyForm
        action={consolePaths.signInPasskey}
        mode="authenticate"
        options={options}
        button="Sign in with a passkey"
        secondary
      />
      <p class="muted">
        <a href={consolePaths.reset}>Forgot your password?</a> No account yet?{" "}
        <a href={consolePaths.signUp}>Sign up</a>.
      </p>
    </div>,
  );
}

async function startSession(c: Ctx, userId: string) {
  const { token } = await createSession(c.get("db"), userId, Date.now());
  setSessionCookie(c, token);
  return token;
}

const minutes = (seconds: number) => Math.max(1, Math.ceil(seconds / 60));

export function registerAuthPages(app: Hono<ConsoleEnv>) {
  app.get("/sign-up", async (c) =>
    (await currentSession(c)) ? c.redirect(consolePaths.overview, 303) : signUpPage(c),
  );

  app.post("/sign-up", verifyPreSessionForm, async (c) => {
    const form = c.get("form");
    const email = normalizeEmail(text(form, "email"));
    const password = text(form, "password");
    const errors: FieldErrors = {};
    if (!EMAIL.test(email) || email.length > 254) errors.email = "An email address, like name@example.com.";
    const problem = passwordProblem(password, email);
    if (problem) errors.password = problem;
    if (Object.keys(errors).length > 0) return signUpPage(c, { email, errors });

    // Counted once the form is valid, before any work: a burst from one address cannot all pass.
    const slot = await takeSignUpSlot(
      c.env,
      clientAddress(c),
      c.get("config").signupsPerAddressPerHour,
      Date.now(),
    );
    if (slot.blocked) {
      c.header("Retry-After", String(slot.retryAfterSeconds));
      const wait = minutes(slot.retryAfterSeconds);
      return signUpPage(c, {
        email,
        status: 429,
        errors: {
          form: `Too many sign-ups from your network. Try again in ${wait} minute${wait === 1 ? "" : "s"}.`,
        },
      });
    }
    const credits = c.get("config").signupCredits;
    const result = await signUp(c.get("db"), { email, password, credits }, Date.now());
    if (!result.ok) {
      return signUpPage(c, {
        email,
        errors: { email: "This email already has an account. Sign in instead." },
      });
    }
    const token = await startSession(c, result.user.id);
    await sendVerification(c, result.user);
    // Post/Redirect/Get: the key is shown by the welcome page, sealed under the new session, never in a URL.
    await setFlash(c, token, {
      kind: "welcome",
      keyId: result.key.slice(3, 29),
      key: result.key,
      credits,
    });
    return c.redirect(consolePaths.welcome, 303);
  });

  // The page after sign-up, once: a reload (or a later visit) goes to the overview.
  app.get("/welcome", async (c) => {
    const flash = await takeFlash(c);
    if (flash?.kind !== "welcome") return c.redirect(consolePaths.overview, 303);
    return renderConsole(
      c,
      { title: "Welcome", tab: "overview" },
      <section class="panel" id="new-key-panel">
        <h1>Your account is ready</h1>
        <p>
          We sent a link to <strong class="anywhere">{c.get("user")?.email ?? "your email"}</strong> to verify
          it
          {flash.credits > 0
            ? `: your ${formatNumber(flash.credits)} sign-up credits are added once it is verified`
            : ""}
          . This is your default API key:
        </p>
        <Notice kind="warn">
          Copy the key now: this is the only time it is shown. Only a hash is stored, so a lost key cannot be
          recovered — create another on the API keys page.
        </Notice>
        <SecretField id="new-key" label="Your API key" value={flash.key} />
        <p class="muted small">
          Listed from now on as <code>{keyLabel(flash.keyId)}</code>. Send it as{" "}
          <code>Authorization: Bearer p6_…</code>.
        </p>
        <p>
          <a href={consolePaths.overview}>Continue to the overview</a>
        </p>
      </section>,
    );
  });

  app.get("/sign-in", async (c) => {
    if (await currentSession(c)) return c.redirect(safeConsoleNext(c.req.query("next")), 303);
    // Failures from this client alone already call for a challenge: the page carries it from the start.
    const level = await challengeLevel(c.env, [clientSubject(clientAddress(c))], Date.now());
    return signInPage(c, { level });
  });

  app.post("/sign-in", verifyPreSessionForm, async (c) => {
    const form = c.get("form");
    const email = text(form, "email").slice(0, 254);
    const result = await signIn(
      c.get("db"),
      c.env,
      {
        email,
        password: text(form, "password").slice(0, 1024),
        clientAddress: clientAddress(c),
        passes: passes(c, form),
      },
      Date.now(),
    );
    if (!result.ok) {
      if (result.reason === "challenge") {
        return signInPage(c, {
          email,
          status: 403,
          level: result.level,
          error:
            "Many sign-ins failed recently from here or for this email, so your browser first does a moment of work that guessing programs cannot afford. Wait for the check below to finish, then sign in — or sign in with a passkey, or reset your password.",
        });
      }
      return signInPage(c, {
        email,
        status: 401,
        level: result.level,
        error: "That email and password do not match an account.",
      });
    }
    await startSession(c, result.user.id);
    return c.redirect(safeConsoleNext(c.req.query("next")), 303);
  });

  app.post("/sign-in/passkey", verifyPreSessionForm, async (c) => {
    const challenge = takeChallenge(c);
    let response: unknown;
    try {
      response = JSON.parse(text(c.get("form"), "response"));
    } catch {
      response = null;
    }
    const user =
      challenge && response && typeof response === "object"
        ? await signInWithPasskey(
            c.get("db"),
            relyingParty(c),
            { response: response as Parameters<typeof signInWithPasskey>[2]["response"], challenge },
            Date.now(),
          )
        : null;
    if (!user) return signInPage(c, { status: 401, error: "That passkey could not sign you in." });
    await startSession(c, user.id);
    return c.redirect(consolePaths.overview, 303);
  });
}
