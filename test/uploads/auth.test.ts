import { describe, expect, it } from "vitest";
import { call, newAccount, newKey, problem } from "../helpers/api";

/** The API-key cases every upload route with a key passes: no key 401, a key without the scope 403. */
const ROUTES: { method: string; path: string; scope: "read" | "write"; json?: unknown }[] = [
  { method: "GET", path: "/v1/uploads", scope: "read" },
  { method: "GET", path: "/v1/uploads/01JD5Z8X4QK3M7R2T9V6W1Y0AB", scope: "read" },
  { method: "GET", path: "/v1/uploads/01JD5Z8X4QK3M7R2T9V6W1Y0AB/content", scope: "read" },
  {
    method: "POST",
    path: "/v1/uploads/direct",
    scope: "write",
    json: { cors_origin: "https://app.example" },
  },
];

describe.each(ROUTES)("$method $path", ({ method, path, scope, json }) => {
  it("401 without a key, with WWW-Authenticate", async () => {
    const response = await call(path, { method, ...(json ? { json } : {}) });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
    expect((await problem(response)).code).toBe("AUTH_UNAUTHORIZED");
  });

  it(`403 for a key without the ${scope} scope`, async () => {
    const { accountId } = await newAccount();
    const other = await newKey(accountId, { scopes: [scope === "read" ? "write" : "read"] });
    const response = await call(path, { method, key: other, ...(json ? { json } : {}) });
    expect(response.status).toBe(403);
    expect((await problem(response)).code).toBe("PERMISSION_FORBIDDEN");
  });
});
