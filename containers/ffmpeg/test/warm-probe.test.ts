/**
 * Warm input probes (pipeline/warm-probe.ts): a job's input probe is answered by an ffprobe started before
 * the job, with exactly the answer a cold ffprobe gives; another waits after the job; an aborted job kills
 * the process it took; a process that died while waiting is not used; closing the engine stops them all.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import { liveProcesses, traceCommands } from "../src/pipeline/ffmpeg.ts";
import {
  abortOnFirstCommand,
  errorOf,
  ffmpegChildren,
  filesUnder,
  fixtureUrl,
  media,
  processAlive,
  startTestEngine,
  type TestEngine,
  until,
} from "./support/engine.ts";
import { AV_PROBE, FIXTURES } from "./support/media.ts";

const bins = resolveBinaries(process.env);

let warm: TestEngine;
let cold: TestEngine;
beforeAll(async () => {
  [warm, cold] = await Promise.all([startTestEngine({ warmProbes: 2 }), startTestEngine({ warmProbes: 0 })]);
});
afterAll(async () => {
  await Promise.all([warm.close(), cold.close()]);
});

const waitingFor = (demuxer: string) => () => warm.engine.warmProbes.demuxers().includes(demuxer);
/** The pid of the process waiting for MP4 sources. */
const movPid = (): number => {
  const { warmProbes } = warm.engine;
  return warmProbes.pids()[warmProbes.demuxers().indexOf("mov")]!;
};

/** Status and body of a job, with the ffprobe command lines it ran. */
async function probe(
  engine: TestEngine,
  type: string,
  source: string,
  params: Record<string, unknown> = type === "audio.trim" ? { start: 0.5, end: 1.5 } : {},
) {
  const probes: string[][] = [];
  traceCommands((bin, args) => {
    if (bin === bins.ffprobe) probes.push([...args]);
  });
  try {
    const res = await engine.job(type, { source_url: source, params });
    const body = res.headers.get("content-type")?.includes("json")
      ? await res.json()
      : await res.arrayBuffer();
    return {
      status: res.status,
      body: body instanceof ArrayBuffer ? null : body,
      result: res.headers.get("x-engine-result"),
      probes,
    };
  } finally {
    traceCommands(null);
  }
}

describe("warm input probes", () => {
  test("an MP4 is probed by the process that waited for it; another waits after the job", async () => {
    await until("a warm MP4 probe", waitingFor("mov"));
    const pid = movPid();
    const got = await probe(warm, "video.probe", media(FIXTURES.av));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(AV_PROBE);
    // One input probe, the adopted one: no cold start. Its command is the input probe on a relay URL. (A
    // probe of an MP4 with AAC then reads its first audio packets and stream ends: probe.ts earlyAudio.)
    const inputProbes = got.probes.filter((args) => args.includes("-show_format"));
    expect(inputProbes).toHaveLength(1);
    expect(got.probes[0]).toEqual(expect.arrayContaining(["-show_format", "-show_streams", "-f", "mov"]));
    expect(got.probes[0]?.at(-1)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/s\/[0-9a-f]{48}$/);
    // Once the engine is idle, the job's after-response work has run: another probe waits already.
    await warm.engine.idle();
    expect(warm.engine.warmProbes.pids().filter((p) => p !== pid)).toHaveLength(1);
    await until("the used process to exit", () => !processAlive(pid));
  });

  test.each([
    ["video.probe", FIXTURES.av],
    ["video.probe", FIXTURES.avTail],
    ["video.probe", FIXTURES.ntsc],
    ["video.probe", FIXTURES.alpha],
    ["video.probe", FIXTURES.noAudio],
    ["video.probe", FIXTURES.truncated],
    ["video.probe", FIXTURES.truncatedFaststart],
    ["video.probe", FIXTURES.mp3],
    ["audio.trim", FIXTURES.mp3],
    ["audio.trim", FIXTURES.wav],
    ["video.extract-cover", FIXTURES.alpha],
    ["video.extract-audio", FIXTURES.noAudio],
  ])("%s of %s: the same answer warm as cold", async (type, name) => {
    const expected = await probe(cold, type, media(name));
    // The first job of a demuxer may find none waiting; the second finds the one the first left.
    await probe(warm, type, media(name));
    const got = await probe(warm, type, media(name));
    expect({ ...got, probes: undefined }).toEqual({ ...expected, probes: undefined });
    if (got.probes.length > 0) expect(got.probes).toHaveLength(expected.probes.length);
  });

  test("at most `max` processes wait, one per demuxer, the least recently wanted making room", async () => {
    await probe(warm, "video.probe", media(FIXTURES.alpha));
    await probe(warm, "audio.trim", media(FIXTURES.wav));
    await probe(warm, "video.probe", media(FIXTURES.av));
    await until("mov and wav waiting", () => {
      const d = warm.engine.warmProbes.demuxers();
      return d.length === 2 && d.includes("mov") && d.includes("wav");
    });
    expect(warm.engine.warmProbes.pids()).toHaveLength(2);
    expect(await ffmpegChildren()).toHaveLength(2);
  });

  test("an aborted job kills the warm process it took and leaves nothing behind", async () => {
    await until("a warm MP4 probe", waitingFor("mov"));
    const pid = movPid();
    // The client goes away the moment the job adopts the waiting process (adoption traces its command);
    // the source trickles at 4 KiB/s, so the probe is still waiting for media data then.
    const abort = abortOnFirstCommand(bins.ffprobe);
    try {
      const response = await warm
        .job(
          "video.probe",
          { source_url: fixtureUrl(`/slow/${FIXTURES.long}?kbps=4`), params: {} },
          { signal: abort.controller.signal },
        )
        .catch(() => null);
      expect(response).toBeNull();
    } finally {
      abort.stop();
    }
    expect(abort.command()?.at(-1)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/s\//);
    await warm.engine.idle();
    await until("the taken process to exit", () => liveProcesses.size === 0);
    expect(processAlive(pid)).toBe(false);
    await until("a new warm MP4 probe", waitingFor("mov"));
    expect(await ffmpegChildren(warm.engine.warmProbes.pids())).toEqual([]);
    expect(await filesUnder(warm.engine.tmpDir)).toEqual([]);
  });

  test("a process that died while waiting is not used: the job probes by itself", async () => {
    await until("a warm MP4 probe", waitingFor("mov"));
    const pid = movPid();
    process.kill(pid, "SIGKILL");
    await until("the killed process to be gone", () => !processAlive(pid));
    const got = await probe(warm, "video.probe", media(FIXTURES.av));
    expect(got.status).toBe(200);
    expect(got.probes.filter((args) => args.includes("-show_format"))).toHaveLength(1);
    expect(got.probes[0]?.at(-1)).toMatch(/^(file:|http:)/);
  });

  test("a bad source never reaches a warm process", async () => {
    await until("a warm MP4 probe", waitingFor("mov"));
    const before = warm.engine.warmProbes.pids();
    const text = await errorOf(await warm.job("video.probe", { source_url: media(FIXTURES.textAsMp4) }));
    expect(text.code).toBe("CONTENT_TYPE_UNSUPPORTED");
    expect(warm.engine.warmProbes.pids()).toEqual(before);
  });

  test("closing the engine stops every waiting process", async () => {
    const engine = await startTestEngine({ warmProbes: 1 });
    await until("a warm MP4 probe", () => engine.engine.warmProbes.pids().length === 1);
    const pid = engine.engine.warmProbes.pids()[0]!;
    await engine.close();
    await until("the process to exit", () => !processAlive(pid));
    expect(engine.engine.warmProbes.pids()).toEqual([]);
  });
});
