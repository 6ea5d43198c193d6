/**
 * Tasks' processes run at a lower CPU priority than synchronous calls' (priority.ts, ENGINE_TASK_NICE): the
 * nice value follows the job into every ffmpeg/ffprobe it starts. Observed on live processes, not timed.
 */
import type { ChildProcess } from "node:child_process";
import os from "node:os";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { liveProcesses, runFfmpeg } from "../src/pipeline/ffmpeg.ts";
import { withNiceness } from "../src/priority.ts";
import { AUTH, media, startTestEngine, type TestEngine, until } from "./support/engine.ts";

const base = os.getPriority();
const niced = Math.min(19, base + 10);

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

/**
 * The priority of every process that becomes a job's, read the moment it does: `start` and `adopt` lower it
 * synchronously right after adding it to `liveProcesses`, so a microtask later it is final, and the process
 * cannot have been reaped yet (Node reaps children in a later turn of the event loop). Nothing depends on how
 * long the process lives. (This test used to poll for a live process on a slow or stalled source; the image's
 * ffprobe answers from the first 64 KiB of a faststart MP4 within milliseconds, and the poll missed it.)
 */
const seen: { pid: number; priority: number }[] = [];
const add = liveProcesses.add.bind(liveProcesses);
beforeAll(() => {
  liveProcesses.add = (child: ChildProcess) => {
    add(child);
    queueMicrotask(() => {
      if (child.pid !== undefined) seen.push({ pid: child.pid, priority: os.getPriority(child.pid) });
    });
    return liveProcesses;
  };
});
afterAll(() => {
  liveProcesses.add = add;
});

describe.each([
  ["started for the job", 0],
  ["warm, adopted by the job", 1],
])("a job's processes (ENGINE_TASK_NICE 10), %s", (_how, warmProbes) => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine({ taskNice: 10, warmProbes });
  });
  afterAll(() => engine.close());

  test.each([
    ["a task (X-Engine-Priority: low)", { "x-engine-priority": "low" }, niced],
    ["a synchronous call", {}, base],
  ])("%s", async (_name, headers, expected) => {
    const { warmProbes: warm } = engine.engine;
    let warmPid: number | undefined;
    if (warmProbes > 0) {
      // MP4's probe waits from the start, and again once the previous job's response has been sent.
      await until("a warm MP4 probe", () => warm.demuxers().includes("mov"));
      warmPid = warm.pids()[warm.demuxers().indexOf("mov")];
    }
    seen.length = 0;
    const res = await engine.job(
      "video.probe",
      { source_url: media("av.mp4") },
      { headers: { ...AUTH, "content-type": "application/json", ...headers } },
    );
    expect(res.status).toBe(200);
    await engine.engine.idle();
    expect(seen.length).toBeGreaterThan(0);
    if (warmPid !== undefined) expect(seen[0]?.pid).toBe(warmPid);
    expect(seen.map((s) => s.priority)).toEqual(seen.map(() => expected));
  });
});
