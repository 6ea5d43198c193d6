/**
 * The Worker-side client (src/engine) against a real engine: the client reads results, errors, progress and
 * aborts as the Worker will. Both sides compile against one wire format (@p6/contract/wire), so no test
 * compares copies of it.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  HttpMediaEngine,
  readEngineError,
  readEngineResult,
  readEngineTiming,
  readFetchedMedia,
  readPipelineEvents,
  urlTarget,
} from "../../../src/engine/http-engine.ts";
import { ENGINE_LOAD_HEADER, parseEngineLoad } from "../../../src/engine/load.ts";
import { fixtureUrl, jobId, media, SECRET, startTestEngine, type TestEngine } from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";

let engine: TestEngine;
let client: HttpMediaEngine;
beforeAll(async () => {
  engine = await startTestEngine();
  client = new HttpMediaEngine({ targets: [urlTarget(engine.url)], secret: SECRET });
});
afterAll(() => engine.close());

describe("HttpMediaEngine", () => {
  test("run: a file answer with its result and timing", async () => {
    const res = await client.run("video.extract-cover", {
      job_id: jobId(),
      source_url: media(FIXTURES.av),
      params: { width: 160 },
    });
    expect(res.status).toBe(200);
    // Its load as of the answer (the job's slot already free), for the Worker's routing (src/engine/load.ts).
    expect(parseEngineLoad(res.headers.get(ENGINE_LOAD_HEADER))).toEqual({ busy: 0, slots: 2, queued: 0 });
    expect(readEngineResult(res)).toMatchObject({ format: "jpeg", width: 160, height: 90 });
    expect(readEngineTiming(res)).toEqual({ fetch: expect.any(Number), process: expect.any(Number) });
    expect((await res.arrayBuffer()).byteLength).toBe(readEngineResult(res).size_bytes);
  });

  test("run: an error answer reads as a public error", async () => {
    const res = await client.run("video.trim", {
      job_id: jobId(),
      source_url: media(FIXTURES.av),
      params: { start: 1 },
    });
    expect(await readEngineError(res)).toEqual({
      status: 400,
      code: "VALIDATION_INVALID_ARGUMENT",
      message: "Give exactly one of end or duration.",
      field: "params.end",
    });
  });

  test("fetchSource", async () => {
    const res = await client.fetchSource({ source_url: media(FIXTURES.logo) });
    expect(readFetchedMedia(res)).toEqual({ kind: "image", format: "png", width: 160, height: 80 });
    await res.arrayBuffer();
  });

  test("progress and abort of a live job", async () => {
    const id = jobId();
    // An encode that reads its source from the start (video.watermark first reads the source's last 10 s for
    // its timing, decisions.md "Variable frame rate", so with this source it would show no progress for a minute).
    const running = client.run("video.extract-audio", {
      job_id: id,
      // Never done within the test (256 KiB, then 1 KiB every 500 ms): the job is still running when aborted.
      source_url: fixtureUrl(`/ranged/${FIXTURES.long}?trickle=1`),
      // A copy: an encode first reads the source's last audio packets for its stated end (audio-encode.ts
      // statedAudioEnd), which a trickling source holds back.
      params: { format: "original" },
    });
    let progress: number | null = null;
    for (let i = 0; i < 400 && !(progress !== null && progress > 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      progress = await client.progress(id);
    }
    expect(progress).toBeGreaterThan(0);
    await client.abort(id);
    expect((await running).status).toBe(500);
    expect(await client.progress(id)).toBeNull();
    await client.abort(id); // already gone: quiet
  });

  test("an unreachable engine answers 503, a wrong secret reads as INTERNAL", async () => {
    const down = new HttpMediaEngine({ targets: [urlTarget("http://127.0.0.1:1")], secret: SECRET });
    const res = await down.run("video.probe", { job_id: jobId(), source_url: media(FIXTURES.av) });
    expect(await readEngineError(res)).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE" });
    const wrong = new HttpMediaEngine({ targets: [urlTarget(engine.url)], secret: "nope" });
    expect(
      await readEngineError(
        await wrong.run("video.probe", { job_id: jobId(), source_url: media(FIXTURES.av) }),
      ),
    ).toMatchObject({
      status: 500,
      code: "INTERNAL",
    });
  });
});

describe("pipelines over two instances", () => {
  test("each step's file is fetched from the instance that runs the job", async () => {
    const other = await startTestEngine();
    try {
      const both = new HttpMediaEngine({
        targets: [urlTarget(engine.url), urlTarget(other.url)],
        secret: SECRET,
      });
      // Placement is by load, ties at random: enough jobs that both instances take some.
      for (let i = 0; i < 6; i++) {
        const id = jobId();
        const res = await both.runPipeline({
          job_id: id,
          source_url: media(FIXTURES.av),
          steps: [
            { name: "cover", type: "video.extract-cover", params: { width: 160 } },
            { name: "info", type: "video.probe" },
          ],
        });
        expect(res.status).toBe(200);
        const events = [];
        for await (const event of readPipelineEvents(res)) {
          events.push(event);
          if (event.event === "succeeded" && event.file) {
            const file = await both.pipelineFile(id, event.step);
            expect(file.status).toBe(200);
            expect(readEngineResult(file)).toEqual(event.file.result);
            expect((await file.arrayBuffer()).byteLength).toBe(event.file.result.size_bytes);
          }
        }
        expect(events.at(-1)).toEqual({ event: "done" });
      }
    } finally {
      await other.close();
    }
  }, 180_000);
});
