import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { accountView, createAccount, getAccount, listAccounts } from "../../accounts/service";
import { ApiError } from "../../errors/api-error";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { PageQuerySchema, pageFields, pagePosition } from "../../http/pagination";
import { keyView } from "../../keys/service";
import { AccountIdParam, AccountSchema, CreateAccountBody, CreatedAccountSchema, PageFields } from "./schema";

const tags = ["Admin"];
const security = [{ AdminToken: [] }];

const create = createRoute({
  method: "post",
  path: "/admin/v1/accounts",
  operationId: "createAccount",
  tags,
  security,
  summary: "Create an account (with its webhook secret and a default API key)",
  request: { body: { required: true, content: { "application/json": { schema: CreateAccountBody } } } },
  responses: {
    201: { description: "Created.", content: { "application/json": { schema: CreatedAccountSchema } } },
    ...errorResponses(400, 401, 404, 405, 413, 415, 429, 500),
  },
});

const list = createRoute({
  method: "get",
  path: "/admin/v1/accounts",
  operationId: "listAccounts",
  tags,
  security,
  summary: "List accounts, newest first",
  request: { query: PageQuerySchema },
  responses: {
    200: {
      description: "A page of accounts.",
      content: {
        "application/json": { schema: z.object({ results: z.array(AccountSchema), ...PageFields }) },
      },
    },
    ...errorResponses(400, 401, 404, 405, 429, 500),
  },
});

const get = createRoute({
  method: "get",
  path: "/admin/v1/accounts/{account_id}",
  operationId: "getAccount",
  tags,
  security,
  summary: "Get an account",
  request: { params: AccountIdParam },
  responses: {
    200: { description: "The account.", content: { "application/json": { schema: AccountSchema } } },
    ...errorResponses(401, 404, 405, 429, 500),
  },
});

/** The account or a 404; shared by every /accounts/{account_id}/… route. */
export async function requireAccount(
  c: { get: (key: "db") => AppEnv["Variables"]["db"] },
  accountId: string,
) {
  const account = await getAccount(c.get("db"), accountId);
  if (!account) throw new ApiError("RESOURCE_NOT_FOUND", `Account ${accountId} does not exist.`);
  return account;
}

export function registerAdminAccounts(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    const now = Date.now();
    const created = await createAccount(c.get("db"), { name: body.name, credits: body.credits ?? 0 }, now);
    return c.json(
      {
        ...accountView(created.account),
        webhook_secret: created.webhookSecret,
        api_key: { ...keyView(created.keyRow), key: created.key },
      },
      201,
    );
  });

  app.openapi(list, async (c) => {
    const { rows, hasNext } = await listAccounts(c.get("db"), pagePosition(c.req.valid("query")));
    return c.json({ results: rows.map(accountView), ...pageFields(rows, hasNext) }, 200);
  });

  app.openapi(get, async (c) => {
    const account = await requireAccount(c, c.req.valid("param").account_id);
    return c.json(accountView(account), 200);
  });
}
