import type { Context, Hono } from "hono";
import { getCookie } from "hono/cookie";
import { Field, Notice, PostForm } from "../../ui/components";
import { notFound } from "../../ui/error-page";
import { formatRemaining } from "../../ui/format";
import { type FieldErrors, text } from "../../ui/forms";
import { ConfirmRotation, SecretPanels } from "../../ui/webhook-secrets";
import { isUlid } from "../../util/ulid";
import { resendLastEvent } from "../../webhooks/resend";
import { activeSecrets, ROTATION_OVERLAP_MS, rotateWebhookSecret } from "../../webhooks/secrets";
import type { ConsoleEnv } from "../context";
import { setFlash, takeFlash } from "../flash";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";
import { SESSION_COOKIE } from "../session";

async function webhooksPage(
  c: Context<ConsoleEnv>,
  revealed: boolean,
  unknownTask: string | undefined = undefined,
) {
  const now = Date.now();
  const [secrets, flash] = await Promise.all([
    activeSecrets(c.get("db"), c.get("user").accountId, now),
    takeFlash(c),
  ]);
  const rotated = c.req.query("done") === "rotated";
  // The resend form's answer: an unknown task (this POST's own page) or a refusal by a limit (after its redirect).
  const resend: { taskId: string; errors: FieldErrors } | undefined =
    unknownTask !== undefined
      ? {
          taskId: unknownTask,
          errors: { task_id: "None of your tasks with this id has sent a webhook event." },
        }
      : flash?.kind === "resend-refused"
        ? { taskId: flash.taskId, errors: { task_id: flash.message } }
        : undefined;
  return renderConsole(
    c,
    { title: "Webhooks", tab: "webhooks", status: unknownTask === undefined ? 200 : 404 },
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
      // Nothing was sent. Post/Redirect/Get, as every console action: back to the page the form was on, which
      // shows why once; a reload there asks for nothing. No Retry-After: on a redirect it would ask the browser
      // to wait before following it (RFC 9110 §10.2.3); the page says when to try again.
      await setFlash(c, getCookie(c, SESSION_COOKIE)!, {
        kind: "resend-refused",
        taskId,
        message: `${resent.message} Nothing was sent; try again in ${resent.retryAfterSeconds} s.`,
      });
      return c.redirect(fromTask ? consolePaths.task(taskId) : consolePaths.webhooks, 303);
    }
    if (!resent.ok) {
      if (fromTask) throw notFound("This task");
      return webhooksPage(c, false, taskId);
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
