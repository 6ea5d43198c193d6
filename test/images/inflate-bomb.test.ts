import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newAccount, problem } from "../helpers/api";
import { media, operate } from "../helpers/media";
import { createTaskCall, terminal, waitForTask } from "../helpers/task-api";
import { IMAGE_FIXTURES } from "./generated";

/**
 * Issue 40, item 4: a PNG whose IDAT inflates far past what its dimensions need (1 GiB of zeros behind an honest
 * header) is refused on every path, fast and uncharged. The Worker refused it already when it decodes the
 * image itself; as an image.watermark source or logo over 2.2 MP (the engine's job) and as video.watermark's
 * logo the engine used to inflate all of it (200 after 10–30 s, charged). Each case sends the bomb and reads
 * the balance before and after.
 */

const SMALL_BOMB = media("inflate-bomb.png"); // 1×1: 4 bytes of image data, 1 GiB inflated
const LARGE_BOMB = media(IMAGE_FIXTURES.inflateBombLarge); // 1600×1500: 7.2 MB of image data, 1 GiB inflated

const balance = async (accountId: string) =>
  (await env.DB.prepare("SELECT credits FROM accounts WHERE id = ?")
    .bind(accountId)
    .first<{ credits: number }>())!.credits;

/** A case: the bomb's request and the detail expected. */
type Case = [name: string, path: string, body: unknown, detail: RegExp];

const SYNC: Case[] = [
  [
    "image.watermark in the Worker: the bomb as the source",
    "/v1/image/watermark",
    { source_url: SMALL_BOMB, params: { text: "x" } },
    /^The image is malformed: its compressed image data inflates beyond/,
  ],
  [
    "image.watermark on the engine (over 2.2 MP): the bomb as the source",
    "/v1/image/watermark",
    { source_url: LARGE_BOMB, params: { text: "x" } },
    /image is malformed: its compressed image data inflates beyond the 7201500 bytes/i,
  ],
  [
    "image.watermark on the engine: a 2.4 MP bomb as the logo",
    "/v1/image/watermark",
    { source_url: media("photo-3mp.jpg"), params: { watermark_url: LARGE_BOMB } },
    /watermark image is malformed: .*inflates beyond/i,
  ],
  [
    "video.watermark: the bomb as the logo",
    "/v1/video/watermark",
    { source_url: media("short.mp4"), params: { watermark_url: SMALL_BOMB } },
    /watermark image is malformed: .*inflates beyond the 4 bytes/i,
  ],
];

/**
 * "Fast" is not timed here (a test's clock measures the machine's load: two suites at once put the bomb's answer
 * at 9.4 s). What made the bomb slow was inflating all of it; the detail asserted below is the bounded inflate's
 * own refusal (packages/contract/src/png-data.ts), and the engine's png-data test shows that refusal reads 64 KiB
 * of a 1 MB bomb that inflates to 1 GiB.
 */
describe("the IDAT bomb, synchronously", () => {
  it.each(SYNC)("%s: 415 from the bounded inflate, nothing charged", async (_, path, body, detail) => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const before = await balance(accountId);
    const response = await operate(path, key, body);
    const answer = await problem(response);
    expect([response.status, answer.code]).toEqual([415, "CONTENT_TYPE_UNSUPPORTED"]);
    expect(answer.detail).toMatch(detail);
    expect(await balance(accountId)).toBe(before);
  });
});

describe("the IDAT bomb as a task's logo", () => {
  it("video.watermark: the task fails with the 415, its reservation refunded", async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const before = await balance(accountId);
    const created = await createTaskCall(key, {
      type: "video.watermark",
      source_url: media("short.mp4"),
      params: { watermark_url: SMALL_BOMB },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const started = performance.now();
    const task = await waitForTask(key, id, terminal);
    console.log(`task ${id}: ${task.status} in ${(performance.now() - started).toFixed(0)} ms`);
    expect(task).toMatchObject({ status: "failed", error: { code: "CONTENT_TYPE_UNSUPPORTED" } });
    expect(JSON.stringify(task.error)).toMatch(/inflates beyond the 4 bytes/);
    expect(await balance(accountId)).toBe(before);
  });
});
