import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { record } from "../helpers/answers";
import { BASE, newAccount } from "../helpers/api";

/**
 * The statements the Worker prepares on D1 while it serves one request and finishes its waitUntil work: the
 * binding is wrapped so every `prepare` is seen (drizzle prepares each statement, batched or not).
 */
async function d1StatementsOf(path: string, key: string, init: RequestInit = {}) {
  const statements: string[] = [];
  const db = env.DB;
  const watched = new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare")
        return (sql: string) => {
          statements.push(sql);
          return target.prepare(sql);
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const ctx = createExecutionContext();
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${key}`);
  const request = new Request(`${BASE}${path}`, { ...init, headers });
  const response = record(request, await createApp().fetch(request, { ...env, DB: watched }, ctx));
  await response.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return { status: response.status, statements };
}

const writes = (statements: string[]) =>
  statements.filter((sql) => /^\s*(insert|update|delete|replace)\b/i.test(sql));

describe("the request path's global writes", () => {
  // Reads answered with a key: neither the answer nor what follows it (the request log) writes to D1, the one
  // database every account shares (docs/decisions.md "Request log").
  it.each([
    ["a list", "/v1/tasks", 200],
    ["an unknown task", "/v1/tasks/01ARZ3NDEKTSV4RRFFQ69G5FAV", 404],
    ["the account", "/v1/account", 200],
    ["an unknown route", "/v1/nothing-here", 404],
  ])("%s: no D1 write", async (_name, path, status) => {
    const { key } = await newAccount();
    const first = await d1StatementsOf(path, key);
    expect(first.status).toBe(status);
    expect(writes(first.statements)).toEqual([]);
    const again = await d1StatementsOf(path, key);
    expect(writes(again.statements)).toEqual([]);
  });
});
