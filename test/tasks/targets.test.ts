import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { REFUSED_NAMES } from "../../containers/ffmpeg/test/support/dns";
import { createApp } from "../../src/app";
import { accounts, creditLedger, tasks } from "../../src/db/schema";
import { record } from "../helpers/answers";
import { BASE, db, newAccount, problem } from "../helpers/api";
import { media } from "../helpers/media";
import { createTaskCall } from "../helpers/task-api";

/**
 * POST /v1/tasks checks source_url, params.watermark_url and webhook by the source rules before it reserves
 * anything (issue 13): IP literals in the Worker; source names resolved by the engine, webhook names by the Worker over DNS over
 * HTTPS (the DoH stand-in, test/support/doh-server.ts). Source names resolve through a
 * production-mode engine whose DNS is a test table (test/support/resolver-engine.ts).
 */

/** POST /v1/tasks through an app whose engine is the resolver engine and private sources are closed. */
async function createResolved(key: string, body: unknown) {
  const ctx = createExecutionContext();
  const request = new Request(`${BASE}/v1/tasks`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const response = await createApp().fetch(
    request,
    { ...env, ENGINE_URL: inject("resolverEngineUrl"), ALLOW_PRIVATE_SOURCES: "false" },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return record(request, response);
}

async function expectNothingReserved(accountId: string, credits: number) {
  const account = await db().select().from(accounts).where(eq(accounts.id, accountId)).get();
  expect(account?.credits).toBe(credits);
  expect(await db().select().from(tasks).where(eq(tasks.accountId, accountId)).all()).toEqual([]);
  const ledger = await db().select().from(creditLedger).where(eq(creditLedger.accountId, accountId)).all();
  expect(ledger.filter((row) => row.kind !== "grant")).toEqual([]);
}

async function expectRefused(response: Response, field: string, message: RegExp) {
  const text = await response.clone().text();
  expect(response.status, text).toBe(400);
  const body = await problem(response);
  expect(body.code).toBe("VALIDATION_INVALID_ARGUMENT");
  expect(body.errors).toEqual([expect.objectContaining({ code: "forbidden_url", field })]);
  expect(body.detail).toMatch(message);
}

describe("webhook names resolving to refused addresses", () => {
  it.each(REFUSED_NAMES)("https://%s/hook: 400 naming webhook, nothing reserved", async (name) => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const response = await createResolved(key, {
      type: "video.probe",
      source_url: "https://public.test/in.mp4",
      webhook: `https://${name}/hook`,
    });
    await expectRefused(response, "webhook", /^webhook resolves to a private or reserved address$/);
    await expectNothingReserved(accountId, 10);
  });
});

describe("task sources by the synchronous routes' rules", () => {
  it.each(REFUSED_NAMES)("source_url on %s: 400 naming source_url, nothing reserved", async (name) => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const response = await createResolved(key, {
      type: "video.probe",
      source_url: `http://${name}/in.mp4`,
    });
    await expectRefused(response, "source_url", /^source_url resolves to a private or reserved address$/);
    await expectNothingReserved(accountId, 10);
  });

  it.each([
    "http://10.0.0.1/in.mp4",
    "http://169.254.169.254/latest",
    "http://[::ffff:a00:1]/x",
    "http://0/",
  ])("the literal %s is refused even where loopback is allowed (the default test env)", async (url) => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const response = await createTaskCall(key, { type: "video.probe", source_url: url });
    await expectRefused(response, "source_url", /^source_url points to a private or reserved address$/);
    await expectNothingReserved(accountId, 10);
  });

  it("a refused logo names params.watermark_url, not source_url", async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const response = await createTaskCall(key, {
      type: "image.watermark",
      source_url: media("photo-3mp.jpg"),
      params: { watermark_url: "http://169.254.169.254/logo.png" },
    });
    await expectRefused(
      response,
      "params.watermark_url",
      /^params\.watermark_url points to a private or reserved address$/,
    );
    await expectNothingReserved(accountId, 10);
  });

  it("a logo on a name resolving to cloud metadata: 400 naming params.watermark_url", async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const response = await createResolved(key, {
      type: "video.watermark",
      source_url: "https://public.test/in.mp4",
      params: { watermark_url: "https://metadata.test/logo.png" },
    });
    await expectRefused(response, "params.watermark_url", /^params\.watermark_url resolves to/);
    await expectNothingReserved(accountId, 10);
  });

  it("every refused field is named at once", async () => {
    const { key } = await newAccount({ credits: 10 });
    const response = await createResolved(key, {
      type: "video.watermark",
      source_url: "https://internal.test/in.mp4",
      params: { watermark_url: "https://metadata.test/logo.png" },
      webhook: "https://loopback.test/hook",
    });
    expect(response.status).toBe(400);
    const body = await problem(response);
    expect(body.errors?.map((e) => e.field).sort()).toEqual([
      "params.watermark_url",
      "source_url",
      "webhook",
    ]);
  });
});

describe("what stays allowed", () => {
  it("public names, and the loopback fixture server where ALLOW_PRIVATE_SOURCES opens loopback", async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const response = await createTaskCall(key, {
      type: "video.probe",
      source_url: media("av.mp4"),
      webhook: `${inject("webhookReceiverUrl")}/hooks/x`,
    });
    expect(response.status).toBe(201);
    const account = await db().select().from(accounts).where(eq(accounts.id, accountId)).get();
    expect(account?.credits).toBeLessThan(10);
  });
});
