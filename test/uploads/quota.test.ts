import { describe, expect, it } from "vitest";
import { call, newAccount, problem } from "../helpers/api";
import { TUS } from "./support";

/** The deployment's defaults (wrangler.toml [vars]): 20 incomplete uploads, 50 GiB stored, 5 GiB per upload. */
const MAX_INCOMPLETE = 20;
const MAX_STORED = 50 * 1024 ** 3;
const FIVE_GIB = 5 * 1024 ** 3;

const declare = (key: string, length: number) =>
  call("/v1/uploads", { method: "POST", key, headers: { ...TUS, "Upload-Length": String(length) } });

type Account = {
  uploads: { incomplete: number; max_incomplete: number; stored_bytes: number; max_stored_bytes: number };
};
const accountOf = async (key: string) => (await (await call("/v1/account", { key })).json()) as Account;

describe("upload quotas per account", () => {
  it("the issue's attack: 30 × 5 GiB declared at once; exactly 10 (50 GiB) are admitted, the rest 403", async () => {
    const { key } = await newAccount();
    const answers = await Promise.all(Array.from({ length: 30 }, () => declare(key, FIVE_GIB)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_STORED / FIVE_GIB);
    expect(statuses.filter((s) => s === 403)).toHaveLength(30 - MAX_STORED / FIVE_GIB);
    const refused = await problem(answers.find((r) => r.status === 403)!);
    expect(refused.code).toBe("UPLOAD_QUOTA_EXCEEDED");
    expect(refused.detail).toContain(`limit of ${MAX_STORED} bytes`);
    expect(refused.detail).toContain(`${MAX_STORED} bytes of uploads`);
    expect((await accountOf(key)).uploads).toEqual({
      incomplete: 10,
      max_incomplete: MAX_INCOMPLETE,
      stored_bytes: MAX_STORED,
      max_stored_bytes: MAX_STORED,
    });
    // Deleting one makes room for one.
    const location = new URL(answers.find((r) => r.status === 201)!.headers.get("location")!).pathname;
    expect((await call(location, { method: "DELETE", key, headers: TUS })).status).toBe(204);
    expect((await declare(key, FIVE_GIB)).status).toBe(201);
    expect((await declare(key, 1)).status).toBe(403);
  });

  it("incomplete uploads at once: 30 small ones at once, exactly 20 admitted; direct URLs count", async () => {
    const { key } = await newAccount();
    const answers = await Promise.all(Array.from({ length: 30 }, () => declare(key, 1000)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(MAX_INCOMPLETE);
    const refused = await problem(answers.find((r) => r.status === 403)!);
    expect(refused.detail).toContain(`${MAX_INCOMPLETE} incomplete uploads`);
    expect(refused.detail).toContain(`limit of ${MAX_INCOMPLETE} at once`);
    const direct = await call("/v1/uploads/direct", {
      method: "POST",
      key,
      json: { cors_origin: "https://app.example" },
    });
    expect(direct.status).toBe(403);
    expect((await problem(direct)).code).toBe("UPLOAD_QUOTA_EXCEEDED");
    // A complete upload no longer counts as incomplete.
    const first = new URL(answers.find((r) => r.status === 201)!.headers.get("location")!).pathname;
    const done = await call(first, {
      method: "PATCH",
      key,
      headers: { ...TUS, "Content-Type": "application/offset+octet-stream", "Upload-Offset": "0" },
      body: new Uint8Array(1000),
    });
    expect(done.status).toBe(204);
    const account = await accountOf(key);
    expect(account.uploads).toMatchObject({
      incomplete: MAX_INCOMPLETE - 1,
      stored_bytes: MAX_INCOMPLETE * 1000,
    });
    expect((await declare(key, 10)).status).toBe(201);
  });

  it("an empty account shows zero usage and the limits", async () => {
    const { key } = await newAccount();
    expect((await accountOf(key)).uploads).toEqual({
      incomplete: 0,
      max_incomplete: MAX_INCOMPLETE,
      stored_bytes: 0,
      max_stored_bytes: MAX_STORED,
    });
  });
});
