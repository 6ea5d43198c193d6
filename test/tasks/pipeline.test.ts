/**
 * Pipeline tasks (issue 38): several operations on one source in one task. The example on a real 20 s
 * video, each output measured by an independent route (the loopback inspector's ffprobe/ffmpeg decode the
 * files; nothing is read from the engine's own numbers); graph refusals before anything is reserved; charging
 * on success, on a failure at each step, and on cancel.
 */
import { eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { accounts } from "../../src/db/schema";
import type { TaskView } from "../../src/tasks/serialize";
import { call, db, newAccount, problem } from "../helpers/api";
import { download, fixture, media } from "../helpers/media";
import { createTaskCall, getTaskView, taskLedger, terminal, waitForTask } from "../helpers/task-api";

const inspector = (path: string, bytes: Uint8Array) =>
  fetch(`${inject("inspectorUrl")}${path}`, { method: "POST", body: bytes });

type Image = { data: Uint8Array; width: number; height: number; channels: number };

/** A frame decoded by real ffmpeg: RGB24, or RGBA. */
async function frame(bytes: Uint8Array, t: number, pixFmt: "rgb24" | "rgba" = "rgb24"): Promise<Image> {
  const response = await inspector(`/frame?t=${t}&pix_fmt=${pixFmt}`, bytes);
  expect(response.status, await response.clone().text()).toBe(200);
  return {
    data: new Uint8Array(await response.arrayBuffer()),
    width: Number(response.headers.get("x-width")),
    height: Number(response.headers.get("x-height")),
    channels: pixFmt === "rgba" ? 4 : 3,
  };
}

type Rect = { x: number; y: number; width: number; height: number };

/** Mean of each channel over a rectangle. */
function mean(image: Image, r: Rect): number[] {
  const sums = new Array<number>(image.channels).fill(0);
  for (let y = r.y; y < r.y + r.height; y++)
    for (let x = r.x; x < r.x + r.width; x++)
      for (let c = 0; c < image.channels; c++)
        sums[c]! += image.data[(y * image.width + x) * image.channels + c]!;
  return sums.map((s) => s / (r.width * r.height));
}

/** PSNR (dB) of two RGB frames of one size. */
function psnr(a: Image, b: Image): number {
  expect([a.width, a.height]).toEqual([b.width, b.height]);
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) sum += (a.data[i]! - b.data[i]!) ** 2;
  return 10 * Math.log10((255 * 255) / (sum / a.data.length));
}

const balance = async (accountId: string) =>
  (await db().select({ credits: accounts.credits }).from(accounts).where(eq(accounts.id, accountId)).get())!
    .credits;

const EXAMPLE_STEPS = [
  { name: "clip", type: "video.trim", params: { start: 10, duration: 10 } },
  { name: "marked", type: "video.watermark", use: "clip", params: { watermark_url: media("logo.png") } },
  { name: "poster", type: "video.extract-cover", use: "marked", params: { time: 1 } },
  { name: "audio", type: "video.extract-audio", use: "clip", params: { format: "mp3" } },
  { name: "info", type: "video.probe", use: "marked" },
];
/** 2 + 5 + 1 + 2 + 1. */
const EXAMPLE_COST = 11;

const outputOf = (task: TaskView, step: string) => {
  const output = task.outputs.find((o) => o.step === step);
  expect(output, `an output of ${step}`).toBeDefined();
  return output!;
};

describe("a pipeline task: the issue's example", () => {
  it("a 10.00 s clip, its watermark where placed, the poster at 1 s, a 10 s mp3, a probe saying 10 s", async () => {
    const { key, accountId } = await newAccount({ credits: 20 });
    const response = await createTaskCall(key, {
      type: "pipeline",
      source_url: media("long.mp4"),
      params: { steps: EXAMPLE_STEPS },
    });
    expect(response.status, JSON.stringify(await response.clone().json())).toBe(201);
    const created = (await response.json()) as TaskView;
    expect(created.task_type).toBe("pipeline");
    expect(created.steps?.map((s) => [s.name, s.status])).toEqual(
      EXAMPLE_STEPS.map((s) => [s.name, "queued"]),
    );
    expect(await taskLedger(created.id)).toEqual([["reserve", -EXAMPLE_COST]]);
    expect(await balance(accountId)).toBe(20 - EXAMPLE_COST);

    const task = await waitForTask(key, created.id, terminal, 200_000);
    expect(task.status, JSON.stringify(task.error)).toBe("succeeded");
    expect(task.steps?.map((s) => [s.name, s.status])).toEqual(
      EXAMPLE_STEPS.map((s) => [s.name, "succeeded"]),
    );
    expect(task.outputs.map((o) => o.step)).toEqual(["clip", "marked", "poster", "audio", "info"]);
    for (const step of task.steps!)
      expect(step.outputs).toEqual(task.outputs.filter((o) => o.step === step.name));
    // Charged the sum, reserved up front: no refund.
    expect(await taskLedger(created.id)).toEqual([["reserve", -EXAMPLE_COST]]);

    // The clip: 300 frames from 0 to exactly 10.00 s, by their presentation times.
    const clip = (await download(outputOf(task, "clip").url)).bytes;
    const { frames } = (await (await inspector("/frames", clip)).json()) as {
      frames: { time: number; duration: number }[];
    };
    expect(frames[0]!.time).toBeCloseTo(0, 3);
    const last = frames.at(-1)!;
    expect(last.time + last.duration).toBeCloseTo(10, 2);
    expect(frames).toHaveLength(300);
    expect(task.steps![0]!.result).toMatchObject({ duration: 10, start: 10, end: 20 });

    // The watermark: the logo's opaque red half over the clip at half opacity, bottom-right (16 px margin, a
    // fifth of the 320 px width: 64×32), the logo's transparent half and the rest of the frame unchanged.
    const marked = (await download(outputOf(task, "marked").url)).bytes;
    const logo = await frame(new Uint8Array(await (await fetch(media("logo.png"))).arrayBuffer()), 0, "rgba");
    const t = 2;
    const [before, after] = [await frame(clip, t), await frame(marked, t)];
    const red = { x: 320 - 16 - 64 + 4, y: 180 - 16 - 32 + 4, width: 24, height: 24 };
    const logoRed = mean(logo, { x: 8, y: 8, width: 64, height: 64 });
    const alpha = (logoRed[3]! / 255) * 0.5;
    const expected = mean(before, red).map((c, i) => alpha * logoRed[i]! + (1 - alpha) * c);
    /** The largest per-channel difference of two means. */
    const apart = (a: number[], b: number[]) => Math.max(...a.map((c, i) => Math.abs(c - b[i]!)));
    expect(apart(mean(after, red), expected)).toBeLessThan(12);
    const clear = { x: 320 - 16 - 32 + 4, y: 180 - 16 - 32 + 4, width: 24, height: 24 };
    expect(apart(mean(after, clear), mean(before, clear))).toBeLessThan(8);
    const elsewhere = { x: 20, y: 20, width: 100, height: 60 };
    expect(apart(mean(after, elsewhere), mean(before, elsewhere))).toBeLessThan(4);

    // The poster is the watermarked clip's frame at 1 s.
    const poster = await frame((await download(outputOf(task, "poster").url)).bytes, 0);
    expect(psnr(poster, await frame(marked, 1))).toBeGreaterThan(30);

    // The mp3 decodes to 10 s of samples.
    const audio = (await download(outputOf(task, "audio").url)).bytes;
    const { samples, sample_rate } = (await (await inspector("/samples", audio)).json()) as {
      samples: number;
      sample_rate: number;
    };
    expect(samples / sample_rate).toBeCloseTo(10, 1);
    expect(Math.abs(samples / sample_rate - 10)).toBeLessThan(0.03);

    // The probe of the watermarked clip says 10 s, in its step's result and in its JSON file.
    expect(task.steps![4]!.result).toMatchObject({
      durationSec: expect.closeTo(10, 2),
      width: 320,
      height: 180,
    });
    const info = JSON.parse(new TextDecoder().decode((await download(outputOf(task, "info").url)).bytes));
    expect(info).toMatchObject({ type: "video.probe", codec: "h264", durationSec: expect.closeTo(10, 2) });
    // Five encodes in a row and the checks' decodes: ~30 s of engine time alone on the shared 2-core machine.
  }, 240_000);
});

describe("graph refusals: 400 naming the step, nothing reserved", () => {
  const trim = (name: string, extra: object = {}) => ({
    name,
    type: "video.trim",
    params: { start: 0, end: 1 },
    ...extra,
  });
  it.each([
    ["an unknown use", [trim("a"), { name: "b", type: "video.probe", use: "nope" }], "params.steps[1].use"],
    ["a forward reference", [{ name: "b", type: "video.probe", use: "a" }, trim("a")], "params.steps[0].use"],
    ["a cycle", [trim("a", { use: "b" }), trim("b", { use: "a" })], "params.steps[0].use"],
    ["a step using itself", [trim("a", { use: "a" })], "params.steps[0].use"],
    [
      "a kind mismatch (an image operation on a video)",
      [trim("a"), { name: "b", type: "image.watermark", use: "a", params: { text: "x" } }],
      "params.steps[1].use",
    ],
    [
      "a probe's JSON used",
      [{ name: "a", type: "video.probe" }, trim("b", { use: "a" })],
      "params.steps[1].use",
    ],
    ["11 steps", Array.from({ length: 11 }, (_, i) => trim(`s${i}`)), "params.steps"],
    ["no step", [], "params.steps"],
    ["a duplicate name", [trim("a"), trim("a")], "params.steps[1].name"],
    [
      "bad step params",
      [trim("a"), { name: "b", type: "video.extract-cover", use: "a", params: { time: -1 } }],
      "params.steps[1].params.time",
    ],
    [
      "an unknown step param",
      [{ ...trim("a"), params: { start: 0, end: 1, speed: 2 } }],
      "params.steps[0].params.speed",
    ],
    ["a bad name", [trim("a b")], "params.steps[0].name"],
  ])("%s", async (_name, steps, field) => {
    const { key, accountId } = await newAccount({ credits: 50 });
    const response = await createTaskCall(key, {
      type: "pipeline",
      source_url: media("av.mp4"),
      params: { steps },
    });
    expect(response.status).toBe(400);
    const body = await problem(response);
    expect((body.errors ?? []).map((e: { field: string }) => e.field)).toContain(field);
    expect(await balance(accountId)).toBe(50);
  });

  it("a logo refused by the source rules names its step", async () => {
    const { key, accountId } = await newAccount({ credits: 50 });
    const response = await createTaskCall(key, {
      type: "pipeline",
      source_url: media("av.mp4"),
      params: {
        steps: [
          { name: "m", type: "video.watermark", params: { watermark_url: "http://169.254.169.254/x.png" } },
        ],
      },
    });
    expect(response.status).toBe(400);
    expect((await problem(response)).errors).toEqual([
      expect.objectContaining({ code: "forbidden_url", field: "params.steps[0].params.watermark_url" }),
    ]);
    expect(await balance(accountId)).toBe(50);
  });
});

describe("charging", () => {
  /** clip (2) → poster (1) → snap (1): a cover time past the 2 s clip fails its step. */
  const chain = (clipStart: number, posterTime: number, snapTime: number) => [
    { name: "clip", type: "video.trim", params: { start: clipStart, duration: 2 } },
    { name: "poster", type: "video.extract-cover", use: "clip", params: { time: posterTime } },
    { name: "snap", type: "video.extract-cover", use: "clip", params: { time: snapTime } },
  ];
  it.each([
    ["the first step", chain(30, 1, 1), 0, "clip"],
    ["the second step", chain(1, 5, 1), 2, "poster"],
    ["the last step", chain(1, 1, 5), 3, "snap"],
  ])(
    "a failure at %s: charged only for the steps before it",
    async (_at, steps, charged, failing) => {
      const { key, accountId } = await newAccount({ credits: 10 });
      const response = await createTaskCall(key, {
        type: "pipeline",
        source_url: media("av.mp4"),
        params: { steps },
      });
      expect(response.status).toBe(201);
      const { id } = (await response.json()) as TaskView;
      const task = await waitForTask(key, id, terminal, 100_000);
      expect(task.status).toBe("failed");
      expect(task.error).toMatchObject({ code: "VALIDATION_INVALID_ARGUMENT" });
      const states = Object.fromEntries(task.steps!.map((s) => [s.name, s.status]));
      expect(states[failing]).toBe("failed");
      expect(task.steps!.find((s) => s.name === failing)!.error).toMatchObject({
        code: "VALIDATION_INVALID_ARGUMENT",
      });
      // What succeeded before the failure stays listed and downloadable.
      const succeeded = task.steps!.filter((s) => s.status === "succeeded").map((s) => s.name);
      expect(task.outputs.map((o) => o.step)).toEqual(succeeded);
      for (const output of task.outputs)
        expect((await download(output.url)).bytes.byteLength).toBeGreaterThan(0);
      expect(await taskLedger(id)).toEqual([
        ["refund", 4 - charged],
        ["reserve", -4],
      ]);
      expect(await balance(accountId)).toBe(10 - charged);
    },
    120_000,
  );

  it("cancel stops the running step and refunds the rest", async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const response = await createTaskCall(key, {
      type: "pipeline",
      // 256 KiB, then 1 KiB every 500 ms: the probe reads the head, the copy of the audio never ends.
      source_url: fixture("/ranged/long.mp4?trickle=1"),
      params: {
        steps: [
          { name: "info", type: "video.probe" },
          { name: "audio", type: "video.extract-audio", params: { format: "original" } },
        ],
      },
    });
    expect(response.status).toBe(201);
    const { id } = (await response.json()) as TaskView;
    await waitForTask(key, id, (t) => t.steps?.[1]?.status === "running", 100_000);
    const cancel = await call(`/v1/tasks/${id}/cancel`, { method: "POST", key });
    expect(cancel.status).toBe(200);
    const task = (await cancel.json()) as TaskView;
    expect(task.status).toBe("canceled");
    expect(task.steps!.map((s) => s.status)).toEqual(["succeeded", "canceled"]);
    expect(task.outputs.map((o) => o.step)).toEqual(["info"]);
    expect(await taskLedger(id)).toEqual([
      ["refund", 2],
      ["reserve", -3],
    ]);
    expect(await balance(accountId)).toBe(9);
    const again = await getTaskView(key, id);
    expect(again.status).toBe("canceled");
  }, 120_000);
});
