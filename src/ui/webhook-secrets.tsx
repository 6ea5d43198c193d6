/**
 * The account's webhook signing secrets as the operator dashboard and the customer console show them: masked
 * until revealed, the previous one with the time it keeps signing, and the rotation with its question first.
 */
import type { Child } from "hono/jsx";
import { ROTATION_OVERLAP_MS } from "../webhooks/secrets";
import { PostForm, SecretField, Time } from "./components";
import { formatRemaining } from "./format";

type ActiveSecret = { secret: string; activeUntil: number | null };

/** Enough to tell secrets apart on screen without showing them. */
const masked = (secret: string) => `whsec_${"•".repeat(12)}${secret.slice(-4)}`;

function Secrets(props: { secrets: ActiveSecret[]; revealed: boolean; now: number }) {
  return (
    <div class="stack">
      {props.secrets.map((s, i) => (
        <div class="panel" data-secret-role={s.activeUntil === null ? "current" : "previous"}>
          <h3>{s.activeUntil === null ? "Current secret" : "Previous secret"}</h3>
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

/** The question before a webhook secret rotation (dashboard and console): what happens, then the one button. */
export function ConfirmRotation(props: { action: string; cancel: string }) {
  return (
    <section class="panel">
      <h1>Rotate the webhook signing secret?</h1>
      <p>
        A new secret signs every delivery from now on. The current one keeps signing beside it for{" "}
        {formatRemaining(ROTATION_OVERLAP_MS)}, then stops: every receiver must have the new secret by then. A
        rotation cannot be undone.
      </p>
      <PostForm action={props.action} class="actions">
        <button type="submit" class="danger">
          Rotate the secret
        </button>
        <a href={props.cancel}>Cancel</a>
      </PostForm>
    </section>
  );
}
