import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { createAccount } from "../../src/accounts/service";
import { createDb } from "../../src/db/client";
import { createKey, type NewKey } from "../../src/keys/service";
import { record } from "./answers";

export const BASE = "http://api.test";
export const ADMIN_TOKEN = "test-admin-token";

/**
 * A request to the Worker under test, through its real fetch handler. Its answer is recorded and, when the
 * file ends, checked against the OpenAPI document (test/helpers/answers.ts).
 */
export async function send(request: Request) {
  return record(request, await exports.default.fetch(request));
}

/** A request to the Worker under test by path, with a key and a JSON body made for it. */
export function call(path: string, init: RequestInit & { key?: string; json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  if (init.key) headers.set("Authorization", `Bearer ${init.key}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(init.json);
  }
  return send(new Request(`${BASE}${path}`, { ...init, headers, body }));
}

export function admin(path: string, init: RequestInit & { json?: unknown; token?: string } = {}) {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${init.token ?? ADMIN_TOKEN}`);
  return call(path, { ...init, headers });
}

export const db = () => createDb(env.DB);

let counter = 0;

/** A fresh account with a default key (and optionally credits), made through the domain layer. */
export async function newAccount(options: { credits?: number } = {}) {
  const created = await createAccount(
    db(),
    { name: `test-${++counter}`, credits: options.credits ?? 0 },
    Date.now(),
  );
  return {
    accountId: created.account.id,
    key: created.key,
    keyId: created.keyRow.id,
    webhookSecret: created.webhookSecret,
  };
}

export async function newKey(accountId: string, input: NewKey = {}) {
  return (await createKey(db(), accountId, input, Date.now())).key;
}

import { expect } from "vitest";

export async function problem(response: Response) {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return (await response.json()) as Record<string, unknown> & {
    code: string;
    errors?: { field: string; message?: string }[];
  };
}
