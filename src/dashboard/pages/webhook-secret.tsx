import type { Context, Hono } from "hono";
import type { AccountRow } from "../../db/schema";
import { Notice } from "../../ui/components";
import { query } from "../../ui/query-string";
import { ConfirmRotation, SecretPanels } from "../../ui/webhook-secrets";
import { activeSecrets, rotateWebhookSecret } from "../../webhooks/secrets";
import type { DashboardEnv } from "../context";
import { doneMessage, loadAccount } from "../load";
import { paths } from "../paths";
import { render } from "../render";
import { AccountHeader } from "../views/account-header";

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
