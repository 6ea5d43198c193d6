import type { Context, Hono } from "hono";
import { getCookie } from "hono/cookie";
import { keyLabel } from "../../auth/token";
import { ApiError } from "../../errors/api-error";
import { createKey, listKeys, revokeKey } from "../../keys/service";
import { Notice } from "../../ui/components";
import { notFound } from "../../ui/error-page";
import type { FieldErrors } from "../../ui/forms";
import { ConfirmRevoke, CreateKeyForm, KeyList, type KeyValues, NewKey, readKeyForm } from "../../ui/keys";
import type { ConsoleEnv } from "../context";
import { setFlash, takeFlash } from "../flash";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";
import { SESSION_COOKIE } from "../session";

type Ctx = Context<ConsoleEnv>;

/** A customer's key may not go above the deployment's per-key default: the operator's ceiling. */
const ceiling = (c: Ctx) => c.get("config").defaultRateLimitPerMinute;

async function keysPage(
  c: Ctx,
  extra: { form?: { values: KeyValues; errors: FieldErrors }; refused?: string } = {},
) {
  const [rows, flash] = await Promise.all([listKeys(c.get("db"), c.get("user").accountId), takeFlash(c)]);
  const revoked = c.req.query("done") === "revoked";
  // The key created by the POST this page was redirected from, shown on this one load only.
  const created = flash?.kind === "key" ? rows.find((row) => row.id === flash.keyId) : undefined;
  return renderConsole(
    c,
    { title: "API keys", tab: "keys", status: extra.refused ? 409 : extra.form ? 400 : 200 },
    <>
      <h1>API keys</h1>
      {extra.refused ? <Notice kind="error">{extra.refused}</Notice> : null}
      {revoked ? <Notice kind="ok">Key revoked. Requests with it are refused from now on.</Notice> : null}
      {created && flash?.kind === "key" ? <NewKey keyRow={created} fullKey={flash.key} /> : null}
      <KeyList
        rows={rows}
        revokeHref={consolePaths.revokeKey}
        defaultRateLimit={ceiling(c)}
        now={Date.now()}
      />
      <CreateKeyForm
        action={consolePaths.keys}
        defaultRateLimit={ceiling(c)}
        maxRateLimit={ceiling(c)}
        values={extra.form?.values}
        errors={extra.form?.errors}
      />
    </>,
  );
}

/** The signed-in account's key named by the URL; any other key, whoever owns it, is not found. */
async function loadKey(c: Ctx) {
  const keyId = c.req.param("keyId");
  const row = (await listKeys(c.get("db"), c.get("user").accountId)).find((key) => key.id === keyId);
  if (!row) throw notFound("This key");
  return row;
}

export function registerKeyPages(app: Hono<ConsoleEnv>) {
  app.get("/keys", (c) => keysPage(c));

  app.post("/keys", async (c) => {
    const { values, input } = readKeyForm(c.get("form"), ceiling(c));
    if (!input.ok) return keysPage(c, { form: { values, errors: input.errors } });
    // The admin API's own domain call, scoped to the signed-in account (and its cap on active keys).
    let created: Awaited<ReturnType<typeof createKey>>;
    try {
      created = await createKey(
        c.get("db"),
        c.get("user").accountId,
        {
          name: input.value.name,
          scopes: input.value.scopes,
          expiresInDays: input.value.expires_in_days,
          rateLimitPerMinute: input.value.rate_limit_per_minute,
        },
        Date.now(),
      );
    } catch (error) {
      if (error instanceof ApiError && error.code === "RESOURCE_CONFLICT")
        return keysPage(c, { refused: error.message });
      throw error;
    }
    // Post/Redirect/Get: a reload shows the list, never makes a second key. The key reaches the next page
    // sealed under this session (src/console/flash.ts), never in its URL.
    await setFlash(c, getCookie(c, SESSION_COOKIE)!, {
      kind: "key",
      keyId: created.row.id,
      key: created.key,
    });
    return c.redirect(consolePaths.keys, 303);
  });

  app.get("/keys/:keyId/revoke", async (c) => {
    const row = await loadKey(c);
    if (row.revokedAt !== null) return c.redirect(consolePaths.keys, 303);
    return renderConsole(
      c,
      { title: `Revoke ${keyLabel(row.id)}`, tab: "keys" },
      <ConfirmRevoke row={row} action={consolePaths.revokeKey(row.id)} cancel={consolePaths.keys} />,
    );
  });

  app.post("/keys/:keyId/revoke", async (c) => {
    const row = await loadKey(c);
    await revokeKey(c.get("db"), c.env, row.id, Date.now());
    return c.redirect(`${consolePaths.keys}?done=revoked`, 303);
  });
}
