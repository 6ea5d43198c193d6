import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import type { AccountRow } from "../../db/schema";
import { activeSecrets, ROTATION_OVERLAP_MS, rotateWebhookSecret } from "../../webhooks/secrets";
import type { DashboardEnv } from "../context";
import { doneMessage, loadAccount } from "../load";
import { paths, query } from "../paths";
import { render } from "../render";
import { AccountHeader, Badge, Notice, PostForm, SecretField, Time } from "../views/components";
import { ConfirmRotation } from "../views/confirm-rotation";
import { formatRemaining } from "../views/format";

type ActiveSecret = { secret: string; activeUntil: number | null };

/** Enough to tell secrets apart on screen without showing them. */
const masked = (secret: string) => `whsec_${"•".repeat(12)}${secret.slice(-4)}`;

export function Secrets(props: { secrets: ActiveSecret[]; revealed: boolean; now: number }) {
  return (
    <div class="stack">
      {props.secrets.map((s, i) => (
        <div class="panel" data-secret-role={s.activeUntil === null ? "current" : "previous"}>
          <h3>
            <Badge value={s.activeUntil === null ? "current" : "previous"} />{" "}
            {s.activeUntil === null ? "Current secret" : "Previous secret"}
          </h3>
          {props.revealed ? (
            <SecretField id={`secret-${i}`} label="Webhook signing secret" value={s.secret} />
          ) : (
            <p>
              <code>{masked(s.secret)}</code>
            </p>
          )}
          <p class="muted small">
            {s.activeUntil === null ? (
              "Signs every delivery until the next rotation."
            ) : (
              <>
                Still signs deliveries (a second <code>v1,</code> signature) until <Time ms={s.activeUntil} />
                : <strong class="remaining">{formatRemaining(s.activeUntil - props.now)} left</strong>.
              </>
            )}
          </p>
        </div>
      ))}
    </div>
  );
}

type Action = { action: string; label: string };
/** A link to a page that asks before acting (the console's rotation), instead of the action's own button. */
type Confirmed = { confirm: string; label: string };

/** The secrets (masked until revealed) with the reveal button, and the rotation panel; `extra` joins the grid. */
export function SecretPanels(props: {
  secrets: ActiveSecret[];
  revealed: boolean;
  now: number;
  reveal: Action;
  rotate: Action | Confirmed;
  extra?: Child;
}) {
  return (
    <div class="grid">
      <section>
        <Secrets secrets={props.secrets} revealed={props.revealed} now={props.now} />
        {props.revealed ? null : (
          <PostForm action={props.reveal.action}>
            <button type="submit" class="secondary">
              {props.reveal.label}
            </button>
          </PostForm>
        )}
      </section>
      <section class="panel">
        <h2>Rotate</h2>
        <p>
          Issues a new signing secret. The current one keeps signing for{" "}
          {formatRemaining(ROTATION_OVERLAP_MS)} beside it, so receivers can switch without missing a
          delivery.
        </p>
        {"confirm" in props.rotate ? (
          <p>
            <a href={props.rotate.confirm}>{props.rotate.label}</a>
          </p>
        ) : (
          <PostForm action={props.rotate.action}>
            <button type="submit">{props.rotate.label}</button>
          </PostForm>
        )}
      </section>
      {props.extra}
    </div>
  );
}

async function secretPage(c: Context<DashboardEnv>, account: AccountRow, revealed: boolean) {
  const now = Date.now();
  const secrets = await activeSecrets(c.get("db"), account.id, now);
  const done = doneMessage(c, {
    rotated: "Secret rotated. Reveal it to copy the new one; the previous one keeps signing for 24 h.",
  });
  return render(
    c,
    `Webhook secret · ${account.name}`,
    <>
      <AccountHeader account={account} tab="webhook" />
      {done ? <Notice kind="ok">{done}</Notice> : null}
      <SecretPanels
        secrets={secrets}
        revealed={revealed}
        now={now}
        reveal={{
          action: paths.revealSecret(account.id),
          label: `Reveal ${secrets.length > 1 ? "secrets" : "secret"}`,
        }}
        rotate={{ confirm: paths.rotateSecret(account.id), label: "Rotate…" }}
      />
    </>,
  );
}

export function registerWebhookSecret(app: Hono<DashboardEnv>) {
  app.get("/accounts/:accountId/webhook-secret", async (c) => secretPage(c, await loadAccount(c), false));

  // Revealing is a POST so the secret is only ever sent on a deliberate, CSRF-checked request.
  app.post("/accounts/:accountId/webhook-secret/reveal", async (c) =>
    secretPage(c, await loadAccount(c), true),
  );

  // Rotating asks first, as the console does and as revoking a key does: every receiver of the account must
  // get the new secret within the overlap.
  app.get("/accounts/:accountId/webhook-secret/rotate", async (c) => {
    const account = await loadAccount(c);
    return render(
      c,
      `Rotate the webhook secret · ${account.name}`,
      <>
        <AccountHeader account={account} tab="webhook" />
        <ConfirmRotation action={paths.rotateSecret(account.id)} cancel={paths.webhookSecret(account.id)} />
      </>,
    );
  });

  app.post("/accounts/:accountId/webhook-secret/rotate", async (c) => {
    const account = await loadAccount(c);
    await rotateWebhookSecret(c.get("db"), account.id, Date.now());
    return c.redirect(`${paths.webhookSecret(account.id)}${query({ done: "rotated" })}`, 303);
  });
}
