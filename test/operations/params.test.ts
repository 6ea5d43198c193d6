/**
 * Each operation's params are one schema, the registry's (@p6/contract/operations): the Worker validates requests with it and
 * documents it, the engine validates jobs with it (containers/ffmpeg/src/pipeline/params.ts). So the rules
 * that lived only in the engine are the Worker's too, and a request that breaks one is a 400 naming the field
 * before anything is reserved or sent: not a task that fails later, not a call that waits for capacity.
 */

import { OPERATIONS as REGISTRY } from "@p6/contract/operations";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts, tasks } from "../../src/db/schema";
import { OPERATIONS } from "../../src/operations";
import { db, newAccount, problem } from "../helpers/api";
import { media, operateWith } from "../helpers/media";
import { createTaskCall } from "../helpers/task-api";

it.each(OPERATIONS.map((op) => [op.type, op] as const))(
  "%s validates with its registry entry's schema in @p6/contract/operations",
  (type, op) => {
    expect(op.params).toBe(REGISTRY[type].params);
  },
);

const LOGO = "https://example.com/logo.png";

/** Params the Worker used to pass on and only the engine refused (as it still does). */
const CASES: [string, Record<string, unknown>, string][] = [
  ["video.watermark", { watermark_url: LOGO, font_size: 20 }, "params.font_size"],
  ["video.watermark", { watermark_url: LOGO, color: "#000000" }, "params.color"],
  ["video.watermark", { watermark_url: LOGO, stroke: { color: "#000000", width: 1 } }, "params.stroke"],
  // A logo upload is a logo like a URL: the text params are refused next to it before the upload is looked up.
  [
    "video.watermark",
    { watermark_upload_id: "01JD5Z8X4QK3M7R2T9V6W1Y0AB", font_size: 20 },
    "params.font_size",
  ],
  ["video.watermark", { text: "a", scale: 0.5 }, "params.scale"],
  ["video.watermark", { text: "a\tb" }, "params.text"],
  ["video.extract-cover", { format: "png", quality: 80 }, "params.quality"],
  ["video.extract-audio", { format: "wav", bitrate: "128k" }, "params.bitrate"],
  ["video.extract-audio", { format: "original", channels: 1 }, "params.channels"],
  ["video.extract-audio", { format: "opus", sample_rate: 44100 }, "params.sample_rate"],
  ["video.extract-audio", { sample_rate: 96000 }, "params.sample_rate"],
  ["video.trim", { start: 0, end: 1, duration: 1 }, "params.duration"],
];

async function expectNamed(response: Response, field: string) {
  const text = await response.clone().text();
  expect(response.status, text).toBe(400);
  const body = await problem(response);
  expect(body.code).toBe("VALIDATION_INVALID_ARGUMENT");
  expect(body.errors?.map((e) => e.field)).toEqual([field]);
}

describe.each(CASES)("%s %j", (type, params, field) => {
  it(`synchronous: 400 naming ${field}, without the engine`, async () => {
    const { key } = await newAccount({ credits: 10 });
    // Nothing listens at the engine's address: only the Worker can answer.
    const path = `/v1/${type.replace(".", "/")}`;
    const body = { source_url: media("av.mp4"), params };
    await expectNamed(await operateWith({ ENGINE_URL: "http://127.0.0.1:9" }, path, key, body), field);
  });

  it(`task: 400 naming ${field}, no task and nothing reserved`, async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    await expectNamed(await createTaskCall(key, { type, source_url: media("av.mp4"), params }), field);
    expect(await db().select().from(tasks).where(eq(tasks.accountId, accountId)).all()).toEqual([]);
    const account = await db().select().from(accounts).where(eq(accounts.id, accountId)).get();
    expect(account?.credits).toBe(10);
  });
});
