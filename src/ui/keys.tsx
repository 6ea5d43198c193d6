/**
 * API keys as the operator dashboard and the customer console show them: the list, the create form (validated
 * with the admin API's own schema), a new key shown once, and the question before a revocation.
 */
import { parseScopes } from "../auth/authenticate";
import { keyLabel } from "../auth/token";
import type { ApiKeyRow } from "../db/schema";
import { CreateKeyBody } from "../routes/admin/schema";
import { Badge, ErrorSummary, Field, Notice, PostForm, SecretField, Table, Time } from "./components";
import { formatNumber } from "./format";
import { type FieldErrors, list, optionalInt, text, validate } from "./forms";

export type KeyValues = { name: string; scopes: string[]; expires: string; rateLimit: string };

function keyStatus(row: ApiKeyRow, now: number) {
  if (row.revokedAt !== null) return "revoked";
  if (row.expiresAt !== null && row.expiresAt <= now) return "expired";
  return "active";
}

/** A key just created: the only time its full form is ever shown. */
export function NewKey(props: { keyRow: ApiKeyRow; fullKey: string }) {
  return (
    <section class="panel" id="new-key-panel">
      <h2>New API key {props.keyRow.name ? `“${props.keyRow.name}”` : ""}</h2>
      <Notice kind="warn">
        Copy the key now: this is the only time it is shown. Only a hash is stored, so a lost key cannot be
        recovered — create another and revoke this one.
      </Notice>
      <SecretField id="new-key" label="The new API key" value={props.fullKey} />
      <p class="muted small">
        Listed from now on as <code>{keyLabel(props.keyRow.id)}</code>. Use it as{" "}
        <code>Authorization: Bearer p6_…</code>.
      </p>
    </section>
  );
}

/** The create form; `maxRateLimit` is the highest per-minute limit this form may set. */
export function CreateKeyForm(props: {
  action: string;
  defaultRateLimit: number;
  maxRateLimit: number;
  values?: KeyValues;
  errors?: FieldErrors;
}) {
  const scopes = props.values?.scopes ?? ["read", "write"];
  const scopeError = props.errors?.scopes;
  return (
    <section class="panel">
      <h2>Create a key</h2>
      <ErrorSummary errors={props.errors} />
      <PostForm action={props.action} class="stack">
        <div class="fields">
          <Field
            label="Name"
            name="name"
            hint="Optional, e.g. where it is deployed."
            value={props.values?.name}
            errors={props.errors}
          />
          <Field
            label="Expires in (days)"
            name="expires_in_days"
            hint="1 to 365; empty: never."
            value={props.values?.expires}
            errors={props.errors}
            inputmode="numeric"
          />
          <Field
            label="Rate limit (per minute)"
            name="rate_limit_per_minute"
            hint={`1 to ${formatNumber(props.maxRateLimit)}; empty: the default (${formatNumber(props.defaultRateLimit)}).`}
            value={props.values?.rateLimit}
            errors={props.errors}
            inputmode="numeric"
          />
        </div>
        <fieldset aria-invalid={scopeError ? "true" : undefined}>
          <legend>Scopes</legend>
          <label>
            <input type="checkbox" name="scopes" value="read" checked={scopes.includes("read")} /> read (GET)
          </label>
          <label>
            <input type="checkbox" name="scopes" value="write" checked={scopes.includes("write")} /> write
            (POST, DELETE)
          </label>
          {scopeError ? <div class="field-error">{scopeError}</div> : null}
        </fieldset>
        <div class="actions">
          <button type="submit">Create key</button>
        </div>
      </PostForm>
    </section>
  );
}

export function KeyList(props: {
  rows: ApiKeyRow[];
  revokeHref: (keyId: string) => string;
  defaultRateLimit: number;
  now: number;
}) {
  return (
    <section class="panel">
      <h2>Keys</h2>
      <Table
        empty="This account has no keys."
        columns={[
          { label: "Key" },
          { label: "Name" },
          { label: "Scopes" },
          { label: "Per minute", num: true },
          { label: "Created" },
          { label: "Expires" },
          { label: "Last used" },
          { label: "Status" },
          { label: "" },
        ]}
        rows={props.rows.map((row) => ({
          id: row.id,
          cells: [
            <code>{keyLabel(row.id)}</code>,
            row.name || <span class="muted">—</span>,
            [...parseScopes(row.scopes)].join(", "),
            row.rateLimitPerMinute === null ? (
              <span class="muted">{formatNumber(props.defaultRateLimit)} (default)</span>
            ) : (
              formatNumber(row.rateLimitPerMinute)
            ),
            <Time ms={row.createdAt} />,
            <Time ms={row.expiresAt} empty="never" />,
            <Time ms={row.lastUsedAt} empty="never" />,
            <>
              <Badge value={keyStatus(row, props.now)} />
              {row.revokedAt !== null ? (
                <span class="small muted">
                  {" "}
                  <Time ms={row.revokedAt} />
                </span>
              ) : null}
            </>,
            row.revokedAt === null ? <a href={props.revokeHref(row.id)}>Revoke…</a> : null,
          ],
        }))}
      />
    </section>
  );
}

/** The create form's values, validated with the admin API's schema and at most `maxRateLimit` per minute. */
export function readKeyForm(form: Record<string, string | string[]>, maxRateLimit: number) {
  const values: KeyValues = {
    name: text(form, "name"),
    scopes: list(form, "scopes"),
    expires: text(form, "expires_in_days"),
    rateLimit: text(form, "rate_limit_per_minute"),
  };
  const rateMessage = `A whole number from 1 to ${formatNumber(maxRateLimit)}, or empty for the default.`;
  const input = validate(
    CreateKeyBody.refine(
      (body) => body.rate_limit_per_minute === undefined || body.rate_limit_per_minute <= maxRateLimit,
      { path: ["rate_limit_per_minute"] },
    ),
    {
      name: values.name.trim() === "" ? undefined : values.name,
      scopes: values.scopes,
      expires_in_days: optionalInt(form, "expires_in_days"),
      rate_limit_per_minute: optionalInt(form, "rate_limit_per_minute"),
    },
    {
      name: "At most 100 characters.",
      scopes: "Choose at least one scope.",
      expires_in_days: "A whole number of days from 1 to 365, or empty for no expiry.",
      rate_limit_per_minute: rateMessage,
    },
  );
  return { values, input };
}

export function ConfirmRevoke(props: { row: ApiKeyRow; action: string; cancel: string }) {
  const { row } = props;
  return (
    <section class="panel">
      <h2>
        Revoke <code>{keyLabel(row.id)}</code>
        {row.name ? ` “${row.name}”` : ""}?
      </h2>
      <p>
        Every request with this key is refused from the very next one, for good: a revoked key cannot be
        restored. Deploy a replacement first if something still uses it.
      </p>
      <PostForm action={props.action} class="actions">
        <button type="submit" class="danger">
          Revoke the key
        </button>
        <a href={props.cancel}>Cancel</a>
      </PostForm>
    </section>
  );
}
