import { describe, expect, it, vi } from "vitest";
import { call, newAccount, problem } from "../../helpers/api";
import { insertTask } from "../../helpers/tasks";

type Page = {
  has_next: boolean;
  next_cursor: string;
  results: { id: string; status: string; created_at: string }[];
};

async function page(key: string, query: string) {
  const response = await call(`/v1/tasks${query}`, { key });
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
}

describe("GET /v1/tasks/{id}", () => {
  it("returns the Task shape", async () => {
    const { accountId, key } = await newAccount();
    const started = Date.now() - 5000;
    const row = await insertTask(accountId, {
      status: "succeeded",
      createdAt: started - 1000,
      startedAt: started,
      completedAt: started + 2500,
      outputs: JSON.stringify([
        { kind: "image", file_id: "01JD5Z8X4QK3M7R2T9V6W1Y0AB", name: "out.webp", format: "webp" },
      ]),
    });
    const response = await call(`/v1/tasks/${row.id}`, { key });
    expect(response.status).toBe(200);
    const task = (await response.json()) as Record<string, unknown> & { outputs: { url: string }[] };
    expect(task).toMatchObject({
      id: row.id,
      status: "succeeded",
      task_type: "image.watermark",
      source: "api",
      progress: 1,
      data_removed: false,
      error: null,
      metrics: { total_time: 3.5, queue_time: 1, processing_time: 2.5 },
      urls: {
        get: `http://api.test/v1/tasks/${row.id}`,
        cancel: `http://api.test/v1/tasks/${row.id}/cancel`,
      },
    });
    expect(task.created_at).toBe(new Date(started - 1000).toISOString());
    expect(task.outputs[0]).toMatchObject({ kind: "image", format: "webp" });
    expect(task.outputs[0]!.url).toMatch(
      /^http:\/\/api\.test\/files\/01JD5Z8X4QK3M7R2T9V6W1Y0AB\/out\.webp\?expires=\d+&signature=[0-9a-f]{64}$/,
    );
  });

  it("a failed task carries error {code, message, request_id} and no outputs; a queued one nulls", async () => {
    const { accountId, key } = await newAccount();
    const failed = await insertTask(accountId, {
      status: "failed",
      errorCode: "SOURCE_UNREACHABLE",
      errorMessage: "Upstream answered 404.",
      completedAt: Date.now(),
    });
    const body = (await (await call(`/v1/tasks/${failed.id}`, { key })).json()) as Record<string, unknown>;
    expect(body.error).toEqual({
      code: "SOURCE_UNREACHABLE",
      message: "Upstream answered 404.",
      request_id: failed.requestId,
    });
    expect(body.outputs).toEqual([]);
    const queued = await insertTask(accountId);
    const q = (await (await call(`/v1/tasks/${queued.id}`, { key })).json()) as Record<string, unknown>;
    expect(q).toMatchObject({
      status: "queued",
      started_at: null,
      completed_at: null,
      metrics: { total_time: 0 },
    });
  });

  it("another account's task → 404, as does an unknown or malformed id", async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const row = await insertTask(owner.accountId);
    for (const id of [row.id, "01JD5Z8X4QK3M7R2T9V6W1Y0AB", "not-a-ulid"]) {
      const response = await call(`/v1/tasks/${id}`, { key: stranger.key });
      expect(response.status).toBe(404);
      expect((await problem(response)).code).toBe("RESOURCE_NOT_FOUND");
    }
  });

  it("the read that starts beside the key check reveals nothing to a refused key", async () => {
    const owner = await newAccount();
    const row = await insertTask(owner.accountId, { status: "succeeded", completedAt: Date.now() });
    const [keyId] = owner.key.slice(3).split(":");
    const forged = `p6_${keyId}:${"0".repeat(64)}`;
    const answers = [];
    for (const id of [row.id, "01JD5Z8X4QK3M7R2T9V6W1Y0AB"]) {
      const response = await call(`/v1/tasks/${id}`, { key: forged });
      expect(response.status).toBe(401);
      expect(response.headers.get("WWW-Authenticate")).toBe("Bearer");
      const { instance, request_id, ...body } = await problem(response);
      answers.push(body);
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]).toMatchObject({ code: "AUTH_INVALID_TOKEN" });
    // The owner still reads it, through the same early read.
    expect((await call(`/v1/tasks/${row.id}`, { key: owner.key })).status).toBe(200);
  });
});

describe("GET /v1/tasks", () => {
  it("pages through 60 tasks with limit 7: each exactly once, newest first", async () => {
    const { accountId, key } = await newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push((await insertTask(accountId)).id);
    const seen: string[] = [];
    let cursor = "";
    let pages = 0;
    do {
      const p = await page(key, `?limit=7${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...p.results.map((t) => t.id));
      expect(p.next_cursor === "").toBe(!p.has_next);
      cursor = p.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(9);
    expect(seen).toEqual([...ids].reverse());
  });

  it("stays stable when tasks are inserted between pages", async () => {
    const { accountId, key } = await newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await insertTask(accountId)).id);
    const first = await page(key, "?limit=4");
    for (let i = 0; i < 5; i++) await insertTask(accountId);
    const seen = first.results.map((t) => t.id);
    let cursor = first.next_cursor;
    while (cursor) {
      const p = await page(key, `?limit=4&cursor=${cursor}`);
      seen.push(...p.results.map((t) => t.id));
      cursor = p.next_cursor;
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it("filters by status, id prefix and creation dates", async () => {
    const { accountId, key } = await newAccount();
    const day = Date.parse("2026-03-10T12:00:00Z");
    // The three rows are made within one millisecond, whatever the clock does (issue 42: workerd's clock
    // stands still between I/O, and monotonic ULIDs of one millisecond share 25 of 26 characters).
    const now = vi.spyOn(Date, "now").mockReturnValue(Date.now());
    const a = await insertTask(accountId, { status: "succeeded", createdAt: day - 86_400_000 });
    const b = await insertTask(accountId, { status: "failed", createdAt: day });
    const c = await insertTask(accountId, { status: "succeeded", createdAt: day + 86_400_000 });
    now.mockRestore();
    const ids = async (q: string) => (await page(key, q)).results.map((t) => t.id);
    const prefix = b.id.slice(0, 20);
    expect([a.id, c.id].filter((id) => id.startsWith(prefix))).toEqual([]);

    expect(await ids("?status=succeeded")).toEqual([c.id, a.id]);
    expect(await ids("?status=failed")).toEqual([b.id]);
    expect(await ids(`?id=${prefix}`)).toEqual([b.id]);
    expect(await ids(`?id=${b.id.toLowerCase()}`)).toEqual([b.id]);
    expect(await ids("?created_from=2026-03-10")).toEqual([c.id, b.id]);
    expect(await ids("?created_to=2026-03-10")).toEqual([b.id, a.id]);
    expect(await ids("?created_from=2026-03-10&created_to=2026-03-10")).toEqual([b.id]);
    expect(await ids("?created_from=2026-03-10T12:00:00Z&created_to=2026-03-10T12:00:00Z")).toEqual([b.id]);
    expect(await ids("?created_from=2026-03-10T13:00:00%2B01:00")).toEqual([c.id, b.id]);
    expect(await ids("?created_to=2026-03-10T11:59:59.999Z")).toEqual([a.id]);
  });

  it("filters by type (with status too); an unknown type is a 400 naming type; other accounts' never listed", async () => {
    const { accountId, key } = await newAccount();
    const other = await newAccount();
    const trim = await insertTask(accountId, { type: "video.trim", status: "succeeded" });
    const mark = await insertTask(accountId, { type: "image.watermark", status: "succeeded" });
    const trimFailed = await insertTask(accountId, { type: "video.trim", status: "failed" });
    await insertTask(other.accountId, { type: "video.trim" });
    const ids = async (q: string) => (await page(key, q)).results.map((t) => t.id);
    expect(await ids("?type=video.trim")).toEqual([trimFailed.id, trim.id]);
    expect(await ids("?type=image.watermark")).toEqual([mark.id]);
    expect(await ids("?type=video.trim&status=succeeded")).toEqual([trim.id]);
    expect(await ids("?type=audio.trim")).toEqual([]);
    const bad = await call("/v1/tasks?type=video.explode", { key });
    expect(bad.status).toBe(400);
    expect((await problem(bad)).errors?.map((e) => e.field)).toEqual(["type"]);
  });

  it("clamps limit to 1..100 (interface.md), defaults to 25, and refuses a non-integer naming limit", async () => {
    const { accountId, key } = await newAccount();
    for (let i = 0; i < 30; i++) await insertTask(accountId);
    expect((await page(key, "")).results).toHaveLength(25);
    expect((await page(key, "?limit=0")).results).toHaveLength(1);
    expect((await page(key, "?limit=-4")).results).toHaveLength(1);
    expect((await page(key, "?limit=1000")).results).toHaveLength(30);
    expect((await page(key, "?limit=99999999999999999999")).results).toHaveLength(30);
    expect((await page(key, "?limit=100")).has_next).toBe(false);
    for (const limit of ["2.5", "ten"]) {
      const response = await call(`/v1/tasks?limit=${limit}`, { key });
      expect(response.status, limit).toBe(400);
      expect(
        (await problem(response)).errors?.map((e) => e.field),
        limit,
      ).toEqual(["limit"]);
    }
  });

  it("an empty account: no results, has_next false, next_cursor empty", async () => {
    const { key } = await newAccount();
    expect(await page(key, "")).toEqual({ has_next: false, next_cursor: "", results: [] });
  });

  it.each([
    ["cursor", "?cursor=garbage!"],
    ["cursor", "?cursor=dDE6bm90LWEtdWxpZA"],
    ["created_from", "?created_from=yesterday"],
    ["created_to", "?created_to=2026-13-45"],
    ["created_from", "?created_from=2026-03-10T12:00:00"],
    ["status", "?status=done"],
    ["id", "?id=not*a*prefix"],
    ["limit", "?limit=ten"],
  ])("malformed %s (%s) → 400 naming the field", async (field, query) => {
    const { key } = await newAccount();
    const response = await call(`/v1/tasks${query}`, { key });
    expect(response.status).toBe(400);
    const body = await problem(response);
    expect(body.code).toBe("VALIDATION_INVALID_ARGUMENT");
    expect(body.errors?.map((e) => e.field)).toContain(field);
  });

  it("another account's tasks are never listed", async () => {
    const owner = await newAccount();
    const stranger = await newAccount();
    await insertTask(owner.accountId);
    expect((await page(stranger.key, "")).results).toEqual([]);
  });
});
