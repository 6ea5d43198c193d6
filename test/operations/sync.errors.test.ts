import { env } from "cloudflare:test";
import { and, eq, isNull } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { creditLedger, files, idempotencyRecords } from "../../src/db/schema";
import { call, db, newAccount, newKey, problem } from "../helpers/api";
import { fixture, idemKey, media, operate, operateWith } from "../helpers/media";

const ROUTES = ["/v1/video/extract-audio", "/v1/video/probe"] as const;

async function expectProblem(response: Response, status: number, code: string) {
  const text = await response.clone().text();
  expect(response.status, text).toBe(status);
  const body = await problem(response);
  expect(body.code).toBe(code);
  return body;
}

async function ledger(accountId: string) {
  return db().select().from(creditLedger).where(eq(creditLedger.accountId, accountId)).all();
}

async function charges(accountId: string) {
  return (await ledger(accountId)).filter((row) => row.kind !== "grant");
}

describe.each(ROUTES)("%s: every listed error", (path) => {
  it("400: missing source_url, unknown params key, bad Idempotency-Key, missing Idempotency-Key", async () => {
    const { key } = await newAccount({ credits: 10 });
    let body = await expectProblem(
      await operate(path, key, { params: {} }),
      400,
      "VALIDATION_INVALID_ARGUMENT",
    );
    expect(body.errors?.map((e) => e.field)).toContain("source_url");
    body = await expectProblem(
      await operate(path, key, { source_url: media("av.mp4"), params: { nope: 1 } }),
      400,
      "VALIDATION_INVALID_ARGUMENT",
    );
    expect(body.errors?.map((e) => e.field)).toContain("params.nope");
    body = await expectProblem(
      await operate(path, key, { source_url: "ftp://example.com/a.mp4" }),
      400,
      "VALIDATION_INVALID_ARGUMENT",
    );
    expect(body.errors?.map((e) => e.field)).toContain("source_url");
    // Not a URL at all: a 400 naming the field, not an exception in the URL check.
    for (const notUrl of ["a.mp4", "http://", "http://exa mple.com/a.mp4"]) {
      body = await expectProblem(
        await operate(path, key, { source_url: notUrl }),
        400,
        "VALIDATION_INVALID_ARGUMENT",
      );
      expect(body.errors?.map((e) => e.field)).toContain("source_url");
    }
    body = await expectProblem(
      await operate(path, key, { source_url: media("av.mp4") }, { idempotencyKey: null }),
      400,
      "VALIDATION_INVALID_ARGUMENT",
    );
    expect(body.errors?.map((e) => e.field)).toEqual(["Idempotency-Key"]);
    body = await expectProblem(
      await operate(path, key, { source_url: media("av.mp4") }, { idempotencyKey: "tab\there" }),
      400,
      "VALIDATION_INVALID_ARGUMENT",
    );
    expect(body.errors?.map((e) => e.field)).toEqual(["Idempotency-Key"]);
    await expectProblem(
      await operate(path, key, { source_url: media("av.mp4") }, { idempotencyKey: "x".repeat(256) }),
      400,
      "VALIDATION_INVALID_ARGUMENT",
    );
  });

  it("401 without a key", async () => {
    await expectProblem(
      await call(path, { method: "POST", json: { source_url: media("av.mp4") } }),
      401,
      "AUTH_UNAUTHORIZED",
    );
  });

  it("402 before any work when credits are short; nothing recorded", async () => {
    const { key, accountId } = await newAccount({ credits: 0 });
    await expectProblem(
      await operate(path, key, { source_url: media("av.mp4") }),
      402,
      "INSUFFICIENT_CREDITS",
    );
    expect(await charges(accountId)).toEqual([]);
  });

  it("409 while the first request with the key still runs; 422 for the same key with another body", async () => {
    const { key } = await newAccount({ credits: 10 });
    const idempotencyKey = idemKey();
    const first = operate(path, key, { source_url: fixture("/slow/av.mp4?kbps=150") }, { idempotencyKey });
    await new Promise((r) => setTimeout(r, 300));
    await expectProblem(
      await operate(path, key, { source_url: fixture("/slow/av.mp4?kbps=150") }, { idempotencyKey }),
      409,
      "RESOURCE_CONFLICT",
    );
    await expectProblem(
      await operate(path, key, { source_url: media("other.mp4") }, { idempotencyKey }),
      422,
      "IDEMPOTENCY_KEY_REUSE",
    );
    expect((await first).status).toBe(200);
  });

  it("413: a source over the size limit, and a JSON body over 1 MiB", async () => {
    const { key } = await newAccount({ credits: 10 });
    const body = await expectProblem(
      await operate(path, key, { source_url: fixture("/huge") }),
      413,
      "REQUEST_BODY_TOO_LARGE",
    );
    expect(body.detail).toMatch(/MiB|GiB|limit/i);
    await expectProblem(
      await operate(path, key, { source_url: media("av.mp4"), params: { pad: "x".repeat(1_100_000) } }),
      413,
      "REQUEST_BODY_TOO_LARGE",
    );
  });

  it("415: a text file named .mp4, a truncated file, and a body that is not JSON", async () => {
    const { key } = await newAccount({ credits: 10 });
    await expectProblem(
      await operate(path, key, { source_url: media("text.mp4") }),
      415,
      "CONTENT_TYPE_UNSUPPORTED",
    );
    await expectProblem(
      await operate(path, key, { source_url: media("truncated.mp4") }),
      415,
      "CONTENT_TYPE_UNSUPPORTED",
    );
    const response = await call(path, {
      method: "POST",
      key,
      headers: { "Content-Type": "text/plain", "Idempotency-Key": idemKey() },
      body: "source_url=x",
    });
    await expectProblem(response, 415, "CONTENT_TYPE_UNSUPPORTED");
  });

  it("429 past the key's rate limit", async () => {
    const { accountId } = await newAccount({ credits: 10 });
    const key = await newKey(accountId, { rateLimitPerMinute: 1 });
    await operate(path, key, { source_url: media("av.mp4") });
    const response = await operate(path, key, { source_url: media("av.mp4") });
    await expectProblem(response, 429, "RATE_LIMIT_EXCEEDED");
    expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("500 on an internal fault, leaking nothing, charging nothing", async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const response = await operateWith({ FILE_SIGNING_SECRET: "" }, path, key, {
      source_url: media("av.mp4"),
    });
    if (path.endsWith("probe")) {
      expect(response.status).toBe(200); // probe produces no file, needs no signing
    } else {
      const body = await expectProblem(response, 500, "INTERNAL");
      expect(JSON.stringify(body)).not.toMatch(/FILE_SIGNING_SECRET|stack/);
      expect(await charges(accountId)).toEqual([]);
    }
  });

  it("502 when the source answers 404, refuses or hangs up; the cause is named", async () => {
    const { key } = await newAccount({ credits: 10 });
    const body = await expectProblem(
      await operate(path, key, { source_url: fixture("/status/404") }),
      502,
      "SOURCE_UNREACHABLE",
    );
    expect(body.detail).toMatch(/404/);
    await expectProblem(
      await operate(path, key, { source_url: "http://127.0.0.1:9/x.mp4" }),
      502,
      "SOURCE_UNREACHABLE",
    );
  });

  it("503 when the media engine is unreachable", async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    await expectProblem(
      await operateWith({ ENGINE_URL: "http://127.0.0.1:9" }, path, key, { source_url: media("av.mp4") }),
      503,
      "SERVICE_UNAVAILABLE",
    );
    expect(await charges(accountId)).toEqual([]);
  });

  it("504 past the synchronous budget: aborted, nothing charged, the key released", async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const body = await expectProblem(
      await operateWith({ SYNC_TIMEOUT_SECONDS: "1" }, path, key, { source_url: fixture("/hang") }),
      504,
      "PROCESSING_TIMEOUT",
    );
    expect(body.detail).toMatch(/POST \/v1\/tasks/);
    expect(await charges(accountId)).toEqual([]);
  });
});

describe("idempotency", () => {
  it("a repeat replays the stored response with Idempotent-Replayed and no second charge", async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const idempotencyKey = idemKey();
    const body = { source_url: media("av.mp4"), params: { format: "wav" } };
    const first = await operate("/v1/video/extract-audio", key, body, { idempotencyKey });
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await operate(
      "/v1/video/extract-audio",
      key,
      { params: { format: "wav" }, source_url: media("av.mp4") },
      { idempotencyKey },
    );
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(await first.text());
    const rows = await ledger(accountId);
    expect(rows.filter((r) => r.kind === "charge").map((r) => r.amount)).toEqual([-2]);
  });

  it("keys are scoped to the account", async () => {
    const a = await newAccount({ credits: 10 });
    const b = await newAccount({ credits: 10 });
    const idempotencyKey = idemKey();
    expect(
      (await operate("/v1/video/probe", a.key, { source_url: media("av.mp4") }, { idempotencyKey })).status,
    ).toBe(200);
    const other = await operate(
      "/v1/video/probe",
      b.key,
      { source_url: media("short.mp4") },
      { idempotencyKey },
    );
    expect(other.status).toBe(200);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
  });

  it("a stored 415 is replayed; a transient failure releases the key for a retry", async () => {
    const { key } = await newAccount({ credits: 10 });
    const k1 = idemKey();
    expect(
      (await operate("/v1/video/probe", key, { source_url: media("text.mp4") }, { idempotencyKey: k1 }))
        .status,
    ).toBe(415);
    const replay = await operate(
      "/v1/video/probe",
      key,
      { source_url: media("text.mp4") },
      { idempotencyKey: k1 },
    );
    expect(replay.status).toBe(415);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");

    const k2 = idemKey();
    expect(
      (await operate("/v1/video/probe", key, { source_url: fixture("/status/503") }, { idempotencyKey: k2 }))
        .status,
    ).toBe(502);
    const retry = await operate(
      "/v1/video/probe",
      key,
      { source_url: fixture("/status/503") },
      { idempotencyKey: k2 },
    );
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
  });

  it("20 concurrent identical requests with one key → one execution, one charge", async () => {
    const { key, accountId } = await newAccount({ credits: 100 });
    const idempotencyKey = idemKey();
    const body = { source_url: media("av.mp4"), params: { format: "wav" } };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => operate("/v1/video/extract-audio", key, body, { idempotencyKey })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    const executed = responses.filter(
      (r) => r.status === 200 && r.headers.get("idempotent-replayed") === null,
    );
    expect(executed).toHaveLength(1);
    const charges = (await ledger(accountId)).filter((r) => r.kind === "charge");
    expect(charges).toHaveLength(1);
    const account = await db().query.accounts.findFirst({ where: (a, { eq: e }) => e(a.id, accountId) });
    expect(account?.credits).toBe(98);
  });

  it("X-Debug-Timing adds Server-Timing with auth, engine, fetch, process, store and total", async () => {
    const { key } = await newAccount({ credits: 10 });
    const response = await operate(
      "/v1/video/extract-audio",
      key,
      { source_url: media("av.mp4") },
      { headers: { "X-Debug-Timing": "1" } },
    );
    expect(response.status).toBe(200);
    const timing = response.headers.get("server-timing") ?? "";
    for (const phase of ["auth", "engine", "fetch", "process", "store", "total"])
      expect(timing).toMatch(new RegExp(`${phase};dur=`));
    // The engine's round trip holds its own fetch and process.
    const dur = (phase: string) => Number(new RegExp(`${phase};dur=([\\d.]+)`).exec(timing)?.[1]);
    expect(dur("engine")).toBeGreaterThanOrEqual(dur("fetch") + dur("process") - 2);
    expect(
      (await operate("/v1/video/probe", key, { source_url: media("av.mp4") })).headers.get("server-timing"),
    ).toBeNull();
  });
});

describe("never a negative balance", () => {
  it("concurrent distinct requests on a balance for one: one succeeds, the rest 402", async () => {
    const { key, accountId } = await newAccount({ credits: 2 });
    const responses = await Promise.all(
      Array.from({ length: 4 }, () =>
        operate("/v1/video/extract-audio", key, { source_url: media("av.mp4") }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(3);
    const account = await db().query.accounts.findFirst({ where: (a, { eq: e }) => e(a.id, accountId) });
    expect(account?.credits).toBe(0);
    // The charge and the remembered response are one batch: the losers kept neither a response nor a file.
    expect((await charges(accountId)).map((row) => row.kind)).toEqual(["charge"]);
    const records = await db()
      .select()
      .from(idempotencyRecords)
      .where(eq(idempotencyRecords.accountId, accountId));
    expect(records.map((row) => [row.state, row.responseStatus])).toEqual([["completed", 200]]);
    const kept = await db()
      .select()
      .from(files)
      .where(and(eq(files.accountId, accountId), isNull(files.deletedAt)));
    expect(kept).toHaveLength(1);
    expect(await env.FILES.head(kept[0]!.r2Key)).not.toBeNull();
  });
});
