import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { getConfig } from "../../src/config/config";
import wranglerToml from "../../wrangler.toml?raw";

const parse = (vars: Record<string, string>) => getConfig(vars as unknown as Env);

describe("webhook retry schedule", () => {
  it("defaults to decisions.md §12: at once, +10 s, +1 min, +10 min, +1 h", () => {
    expect(parse({}).webhookRetryDelaysSeconds).toEqual([0, 10, 60, 600, 3600]);
    expect(parse({ WEBHOOK_RETRY_DELAYS_SECONDS: "" }).webhookRetryDelaysSeconds).toEqual([
      0, 10, 60, 600, 3600,
    ]);
  });

  it("wrangler.toml deploys that schedule; the tests run a fast one (vitest.config.ts)", () => {
    expect(wranglerToml).toMatch(/^WEBHOOK_RETRY_DELAYS_SECONDS = "0,10,60,600,3600"$/m);
    expect(getConfig(env).webhookRetryDelaysSeconds).toEqual([0, 1, 1, 1, 1]);
  });

  it("accepts spaces and any 5 whole seconds up to the 12 h queue limit", () => {
    expect(parse({ WEBHOOK_RETRY_DELAYS_SECONDS: "0, 5, 30, 300, 43200" }).webhookRetryDelaysSeconds).toEqual(
      [0, 5, 30, 300, 43_200],
    );
  });

  it.each([
    "0,10,60,600",
    "0,10,60,600,3600,7200",
    "0,10,x,600,3600",
    "0,,60,600,3600",
    "0,-1,60,600,3600",
    "0,1.5,60,600,3600",
    "0,10,60,600,43201",
  ])("rejects %s", (value) => {
    expect(() => parse({ WEBHOOK_RETRY_DELAYS_SECONDS: value })).toThrow();
  });
});
