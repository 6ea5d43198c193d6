import type { AccountRow } from "../../db/schema";
import { formatNumber } from "../../ui/format";
import { paths } from "../paths";

const TABS = [
  ["overview", "Balance & ledger", paths.account],
  ["keys", "API keys", paths.keys],
  ["webhook", "Webhook secret", paths.webhookSecret],
  ["tasks", "Tasks", paths.tasks],
] as const;

export type AccountTab = (typeof TABS)[number][0];

/** Breadcrumbs, the account's name and its tabs: the top of every account page. */
export function AccountHeader(props: { account: AccountRow; tab: AccountTab; title?: string }) {
  const { account } = props;
  return (
    <>
      <div class="crumbs">
        <a href={paths.accounts}>Accounts</a> / <code>{account.id}</code>
      </div>
      <h1>
        {account.name} <span class="muted small">{formatNumber(account.credits)} credits</span>
      </h1>
      <nav class="tabs" aria-label="Account">
        {TABS.map(([tab, label, href]) => (
          <a href={href(account.id)} aria-current={tab === props.tab ? "page" : undefined}>
            {label}
          </a>
        ))}
      </nav>
    </>
  );
}
