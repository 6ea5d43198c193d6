/**
 * POST /v1/pipelines: several operations on one source as one job. Its events as the steps end, each step's
 * file fetched from the engine while later steps run, a failing step reported with what came before it, a bad
 * graph refused before the job takes a slot, and nothing left on disk once the files were fetched.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { PipelineEvent } from "../src/protocol.ts";
import {
  AUTH,
  errorOf,
  ffprobe,
  filesUnder,
  jobId,
  media,
  saveBody,
  startTestEngine,
  type TestEngine,
} from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine.close());

const post = (body: Record<string, unknown>) =>
  fetch(`${engine.url}/v1/pipelines`, {
    method: "POST",
    headers: { ...AUTH, "content-type": "application/json" },
    body: JSON.stringify({ job_id: jobId(), ...body }),
  });

/** The answer's events, and each file step's file fetched as soon as its event arrives. */
async function run(res: Response, id: string) {
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/x-ndjson");
  const events: PipelineEvent[] = [];
  const files = new Map<string, Promise<string>>();
  const text = res.body!.pipeThrough(new TextDecoderStream());
  let buffered = "";
  for await (const chunk of text) {
    buffered += chunk;
    for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
      const event = JSON.parse(buffered.slice(0, end)) as PipelineEvent;
      buffered = buffered.slice(end + 1);
      events.push(event);
      if (event.event === "succeeded" && event.file) {
        const step = event.step;
        files.set(
          step,
          fetch(`${engine.url}/v1/pipelines/${id}/${step}`, { headers: AUTH }).then(async (file) => {
            expect(file.status).toBe(200);
            expect(Number(file.headers.get("content-length"))).toBe(event.file!.result.size_bytes);
            return saveBody(file, `${step}.${event.file!.result.format}`);
          }),
        );
      }
    }
  }
  return { events, files };
}

const EXAMPLE = [
  { name: "clip", type: "video.trim", params: { start: 10, duration: 10 } },
  { name: "marked", type: "video.watermark", use: "clip", params: { watermark_url: media(FIXTURES.logo) } },
  { name: "poster", type: "video.extract-cover", use: "marked", params: { time: 1 } },
  { name: "audio", type: "video.extract-audio", use: "clip", params: { format: "mp3" } },
  { name: "info", type: "video.probe", use: "marked" },
];

describe("POST /v1/pipelines", () => {
  test("the example: each step in order, its file served while the next runs, nothing left after", async () => {
    const id = jobId();
    const { events, files } = await run(
      await post({ job_id: id, source_url: media(FIXTURES.long), steps: EXAMPLE }),
      id,
    );
    expect(events.map((e) => `${e.event}${"step" in e ? ` ${e.step}` : ""}`)).toEqual([
      "started clip",
      "succeeded clip",
      "started marked",
      "succeeded marked",
      "started poster",
      "succeeded poster",
      "started audio",
      "succeeded audio",
      "started info",
      "succeeded info",
      "done",
    ]);
    const result = (step: string) =>
      (
        events.find((e) => e.event === "succeeded" && e.step === step) as Extract<
          PipelineEvent,
          { event: "succeeded" }
        >
      ).file?.result;
    expect(result("clip")).toMatchObject({ format: "mp4", start: 10, end: 20, duration: 10 });
    expect(result("poster")).toMatchObject({ format: "jpeg", width: 320, height: 180 });
    const info = events.find((e) => e.event === "succeeded" && e.step === "info") as Extract<
      PipelineEvent,
      { event: "succeeded" }
    >;
    expect(info.data?.durationSec).toBeCloseTo(10, 2);
    // Measured by ffprobe, not by the engine's own numbers.
    const clip = await ffprobe(await files.get("clip")!);
    expect(Number(clip.format.duration)).toBeCloseTo(10, 1);
    const audio = await ffprobe(await files.get("audio")!);
    expect(audio.streams[0]?.codec_name).toBe("mp3");
    expect(Number(audio.format.duration)).toBeCloseTo(10, 1);
    await Promise.all(files.values());
    // Every file fetched and the job ended: its directory is gone.
    for (
      let i = 0;
      i < 50 && (await filesUnder(engine.engine.tmpDir)).some((f) => f.includes("pipeline-"));
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    expect((await filesUnder(engine.engine.tmpDir)).filter((f) => f.includes("pipeline-"))).toEqual([]);
    // Five encodes and decodes in a row: ~30 s alone on the shared 2-core machine at load 10, more beside
    // other suites.
  }, 180_000);

  test("a step that fails ends the pipeline with its error; earlier files stay fetchable", async () => {
    const id = jobId();
    const { events, files } = await run(
      await post({
        job_id: id,
        source_url: media(FIXTURES.av),
        steps: [
          { name: "clip", type: "video.trim", params: { start: 1, duration: 2 } },
          { name: "late", type: "video.extract-cover", use: "clip", params: { time: 5 } },
          { name: "never", type: "video.probe", use: "clip" },
        ],
      }),
      id,
    );
    expect(events.at(-1)).toMatchObject({
      event: "failed",
      step: "late",
      error: { code: "VALIDATION_INVALID_ARGUMENT", field: "params.time" },
    });
    expect(events.some((e) => "step" in e && e.step === "never")).toBe(false);
    expect(Number((await ffprobe(await files.get("clip")!)).format.duration)).toBeCloseTo(2, 1);
  });

  test.each([
    [[{ name: "a", type: "video.probe", use: "b" }], "steps[0].use"],
    [
      [
        { name: "a", type: "video.trim", params: { start: 0, end: 1 } },
        { name: "a", type: "video.probe" },
      ],
      "steps[1].name",
    ],
    [
      [
        { name: "cover", type: "video.extract-cover" },
        { name: "trim", type: "video.trim", use: "cover", params: { start: 0, end: 1 } },
      ],
      "steps[1].use",
    ],
    [[{ name: "a", type: "video.trim", params: { start: 0 } }], "steps[0].params.end"],
    [Array.from({ length: 11 }, (_, i) => ({ name: `p${i}`, type: "video.probe" })), "steps"],
    [[{ name: "m", type: "video.watermark", params: { text: "x" } }], "steps[0].text_mark"],
  ])("a bad graph is refused before the job runs: %j → 400 %s", async (steps, field) => {
    const res = await post({ source_url: media(FIXTURES.av), steps });
    expect(await errorOf(res)).toMatchObject({ status: 400, code: "VALIDATION_INVALID_ARGUMENT", field });
  });

  test("a file that is not (or no longer) there → 404", async () => {
    const res = await fetch(`${engine.url}/v1/pipelines/nope/clip`, { headers: AUTH });
    expect(await errorOf(res)).toMatchObject({ status: 404, code: "RESOURCE_NOT_FOUND" });
  });
});
