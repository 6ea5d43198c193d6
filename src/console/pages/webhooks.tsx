import type { Context, Hono } from "hono";
import { Secrets } from "../../dashboard/pages/webhook-secret";
import { Notice, PostForm } from "../../dashboard/views/components";
import { formatRemaining } from "../../dashboard/views/format";
import { activeSecrets, ROTATION_OVERLAP_MS, rotateWebhookSecret } from "../../webhooks/secrets";
import type { ConsoleEnv } from "../context";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";

async function webhooksPage(c: Context<ConsoleEnv>, revealed: boolean) {
  const now = Date.now();
  const secrets = await activeSecrets(c.get("db"), c.get("user").accountId, now);
  const rotated = c.req.query("done") === "rotated";
  return renderConsole(
    c,
    { title: "Webhooks", tab: "webhooks" },
    <>
      <h1>Webhook signing secret</h1>
      {rotated ? (
        <Notice kind="ok">
          Secret rotated. The previous one keeps signing for {formatRemaining(ROTATION_OVERLAP_MS)} beside it.
        </Notice>
      ) : null}
      <p class="muted">
        Every delivery to your webhook URLs is signed with this secret (Standard Webhooks: the{" "}
        <code>webhook-signature</code> header).
      </p>
      <div class="grid">
        <section>
          <Secrets secrets={secrets} revealed={revealed} now={now} />
          {revealed ? null : (
            <PostForm action={consolePaths.revealSecret}>
              <button type="submit" class="secondary">
                Reveal
              </button>
            </PostForm>
          )}
        </section>
        <section class="panel">
          <h2>Rotate</h2>
          <p>
            Issues a new signing secret. The current one keeps signing for{" "}
            {formatRemaining(ROTATION_OVERLAP_MS)} beside it, so your receivers can switch without missing a
            delivery.
          </p>
          <PostForm action={consolePaths.rotateSecret}>
            <button type="submit">Rotate</button>
          </PostForm>
        </section>
      </div>
    </>,
  );
}

export function registerWebhookPages(app: Hono<ConsoleEnv>) {
  app.get("/webhooks", (c) => webhooksPage(c, false));
  // A POST, so the secret is only ever sent on a deliberate, CSRF-checked request.
  app.post("/webhooks/reveal", (c) => webhooksPage(c, true));
  app.post("/webhooks/rotate", async (c) => {
    await rotateWebhookSecret(c.get("db"), c.get("user").accountId, Date.now());
    return c.redirect(`${consolePaths.webhooks}?done=rotated`, 303);
  });
}
