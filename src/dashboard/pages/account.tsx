import type { Context, Hono } from "hono";
import { applyBalanceChange, listLedger } from "../../credits/ledger";
import type { AccountRow, UserRow } from "../../db/schema";
import { encodeCursor } from "../../http/cursor";
import { DEFAULT_PAGE_SIZE, pagePosition } from "../../http/pagination";
import { GrantBody } from "../../routes/admin/schema";
import { ErrorSummary, Field, Notice, PostForm, Table, Time } from "../../ui/components";
import { formatNumber } from "../../ui/format";
import { type FieldErrors, optionalInt, text, validate } from "../../ui/forms";
import { Ledger } from "../../ui/ledger";
import { query } from "../../ui/query-string";
import { listAccountUsers } from "../../users/service";
import type { DashboardEnv } from "../context";
import { doneMessage, loadAccount } from "../load";
import { paths } from "../paths";
import { render } from "../render";
import { AccountHeader } from "../views/account-header";

type GrantValues = { amount: string; reason: string };

function GrantForm(props: { account: AccountRow; values?: GrantValues; errors?: FieldErrors }) {
  return (
    <section class="panel">
      <h2>Grant credits</h2>
      <ErrorSummary errors={props.errors} />
      <PostForm action={paths.credits(props.account.id)} class="stack">
        <Field
          label="Amount"
          name="amount"
          value={props.values?.amount}
          errors={props.errors}
          inputmode="numeric"
          required
        />
        <Field
          label="Reason"
          name="reason"
          hint="Recorded in the ledger, e.g. an invoice number."
          value={props.values?.reason}
          errors={props.errors}
          required
        />
        <div class="actions">
          <button type="submit">Grant</button>
        </div>
      </PostForm>
    </section>
  );
}

/** Who signs in to the customer console for this account (never their password hashes). */
function Users(props: { users: UserRow[] }) {
  return (
    <section class="panel">
      <h2>Users</h2>
      <Table
        empty="No one signs in to the console for this account (created through the admin API)."
        columns={[{ label: "Email" }, { label: "Role" }, { label: "Email verified" }, { label: "Created" }]}
        rows={props.users.map((user) => ({
          id: user.id,
          cells: [
            user.email,
            user.role,
            <Time ms={user.emailVerifiedAt} empty="not verified" />,
            <Time ms={user.createdAt} />,
          ],
        }))}
      />
    </section>
  );
}

async function accountPage(
  c: Context<DashboardEnv>,
  account: AccountRow,
  grant?: { values: GrantValues; errors: FieldErrors },
) {
  const cursor = c.req.query("cursor");
  const [{ rows, hasNext }, users] = await Promise.all([
    listLedger(c.get("db"), account.id, pagePosition({ cursor, limit: DEFAULT_PAGE_SIZE })),
    listAccountUsers(c.get("db"), account.id),
  ]);
  const next = hasNext
    ? `${paths.account(account.id)}${query({ cursor: encodeCursor(rows.at(-1)!.id) })}`
    : undefined;
  const done = doneMessage(c, { granted: "Credits granted; the ledger shows the new entry." });
  return render(
    c,
    account.name,
    <>
      <AccountHeader account={account} tab="overview" />
      {done ? <Notice kind="ok">{done}</Notice> : null}
      <div class="grid">
        <section class="panel">
          <h2>Balance</h2>
          <p class="big">{formatNumber(account.credits)}</p>
          <p class="muted small">
            Credits. Created <Time ms={account.createdAt} />.
          </p>
        </section>
        <GrantForm account={account} values={grant?.values} errors={grant?.errors} />
      </div>
      <Users users={users} />
      <Ledger
        rows={rows}
        taskHref={(taskId) => paths.task(account.id, taskId)}
        first={cursor ? paths.account(account.id) : undefined}
        next={next}
      />
    </>,
    grant ? 400 : 200,
  );
}

export function registerAccount(app: Hono<DashboardEnv>) {
  app.get("/accounts/:accountId", async (c) => accountPage(c, await loadAccount(c)));

  app.post("/accounts/:accountId/credits", async (c) => {
    const account = await loadAccount(c);
    const form = c.get("form");
    const values = { amount: text(form, "amount"), reason: text(form, "reason") };
    const input = validate(
      GrantBody,
      { amount: optionalInt(form, "amount"), reason: values.reason },
      {
        amount: "A whole number of credits from 1 to 1,000,000,000.",
        reason: "Say why (at most 500 characters); it is kept in the ledger.",
      },
    );
    if (!input.ok) return accountPage(c, account, { values, errors: input.errors });
    // The same domain call as POST /admin/v1/accounts/{id}/credits: one ledger row with this request's id.
    await applyBalanceChange(c.get("db"), {
      accountId: account.id,
      kind: "grant",
      amount: input.value.amount,
      reason: input.value.reason,
      requestId: c.get("requestId"),
      now: Date.now(),
    });
    return c.redirect(`${paths.account(account.id)}${query({ done: "granted" })}`, 303);
  });
}
