import type { Context, Hono } from "hono";
import { keyLabel } from "../../auth/token";
import type { AccountRow, ApiKeyRow } from "../../db/schema";
import { createKey, listKeys, revokeKey } from "../../keys/service";
import { Notice } from "../../ui/components";
import { notFound } from "../../ui/error-page";
import type { FieldErrors } from "../../ui/forms";
import { ConfirmRevoke, CreateKeyForm, KeyList, type KeyValues, NewKey, readKeyForm } from "../../ui/keys";
import { query } from "../../ui/query-string";
import type { DashboardEnv } from "../context";
import { doneMessage, loadAccount } from "../load";
import { paths } from "../paths";
import { render } from "../render";
import { AccountHeader } from "../views/account-header";

/** The admin API's own ceiling (CreateKeyBody). */
const MAX_RATE_LIMIT = 100_000;

async function keysPage(
  c: Context<DashboardEnv>,
  account: AccountRow,
  extra: {
    created?: { row: ApiKeyRow; key: string };
    form?: { values: KeyValues; errors: FieldErrors };
  } = {},
) {
  const rows = await listKeys(c.get("db"), account.id);
  const defaultRateLimit = c.get("config").defaultRateLimitPerMinute;
  const done = doneMessage(c, {
    revoked: "Key revoked. Requests with it are refused from now on; its record stays for audit.",
  });
  return render(
    c,
    `API keys · ${account.name}`,
    <>
      <AccountHeader account={account} tab="keys" />
      {done ? <Notice kind="ok">{done}</Notice> : null}
      {extra.created ? <NewKey keyRow={extra.created.row} fullKey={extra.created.key} /> : null}
      <KeyList
        rows={rows}
        revokeHref={(keyId) => paths.revokeKey(account.id, keyId)}
        defaultRateLimit={defaultRateLimit}
        now={Date.now()}
      />
      <CreateKeyForm
        action={paths.keys(account.id)}
        defaultRateLimit={defaultRateLimit}
        maxRateLimit={MAX_RATE_LIMIT}
        values={extra.form?.values}
        errors={extra.form?.errors}
      />
    </>,
    extra.form ? 400 : extra.created ? 201 : 200,
  );
}

/** The account's key named by the URL (a key of another account is not found here). */
async function loadKey(c: Context<DashboardEnv>, account: AccountRow) {
  const keyId = c.req.param("keyId");
  const row = (await listKeys(c.get("db"), account.id)).find((key) => key.id === keyId);
  if (!row) throw notFound("This key");
  return row;
}

export function registerKeys(app: Hono<DashboardEnv>) {
  app.get("/accounts/:accountId/keys", async (c) => keysPage(c, await loadAccount(c)));

  app.post("/accounts/:accountId/keys", async (c) => {
    const account = await loadAccount(c);
    const { values, input } = readKeyForm(c.get("form"), MAX_RATE_LIMIT);
    if (!input.ok) return keysPage(c, account, { form: { values, errors: input.errors } });
    const created = await createKey(
      c.get("db"),
      account.id,
      {
        name: input.value.name,
        scopes: input.value.scopes,
        expiresInDays: input.value.expires_in_days,
        rateLimitPerMinute: input.value.rate_limit_per_minute,
      },
      Date.now(),
    );
    // Rendered in this response only, never redirected with: the full key exists nowhere else.
    return keysPage(c, account, { created });
  });

  app.get("/accounts/:accountId/keys/:keyId/revoke", async (c) => {
    const account = await loadAccount(c);
    const row = await loadKey(c, account);
    if (row.revokedAt !== null) return c.redirect(paths.keys(account.id), 303);
    return render(
      c,
      `Revoke ${keyLabel(row.id)}`,
      <>
        <AccountHeader account={account} tab="keys" />
        <ConfirmRevoke
          row={row}
          action={paths.revokeKey(account.id, row.id)}
          cancel={paths.keys(account.id)}
        />
      </>,
    );
  });

  app.post("/accounts/:accountId/keys/:keyId/revoke", async (c) => {
    const account = await loadAccount(c);
    const row = await loadKey(c, account);
    // D1 first, then the key's gate: refused on the very next request, as with POST /admin/v1/keys/{id}/revoke.
    await revokeKey(c.get("db"), c.env, row.id, Date.now());
    return c.redirect(`${paths.keys(account.id)}${query({ done: "revoked" })}`, 303);
  });
}
