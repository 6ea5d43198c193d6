import { describe, expect, it } from "vitest";
import { call, newAccount, newKey, problem } from "../helpers/api";

describe("per-key rate limit", () => {
  it("the 61st request within a minute → 429 with Retry-After; a second key is unaffected", async () => {
    const { accountId, key } = await newAccount();
    const other = await newKey(accountId);
    for (let i = 1; i <= 60; i++) {
      const response = await call("/v1/tasks", { key });
      expect(response.status).toBe(200);
      expect(response.headers.get("ratelimit-policy")).toBe('"default";q=60;w=60');
      expect(response.headers.get("ratelimit")).toMatch(new RegExp(`^"default";r=${60 - i};t=\\d+$`));
    }
    const refused = await call("/v1/tasks", { key });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
    const body = await problem(refused);
    expect(body).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", status: 429, title: "Too Many Requests" });
    expect(body.type).toBe("http://api.test/errors/rate-limit");

    const second = await call("/v1/tasks", { key: other });
    expect(second.status).toBe(200);
    expect(second.headers.get("ratelimit")).toMatch(/^"default";r=59;t=\d+$/);
  });

  it("20 concurrent requests on a 10/min key let exactly 10 through", async () => {
    const { accountId } = await newAccount();
    const key = await newKey(accountId, { rateLimitPerMinute: 10 });
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () => call("/v1/tasks", { key }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
  });

  it("fields are on error responses of authenticated requests too, and the policy shows the override", async () => {
    const { accountId } = await newAccount();
    const key = await newKey(accountId, { rateLimitPerMinute: 5 });
    const response = await call("/v1/tasks/NOT-A-TASK", { key });
    expect(response.status).toBe(404);
    expect(response.headers.get("ratelimit-policy")).toBe('"default";q=5;w=60');
    expect(response.headers.get("ratelimit")).toMatch(/^"default";r=4;t=\d+$/);
  });
});
