import type { Context, Hono } from "hono";
import { accountView, createAccount, listAccounts } from "../../accounts/service";
import type { AccountRow } from "../../db/schema";
import { encodeCursor } from "../../http/cursor";
import { DEFAULT_PAGE_SIZE, pagePosition } from "../../http/pagination";
import { CreateAccountBody } from "../../routes/admin/schema";
import { ErrorSummary, Field, Notice, Pager, PostForm, SecretField, Table, Time } from "../../ui/components";
import { formatNumber } from "../../ui/format";
import { type FieldErrors, optionalInt, text, validate } from "../../ui/forms";
import { NewKey } from "../../ui/keys";
import { query } from "../../ui/query-string";
import type { DashboardEnv } from "../context";
import { paths } from "../paths";
import { render } from "../render";

function CreateAccountForm(props: { values?: { name: string; credits: string }; errors?: FieldErrors }) {
  return (
    <section class="panel">
      <h2>New account</h2>
      <ErrorSummary errors={props.errors} />
      <PostForm action={paths.accounts} class="stack">
        <Field label="Name" name="name" value={props.values?.name} errors={props.errors} required />
        <Field
          label="Opening credits"
          name="credits"
          hint="Granted through the ledger; 0 when empty."
          value={props.values?.credits}
          errors={props.errors}
          inputmode="numeric"
        />
        <div class="actions">
          <button type="submit">Create account</button>
        </div>
      </PostForm>
      <p class="muted small">
        The account gets a webhook signing secret and a default API key, shown once on the next page.
      </p>
    </section>
  );
}

function AccountList(props: { rows: AccountRow[]; next?: string; paged: boolean }) {
  return (
    <section class="panel">
      <h2>All accounts</h2>
      <Table
        empty="No accounts yet."
        columns={[
          { label: "Name" },
          { label: "Account id" },
          { label: "Credits", num: true },
          { label: "Created" },
        ]}
        rows={props.rows.map((row) => ({
          id: row.id,
          cells: [
            <a href={paths.account(row.id)}>{row.name}</a>,
            <code>{row.id}</code>,
            formatNumber(row.credits),
            <Time ms={row.createdAt} />,
          ],
        }))}
      />
      <Pager first={props.paged ? paths.accounts : undefined} next={props.next} />
    </section>
  );
}

async function accountsPage(
  c: Context<DashboardEnv>,
  form?: { values: { name: string; credits: string }; errors: FieldErrors },
) {
  const cursor = c.req.query("cursor");
  const { rows, hasNext } = await listAccounts(
    c.get("db"),
    pagePosition({ cursor, limit: DEFAULT_PAGE_SIZE }),
  );
  const next = hasNext ? `${paths.accounts}${query({ cursor: encodeCursor(rows.at(-1)!.id) })}` : undefined;
  return render(
    c,
    "Accounts",
    <>
      <h1>Accounts</h1>
      <div class="split">
        <AccountList rows={rows} next={next} paged={Boolean(cursor)} />
        <CreateAccountForm values={form?.values} errors={form?.errors} />
      </div>
    </>,
    form ? 400 : 200,
  );
}

function AccountCreated(props: { created: Awaited<ReturnType<typeof createAccount>> }) {
  const { account, key, keyRow, webhookSecret } = props.created;
  const view = accountView(account);
  return (
    <>
      <div class="crumbs">
        <a href={paths.accounts}>Accounts</a> / <code>{view.id}</code>
      </div>
      <h1>Account created: {view.name}</h1>
      <Notice kind="ok">
        {view.name} has {formatNumber(view.credits)} credits, a webhook signing secret and a default API key.
      </Notice>
      <NewKey keyRow={keyRow} fullKey={key} />
      <section class="panel">
        <h2>Webhook signing secret</h2>
        <p class="muted">Can be revealed again and rotated on the account's webhook page.</p>
        <SecretField id="webhook-secret" label="Webhook signing secret" value={webhookSecret} />
      </section>
      <p>
        <a class="button" href={paths.account(view.id)}>
          Open the account
        </a>
      </p>
    </>
  );
}

export function registerAccounts(app: Hono<DashboardEnv>) {
  app.get("/", (c) => c.redirect(paths.accounts, 303));
  app.get("/accounts", (c) => accountsPage(c));

  app.post("/accounts", async (c) => {
    const form = c.get("form");
    const values = { name: text(form, "name"), credits: text(form, "credits") };
    const input = validate(
      CreateAccountBody,
      { name: values.name, credits: optionalInt(form, "credits") },
      {
        name: "Give the account a name (at most 200 characters).",
        credits: "A whole number of credits from 0 to 1,000,000,000, or empty for none.",
      },
    );
    if (!input.ok) return accountsPage(c, { values, errors: input.errors });
    const created = await createAccount(
      c.get("db"),
      { name: input.value.name, credits: input.value.credits ?? 0 },
      Date.now(),
    );
    // The full default key is in this response only: no redirect that would have to carry it.
    return render(c, `Account created: ${created.account.name}`, <AccountCreated created={created} />, 201);
  });
}
