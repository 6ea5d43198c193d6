import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { ulid } from "ulid";
import { describe, expect, it, vi } from "vitest";
import { apiKeys } from "../../src/db/schema";
import { revokeKey } from "../../src/keys/service";
import { call, db, newAccount, newKey, problem } from "../helpers/api";

const FULL_FIELDS = ["code", "detail", "instance", "request_id", "status", "title", "type"];

async function expectFullUnauthorized(response: Response) {
  expect(response.status).toBe(401);
  expect(response.headers.get("www-authenticate")).toBe("Bearer");
  const body = await problem(response);
  expect(Object.keys(body).sort()).toEqual(FULL_FIELDS);
  expect(body).toMatchObject({
    type: "http://api.test/errors/authentication",
    title: "Unauthorized",
    status: 401,
    code: "AUTH_UNAUTHORIZED",
    instance: "/v1/tasks",
  });
  expect(body.request_id).toBe(response.headers.get("x-request-id"));
}

async function expectInvalidToken(response: Response) {
  expect(response.status).toBe(401);
  expect(response.headers.get("www-authenticate")).toBe("Bearer");
  expect(response.headers.get("x-request-id")).toMatch(/^[0-9A-Z]{26}$/);
  expect(await problem(response)).toStrictEqual({
    type: "http://api.test/errors/unauthorized",
    title: "Unauthorized",
    status: 401,
    code: "AUTH_INVALID_TOKEN",
  });
}

const secret = "a".repeat(64);

describe("malformed credentials → full AUTH_UNAUTHORIZED body", () => {
  it.each([
    ["missing header", {}],
    ["Basic scheme", { Authorization: `Basic ${btoa("user:pass")}` }],
    ["X-API-Key alone", { "X-API-Key": `p6_${ulid()}:${secret}` }],
    ["token without p6_ prefix", { Authorization: `Bearer ${ulid()}:${secret}` }],
    ["short secret", { Authorization: `Bearer p6_${ulid()}:${"a".repeat(63)}` }],
    ["non-hex secret", { Authorization: `Bearer p6_${ulid()}:${"g".repeat(64)}` }],
    ["key_id not a ULID", { Authorization: `Bearer p6_${"U".repeat(26)}:${secret}` }],
    ["empty bearer", { Authorization: "Bearer" }],
    ["two tokens", { Authorization: `Bearer p6_${ulid()}:${secret} extra` }],
  ])("%s", async (_name, headers) => {
    await expectFullUnauthorized(await call("/v1/tasks", { headers }));
  });
});

describe("well-formed but failing keys → the four-field AUTH_INVALID_TOKEN body", () => {
  it("unknown key_id", async () => {
    await expectInvalidToken(await call("/v1/tasks", { key: `p6_${ulid()}:${secret}` }));
  });

  it("wrong secret", async () => {
    const { keyId } = await newAccount();
    await expectInvalidToken(await call("/v1/tasks", { key: `p6_${keyId}:${secret}` }));
  });

  it("revoked key: refused on the very next request", async () => {
    const { key, keyId } = await newAccount();
    expect((await call("/v1/tasks", { key })).status).toBe(200);
    await revokeKey(db(), env, keyId, Date.now());
    await expectInvalidToken(await call("/v1/tasks", { key }));
  });

  it("expired key", async () => {
    const { key, keyId } = await newAccount();
    await db()
      .update(apiKeys)
      .set({ expiresAt: Date.now() - 1 })
      .where(eq(apiKeys.id, keyId));
    await expectInvalidToken(await call("/v1/tasks", { key }));
  });

  it("the same body for every case (nothing says which applied)", async () => {
    const { keyId } = await newAccount();
    const bodies = await Promise.all(
      [`p6_${ulid()}:${secret}`, `p6_${keyId}:${secret}`].map(async (key) =>
        (await call("/v1/tasks", { key })).text(),
      ),
    );
    expect(bodies[0]).toBe(bodies[1]);
  });
});

describe("valid keys", () => {
  it("a valid key works and the key id is case-insensitive in hex", async () => {
    const { key } = await newAccount();
    const response = await call("/v1/tasks", {
      key: key.replace(/:(.*)$/, (_m, s: string) => `:${s.toUpperCase()}`),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9A-Z]{26}$/);
  });

  it("a read-only key gets 403 on POST and 200 on GET", async () => {
    const { accountId } = await newAccount();
    const key = await newKey(accountId, { scopes: ["read"] });
    expect((await call("/v1/tasks", { key })).status).toBe(200);
    const response = await call("/v1/tasks", { key, method: "POST", json: {} });
    expect(response.status).toBe(403);
    expect((await problem(response)).code).toBe("PERMISSION_FORBIDDEN");
  });

  it("a write-only key gets 403 on GET", async () => {
    const { accountId } = await newAccount();
    const key = await newKey(accountId, { scopes: ["write"] });
    const response = await call("/v1/tasks", { key });
    expect(response.status).toBe(403);
    expect((await problem(response)).code).toBe("PERMISSION_FORBIDDEN");
  });

  it("last_used_at is recorded after the response", async () => {
    const { key, keyId } = await newAccount();
    expect((await call("/v1/tasks", { key })).status).toBe(200);
    await vi.waitFor(async () => {
      const row = await db().select().from(apiKeys).where(eq(apiKeys.id, keyId)).get();
      expect(row?.lastUsedAt).toBeTypeOf("number");
    });
  });
});
