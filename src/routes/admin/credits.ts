import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { applyBalanceChange, listLedger } from "../../credits/ledger";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { PageQuerySchema, pageFields, pagePosition } from "../../http/pagination";
import { requireAccount } from "./accounts";
import { AccountIdParam, GrantBody, LedgerEntrySchema, PageFields } from "./schema";

const tags = ["Admin"];
const security = [{ AdminToken: [] }];

const grant = createRoute({
  method: "post",
  path: "/admin/v1/accounts/{account_id}/credits",
  operationId: "grantCredits",
  tags,
  security,
  summary: "Grant credits (a ledger row of kind grant)",
  request: {
    params: AccountIdParam,
    body: { required: true, content: { "application/json": { schema: GrantBody } } },
  },
  responses: {
    200: {
      description: "The new balance.",
      content: { "application/json": { schema: z.object({ credits: z.number().int() }) } },
    },
    ...errorResponses(400, 401, 404, 405, 413, 415, 429, 500),
  },
});

const ledger = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{account_id}/ledger",
  operationId: "listLedger",
  tags,
  security,
  summary: "The account's credit ledger, newest first",
  request: { params: AccountIdParam, query: PageQuerySchema },
  responses: {
    200: {
      description: "A page of ledger entries.",
      content: {
        "application/json": { schema: z.object({ results: z.array(LedgerEntrySchema), ...PageFields }) },
      },
    },
    ...errorResponses(400, 401, 404, 405, 429, 500),
  },
});

export function registerAdminCredits(app: OpenAPIHono<AppEnv>) {
  app.openapi(grant, async (c) => {
    const { account_id } = c.req.valid("param");
    const body = c.req.valid("json");
    await requireAccount(c, account_id);
    const credits = await applyBalanceChange(c.get("db"), {
      accountId: account_id,
      kind: "grant",
      amount: body.amount,
      reason: body.reason,
      requestId: c.get("requestId"),
      now: Date.now(),
    });
    return c.json({ credits }, 200);
  });

  app.openapi(ledger, async (c) => {
    const { account_id } = c.req.valid("param");
    await requireAccount(c, account_id);
    const { rows, hasNext } = await listLedger(c.get("db"), account_id, pagePosition(c.req.valid("query")));
    return c.json(
      {
        results: rows.map((row) => ({
          id: row.id,
          kind: row.kind,
          amount: row.amount,
          balance_after: row.balanceAfter,
          task_id: row.taskId,
          request_id: row.requestId,
          reason: row.reason,
          created_at: new Date(row.createdAt).toISOString(),
        })),
        ...pageFields(rows, hasNext),
      },
      200,
    );
  });
}
