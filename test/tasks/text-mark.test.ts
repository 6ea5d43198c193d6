/**
 * Text marks as tasks (issue 17 leftovers): what drawing the mark would refuse is refused when the task is
 * created, before its credits are reserved, with the synchronous route's 400; a CJK font missing from the
 * FONTS bucket is the service's fault: 503 + Retry-After synchronously, and a task waits and runs again.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { accounts, creditLedger, tasks } from "../../src/db/schema";
import { runnerFor } from "../../src/tasks/queue";
import type { TaskRunner } from "../../src/tasks/runner";
import { forgetRemoteFonts } from "../../src/text/fonts";
import { REMOTE_FONT_FILES } from "../../src/text/remote-fonts";
import { db, newAccount, problem } from "../helpers/api";
import { media, operate, operateWith } from "../helpers/media";
import { createTaskCall, getTaskView, taskLedger, terminal, waitForTask } from "../helpers/task-api";
import { seedEmojiPack, seedRemoteFonts } from "../text/fonts";

const balance = async (accountId: string) =>
  (await db().select().from(accounts).where(eq(accounts.id, accountId)).get())!.credits;

const sources = { "image.watermark": "photo.jpg", "video.watermark": "short.mp4" } as const;

describe("POST /v1/tasks refuses a text mark the run would refuse, before reserving", () => {
  it.each(Object.entries(sources))(
    "%s: characters no font covers are the sync route's 400",
    async (type, source) => {
      const { accountId, key } = await newAccount({ credits: 20 });
      const params = { text: "ok 𐀀" };
      const created = await createTaskCall(key, { type, source_url: media(source), params });
      expect(created.status, await created.clone().text()).toBe(400);
      const body = await problem(created);
      expect(body.code).toBe("VALIDATION_INVALID_ARGUMENT");
      expect(body.errors?.map((e) => e.field)).toEqual(["params.text"]);
      expect(body.detail).toContain("U+10000");
      // The synchronous route says the very same.
      const sync = await operate(`/v1/${type.replace(".", "/")}`, key, { source_url: media(source), params });
      expect(sync.status).toBe(400);
      expect((await problem(sync)).detail).toBe(body.detail);
      // Nothing reserved, no task row, no ledger row.
      expect(await balance(accountId)).toBe(20);
      expect(await db().select().from(tasks).where(eq(tasks.accountId, accountId)).all()).toEqual([]);
      const ledger = await db()
        .select()
        .from(creditLedger)
        .where(eq(creditLedger.accountId, accountId))
        .all();
      expect(ledger.map((row) => row.kind)).toEqual(["grant"]);
    },
  );

  it("a mark over the pixel budget at its font_size is refused at creation too (params.font_size)", async () => {
    const { accountId, key } = await newAccount({ credits: 20 });
    const created = await createTaskCall(key, {
      type: "video.watermark",
      source_url: media("short.mp4"),
      params: { text: "W".repeat(40), font_size: 1000 },
    });
    expect(created.status).toBe(400);
    expect((await problem(created)).errors?.map((e) => e.field)).toEqual(["params.font_size"]);
    expect(await balance(accountId)).toBe(20);
  });

  it("drawable text in any covered script is accepted (201, reserved)", async () => {
    const { accountId, key } = await newAccount({ credits: 20 });
    const created = await createTaskCall(key, {
      type: "image.watermark",
      source_url: media("photo.jpg"),
      params: { text: "Mark مرحبا שלום Привет नमस्ते" },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    expect(await balance(accountId)).toBe(19);
  });
});

describe("emoji in a text mark, at creation and on the synchronous routes", () => {
  it.each(Object.entries(sources))(
    "%s: an emoji of the pack is accepted; one it lacks (Unicode 16) is the sync route's 400 naming it",
    async (type, source) => {
      const seeded = await seedEmojiPack();
      expect(seeded, "fonts-noto-color-emoji must be installed for this test").toEqual({ ok: true });
      const { accountId, key } = await newAccount({ credits: 20 });
      const ok = await createTaskCall(key, { type, source_url: media(source), params: { text: "Hi 😀 🇫🇷" } });
      expect(ok.status, await ok.clone().text()).toBe(201);
      const reserved = await balance(accountId);
      expect(reserved).toBeLessThan(20);
      const params = { text: "Hi \u{1FAE9}" };
      const created = await createTaskCall(key, { type, source_url: media(source), params });
      expect(created.status, await created.clone().text()).toBe(400);
      const body = await problem(created);
      expect(body.detail).toContain("U+1FAE9");
      const sync = await operate(`/v1/${type.replace(".", "/")}`, key, { source_url: media(source), params });
      expect(sync.status).toBe(400);
      expect((await problem(sync)).detail).toBe(body.detail);
      // Neither refusal reserved or charged anything.
      expect(await balance(accountId)).toBe(reserved);
    },
  );
});

describe("a CJK font missing from the FONTS bucket", () => {
  beforeEach(async () => {
    for (const { key } of REMOTE_FONT_FILES) await env.FONTS.delete(key);
    forgetRemoteFonts();
  });

  it("synchronous: 503 SERVICE_UNAVAILABLE with Retry-After, nothing charged; no bucket bound alike", async () => {
    const { accountId, key } = await newAccount({ credits: 20 });
    const body = { source_url: media("photo.jpg"), params: { text: "水印 ok" } };
    for (const response of [
      await operate("/v1/image/watermark", key, body),
      await operateWith({ FONTS: undefined } as unknown as Partial<Env>, "/v1/image/watermark", key, body),
      await operate("/v1/video/watermark", key, { ...body, source_url: media("short.mp4") }),
    ]) {
      expect(response.status, await response.clone().text()).toBe(503);
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
      const problemBody = await problem(response);
      expect(problemBody.code).toBe("SERVICE_UNAVAILABLE");
      // The public detail says what, not where: no bucket or key names.
      expect(String(problemBody.detail)).not.toMatch(/FONTS|\.ttc/);
    }
    expect(await balance(accountId)).toBe(20);
  });

  it("a task is accepted, waits queued while the font is missing, and succeeds once it is there", async () => {
    const { key } = await newAccount({ credits: 20 });
    const created = await createTaskCall(key, {
      type: "image.watermark",
      source_url: media("photo.jpg"),
      params: { text: "水印" },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const stateOf = () =>
      runInDurableObject(runnerFor(env, id), (_i: TaskRunner, s) =>
        s.storage.kv.get<{ waits?: number; reason?: string }>("state"),
      );
    const started = Date.now();
    while (((await stateOf())?.waits ?? 0) < 1) {
      if (Date.now() - started > 60_000) throw new Error("the task never waited");
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await stateOf())?.reason).toMatch(/font/);
    expect(await getTaskView(key, id)).toMatchObject({ status: "queued", started_at: null, error: null });

    const seeded = await seedRemoteFonts();
    expect(seeded, "fonts-noto-cjk must be installed for this test").toEqual({ ok: true });
    const task = await waitForTask(key, id, terminal, 120_000);
    expect(task.status, JSON.stringify(task)).toBe("succeeded");
    expect(await taskLedger(id)).toEqual([["reserve", -1]]);
  });
});
