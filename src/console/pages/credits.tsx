import type { Hono } from "hono";
import { getAccount } from "../../accounts/service";
import { listLedger } from "../../credits/ledger";
import { encodeCursor } from "../../http/cursor";
import { DEFAULT_PAGE_SIZE, pagePosition } from "../../http/pagination";
import { formatNumber } from "../../ui/format";
import { Ledger } from "../../ui/ledger";
import { query } from "../../ui/query-string";
import type { ConsoleEnv } from "../context";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";

export function registerCreditPages(app: Hono<ConsoleEnv>) {
  app.get("/credits", async (c) => {
    const accountId = c.get("user").accountId;
    const cursor = c.req.query("cursor");
    const [account, { rows, hasNext }] = await Promise.all([
      getAccount(c.get("db"), accountId),
      listLedger(c.get("db"), accountId, pagePosition({ cursor, limit: DEFAULT_PAGE_SIZE })),
    ]);
    const next = hasNext
      ? `${consolePaths.credits}${query({ cursor: encodeCursor(rows.at(-1)!.id) })}`
      : undefined;
    return renderConsole(
      c,
      { title: "Credits", tab: "credits" },
      <>
        <h1>Credits</h1>
        <section class="panel">
          <h2>Balance</h2>
          <p class="big" data-balance>
            {formatNumber(account?.credits ?? 0)}
          </p>
        </section>
        <Ledger
          rows={rows}
          taskHref={consolePaths.task}
          first={cursor ? consolePaths.credits : undefined}
          next={next}
        />
      </>,
    );
  });
}
