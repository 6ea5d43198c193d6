import type { Context, Hono } from "hono";
import { Field, Notice, PostForm } from "../../ui/components";
import { notFound } from "../../ui/error-page";
import { formatRemaining } from "../../ui/format";
import { type FieldErrors, text } from "../../ui/forms";
import { ConfirmRotation, SecretPanels } from "../../ui/webhook-secrets";
import { isUlid } from "../../util/ulid";
import { resendLastEvent } from "../../webhooks/resend";
import { activeSecrets, ROTATION_OVERLAP_MS, rotateWebhookSecret } from "../../webhooks/secrets";
import type { ConsoleEnv } from "../context";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";
import { taskPage } from "./tasks";

async function webhooksPage(
  c: Context<ConsoleEnv>,
  revealed: boolean,
  resend: { taskId: string; errors: FieldErrors; status: 404 | 429 } | undefined = undefined,
) {
  const now = Date.now();
  const secrets = await activeSecrets(c.get("db"), c.get("user").accountId, now);
  const rotated = c.req.query("done") === "rotated";
  return renderConsole(
    c,
    { title: "Webhooks", tab: "webhooks", status: resend?.status ?? 200 },
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
      <SecretPanels
        secrets={secrets}
        revealed={revealed}
        now={now}
        reveal={{ action: consolePaths.revealSecret, label: "Reveal" }}
        rotate={{ confirm: consolePaths.rotateSecret, label: "Rotate…" }}
        extra={
          <section class="panel">
            <h2>Resend</h2>
            <p>
              Sends a task's last event to its webhook again, as a new delivery signed with today's secrets.
            </p>
            <PostForm action={consolePaths.resend} class="stack">
              <Field label="Task id" name="task_id" value={resend?.taskId} errors={resend?.errors} required />
              <button type="submit" class="secondary">
                Resend the last event
              </button>
            </PostForm>
          </section>
        }
      />
    </>,
  );
}

export function registerWebhookPages(app: Hono<ConsoleEnv>) {
  app.get("/webhooks", (c) => webhooksPage(c, false));
  // A POST, so the secret is only ever sent on a deliberate, CSRF-checked request.
  app.post("/webhooks/reveal", (c) => webhooksPage(c, true));
  app.post("/webhooks/resend", async (c) => {
    const taskId = text(c.get("form"), "task_id").trim();
    const resent = isUlid(taskId)
      ? await resendLastEvent(c.get("db"), c.env, { accountId: c.get("user").accountId, taskId }, Date.now())
      : ({ ok: false, reason: "not_found" } as const);
    const fromTask = text(c.get("form"), "from") === "task";
    if (!resent.ok && resent.reason === "rate_limited") {
      // Nothing was sent; a reload of this answer is refused the same way until the window frees a slot.
      c.header("Retry-After", String(resent.retryAfterSeconds));
      if (fromTask) return taskPage(c, taskId, resent);
      return webhooksPage(c, false, {
        taskId,
        status: 429,
        errors: { task_id: `${resent.message} Try again in ${resent.retryAfterSeconds} s.` },
      });
    }
    if (!resent.ok) {
      if (fromTask) throw notFound("This task");
      return webhooksPage(c, false, {
        taskId,
        status: 404,
        errors: { task_id: "None of your tasks with this id has sent a webhook event." },
      });
    }
    return c.redirect(`${consolePaths.task(taskId)}?done=resent`, 303);
  });
  // Rotating asks first, as revoking a key does: the new secret must reach every receiver within the overlap.
  app.get("/webhooks/rotate", (c) =>
    renderConsole(
      c,
      { title: "Rotate the webhook secret", tab: "webhooks" },
      <ConfirmRotation action={consolePaths.rotateSecret} cancel={consolePaths.webhooks} />,
    ),
  );
  app.post("/webhooks/rotate", async (c) => {
    await rotateWebhookSecret(c.get("db"), c.get("user").accountId, Date.now());
    return c.redirect(`${consolePaths.webhooks}?done=rotated`, 303);
  });
}
