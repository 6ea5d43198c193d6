import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { e2eService } from "./service.ts";

const { dir, base, apiKey } = await e2eService();

describe("the README's first command, on a fresh copy", () => {
  it("the service answers with the printed key", async () => {
    const response = await fetch(`${base}/v1/tasks`, { headers: { Authorization: `Bearer ${apiKey}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      has_next: expect.any(Boolean),
      next_cursor: expect.any(String),
    });
    expect(response.headers.get("ratelimit-policy")).toBe('"default";q=60;w=60');
  });

  it("the dev account holds 10,000 credits and the admin CLI reaches it", async () => {
    const run = (...args: string[]) => {
      try {
        return execFileSync("npm", ["run", "--silent", "admin", "--", ...args], {
          cwd: dir,
          encoding: "utf8",
          env: { ...process.env, ADMIN_URL: base },
        });
      } catch (error) {
        const { stdout, stderr } = error as { stdout: string; stderr: string };
        throw new Error(`npm run admin -- ${args.join(" ")} failed:\n${stdout}\n${stderr}`);
      }
    };
    const accounts = JSON.parse(run("accounts", "list")) as { results: { id: string; name: string }[] };
    const dev = accounts.results.find((a) => a.name === "Local development");
    expect(dev).toBeDefined();
    const ledger = JSON.parse(run("ledger", dev!.id)) as {
      results: { kind: string; amount: number; reason: string }[];
    };
    expect(ledger.results.at(-1)).toMatchObject({ kind: "grant", amount: 10_000, reason: "opening balance" });
    const key = JSON.parse(run("keys", "create", dev!.id, "--name", "e2e", "--scopes", "read")) as {
      key: string;
    };
    const response = await fetch(`${base}/v1/tasks`, { headers: { Authorization: `Bearer ${key.key}` } });
    expect(response.status).toBe(200);
  });

  it("public documentation is served", async () => {
    expect((await fetch(`${base}/v1/openapi.json`)).status).toBe(200);
    expect((await fetch(`${base}/docs`)).status).toBe(200);
  });
});
