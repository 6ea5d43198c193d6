import type { Context } from "hono";
import { getAccount } from "../accounts/service";
import { notFound } from "../ui/error-page";
import { isUlid } from "../util/ulid";
import type { DashboardEnv } from "./context";

/** The account named by the URL, or a readable 404 page. */
export async function loadAccount(c: Context<DashboardEnv>) {
  const id = c.req.param("accountId") ?? "";
  const account = isUlid(id) ? await getAccount(c.get("db"), id) : undefined;
  if (!account) throw notFound("This account");
  return account;
}

/** The confirmation a redirect after an action asks for (`?done=<action>`), from a fixed list only. */
export function doneMessage(c: Context<DashboardEnv>, messages: Record<string, string>) {
  const done = c.req.query("done");
  return done && Object.hasOwn(messages, done) ? messages[done] : undefined;
}
