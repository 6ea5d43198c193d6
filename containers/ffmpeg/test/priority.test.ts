/**
 * Tasks' processes run at a lower CPU priority than synchronous calls' (priority.ts, ENGINE_TASK_NICE): the
 * nice value follows the job into every ffmpeg/ffprobe it starts. Observed on live processes, not timed.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { liveProcesses, runFfmpeg } from "../src/pipeline/ffmpeg.ts";
import { withNiceness } from "../src/priority.ts";
import { AUTH, fixtureUrl, startTestEngine, type TestEngine, until } from "./support/engine.ts";

const base = os.getPriority();
const niced = Math.min(19, base + 10);

/** The priority of the one job process alive, once it exists. */
async function livePriority(): Promise<number> {
  await until("a job process", () => liveProcesses.size > 0, 30_000);
  const [child] = [...liveProcesses];
  return os.getPriority(child!.pid!);
}

describe("withNiceness", () => {
  test("an ffmpeg started inside runs 10 steps lower; outside, at the engine's priority", async () => {
    const seen: number[] = [];
    for (const nice of [10, 0]) {
      const stop = new AbortController();
      // Real time for 30 s: alive when its first progress line comes, then aborted.
      const args = ["-re", "-f", "lavfi", "-i", "testsrc2=size=64x64:rate=10:duration=30", "-f", "null", "-"];
      const run = withNiceness(nice, () =>
        runFfmpeg(process.env.FFMPEG_PATH ?? "ffmpeg", args, {
          signal: stop.signal,
          durationSec: 30,
          onProgress: () => {
            if (stop.signal.aborted) return;
            seen.push(os.getPriority([...liveProcesses][0]!.pid!));
            stop.abort(new Error("seen"));
          },
        }),
      );
      await run.catch(() => {});
    }
    expect(seen).toEqual([niced, base]);
  });
});

describe.each([
  ["started for the job", 0],
  ["warm, adopted by the job", 1],
])("a job's processes (ENGINE_TASK_NICE 10), %s", (_how, warmProbes) => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine({ taskNice: 10, warmProbes, readTimeoutMs: 60_000 });
  });
  afterAll(() => engine.close());

  // A source that stops after its first 64 KiB keeps the job's ffprobe alive until the client leaves. (The
  // fixture's /slow sends at least 50 KB/s: at that rate the probe could end within 1.3 s, before the poll
  // below saw its process, and the test waited 30 s for one; 1 run in 5 failed so.)
  const slow = fixtureUrl("/stall/av.mp4");

  test.each([
    ["a task (X-Engine-Priority: low)", { "x-engine-priority": "low" }, niced],
    ["a synchronous call", {}, base],
  ])("%s", async (_name, headers, expected) => {
    await until("no job process", () => liveProcesses.size === 0, 30_000);
    const leave = new AbortController();
    const answer = engine
      .job(
        "video.probe",
        { source_url: slow },
        { headers: { ...AUTH, "content-type": "application/json", ...headers }, signal: leave.signal },
      )
      .catch(() => null);
    expect(await livePriority()).toBe(expected);
    leave.abort();
    await answer;
    await engine.engine.idle();
  });
});
