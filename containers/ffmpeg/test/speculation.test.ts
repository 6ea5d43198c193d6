/**
 * Short jobs without waiting: the MP4 index read in Node (mp4-guess.ts) agrees with ffprobe; ffmpeg starts
 * while ffprobe runs and its run is used only when ffprobe's answer gives the same command (speculate.ts);
 * a reader far beyond a slow download gets its bytes with a ranged request of its own (source.ts).
 */
import { open, stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import { liveProcesses, runFfprobe, traceCommands } from "../src/pipeline/ffmpeg.ts";
import { mediaInfo } from "../src/pipeline/media-info.ts";
import { guessMp4Info } from "../src/pipeline/mp4-guess.ts";
import type { EngineResult } from "../src/protocol.ts";
import {
  errorOf,
  ffmpegChildren,
  ffprobe,
  filesUnder,
  fixturePath,
  fixtureUrl,
  media,
  saveBody,
  startTestEngine,
  type TestEngine,
} from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";

const bins = resolveBinaries(process.env);

async function guessFile(name: string) {
  const file = fixturePath(name);
  const fh = await open(file, "r");
  try {
    const read = async (offset: number, length: number) => {
      const buf = Buffer.alloc(length);
      const { bytesRead } = await fh.read(buf, 0, length, offset);
      return buf.subarray(0, bytesRead);
    };
    return await guessMp4Info(read, (await stat(file)).size);
  } finally {
    await fh.close();
  }
}

describe("the MP4 index read in Node", () => {
  test.each([FIXTURES.av, FIXTURES.noAudio, FIXTURES.long])("%s agrees with ffprobe", async (name) => {
    const guess = await guessFile(name);
    const real = mediaInfo(
      await runFfprobe(
        bins.ffprobe,
        ["-show_format", "-show_streams", "-f", "mov", fixturePath(name)],
        new AbortController().signal,
      ),
    );
    expect(guess).not.toBeNull();
    expect(guess).toMatchObject({
      duration: real.duration,
      startTime: real.startTime,
      video: { ...real.video, pixFmt: "" },
      audio: real.audio === null ? null : { index: real.audio.index, codec: real.audio.codec },
    });
  });

  test("its keyframes are the ones ffprobe seeks to", async () => {
    const guess = await guessFile(FIXTURES.av);
    for (const at of [0.5, 2.5, 4]) {
      const probe = await runFfprobe(
        bins.ffprobe,
        [
          ...["-show_packets", "-show_entries", "packet=stream_index,pts_time,dts_time,flags"],
          ...["-read_intervals", `${at}%+#16`, "-f", "mov", fixturePath(FIXTURES.av)],
        ],
        new AbortController().signal,
      );
      const key = probe.packets?.find((p) => p.stream_index === 0 && (p.flags ?? "").startsWith("K"));
      const guessed = guess?.keyframes?.filter((k) => k.dts <= at).at(-1);
      expect(guessed?.pts).toBeCloseTo(Number(key?.pts_time), 5);
      expect(guessed?.dts).toBeCloseTo(Number(key?.dts_time), 5);
    }
  });

  test("no guess when the index follows the media data", async () => {
    expect(await guessFile(FIXTURES.avTail)).toBeNull();
  });
});

describe("speculative ffmpeg", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine();
  });
  afterAll(() => engine.close());

  /** Runs a job and records every ffmpeg started, and whether ffprobe was still running at that moment. */
  async function traced(type: string, source: string, params: Record<string, unknown>) {
    const starts: { probing: boolean }[] = [];
    traceCommands((bin) => {
      if (bin !== bins.ffmpeg) return;
      starts.push({ probing: [...liveProcesses].some((p) => p.spawnfile === bins.ffprobe) });
    });
    try {
      const res = await engine.job(type, { source_url: media(source), params });
      expect(res.status, await res.clone().text()).toBe(200);
      const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
      return { res, result, starts };
    } finally {
      traceCommands(null);
    }
  }

  async function expectClean() {
    await engine.engine.idle();
    expect(liveProcesses.size).toBe(0);
    expect(await ffmpegChildren(engine.engine.warmProbes.pids())).toEqual([]);
    expect(await filesUnder(engine.engine.tmpDir)).toEqual([]);
  }

  test("a cover of a faststart MP4: one ffmpeg, started while ffprobe still runs", async () => {
    const { result, starts, res } = await traced("video.extract-cover", FIXTURES.av, { width: 320 });
    expect(result).toMatchObject({ format: "jpeg", width: 320, height: 180 });
    expect(starts).toEqual([{ probing: true }]);
    await res.arrayBuffer();
    await expectClean();
  });

  test("a fast trim uses the keyframe from the index, the same as ffprobe's", async () => {
    const { result, starts, res } = await traced("video.trim", FIXTURES.av, {
      start: 2.5,
      end: 4.5,
      mode: "fast",
    });
    expect(result).toMatchObject({ format: "mp4", start: 2, copied: true });
    // The video copy started while ffprobe ran and was kept; then the copy made again without the packets
    // presented at or after `end` (B-frames: issue 29, trim-fast.ts), and the audio cut beside it.
    expect(starts).toHaveLength(3);
    expect(starts[0]).toEqual({ probing: true });
    await res.arrayBuffer();
    await expectClean();
  });

  test("the early pass ends with its ffmpeg: what follows it (probes, in-place edits) runs once", async () => {
    // A fast trim probes the file its copy wrote and edits its edit list in place. The early pass went on
    // after the run the real pass took and did the same on the same file: two edits raced (cursed-vfr.mp4:
    // a copy whose media data lay 8 bytes off its index, or one refused and re-encoded, run to run).
    const commands: string[] = [];
    traceCommands((bin, args) => {
      if (bin === bins.ffprobe) commands.push(JSON.stringify(args));
    });
    try {
      const res = await engine.job("video.trim", {
        source_url: media(FIXTURES.av),
        params: { start: 2.5, end: 4.5, mode: "fast" },
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
      expect(result).toMatchObject({ start: 2, copied: true });
      await res.arrayBuffer();
    } finally {
      traceCommands(null);
    }
    // The probes of the copy (packets counted, its tail listed, its head read) each ran once.
    const ofCopy = commands.filter((c) => c.includes("-count_packets"));
    expect(ofCopy).toHaveLength(1);
    expect(commands.length).toBe(new Set(commands).size);
    await engine.engine.idle();
    expect(liveProcesses.size).toBe(0);
  });

  test("an index that disagrees with ffprobe: the early run is dropped, the result is ffprobe's", async () => {
    // The index says 400×360, the stream (and ffprobe) 640×360: the early command scales to another height.
    const { result, starts, res } = await traced("video.extract-cover", FIXTURES.lyingIndex, {
      width: 320,
    });
    expect(result).toMatchObject({ width: 320, height: 180 });
    expect(starts).toHaveLength(2);
    const probe = await ffprobe(await saveBody(res, "lying.jpg"));
    expect(probe.streams[0]).toMatchObject({ width: 320, height: 180 });
    await expectClean();
  });

  test("an aborted job stops both passes", async () => {
    const controller = new AbortController();
    const pending = engine
      .job(
        "video.extract-audio",
        { source_url: media(FIXTURES.long), params: { format: "flac" } },
        { signal: controller.signal },
      )
      .catch(() => null);
    for (let i = 0; i < 100 && liveProcesses.size === 0; i++) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    await pending;
    await expectClean();
  });
});

describe("ranged requests for readers far beyond the download", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine(
      { downloadAheadBytes: 256 * 1024 },
      { fetchPolicy: { rangeGapBytes: 64 * 1024 } },
    );
  });
  afterAll(() => engine.close());

  let n = 0;
  const ranged = (query: string) => {
    const tag = `t${process.pid}-${++n}`;
    return {
      url: fixtureUrl(`/ranged/${FIXTURES.long}?tag=${tag}&${query}`),
      count: async () =>
        ((await (await fetch(fixtureUrl(`/ranged-stats?tag=${tag}`))).json()) as { ranged: number }).ranged,
    };
  };

  test("a trim near the end of a slow source does not wait for the whole download", async () => {
    // The whole-file download never ends (a trickle): the trim can only succeed with its index from the
    // head and its last seconds from a ranged request, whatever the machine's load.
    const source = ranged("trickle=1");
    const res = await engine.job("audio.trim", { source_url: source.url, params: { start: 15, end: 18 } });
    expect(res.status, await res.clone().text()).toBe(200);
    const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
    expect(result).toMatchObject({ format: "m4a", start: 15 });
    expect(result.duration).toBeCloseTo(3, 1);
    expect(await source.count()).toBeGreaterThan(0);
    const probe = await ffprobe(await saveBody(res, "ranged.m4a"));
    expect(Number(probe.format.duration)).toBeCloseTo(3, 1);
  });

  test("a source that announces ranges but ignores them: readers wait for the download", async () => {
    const source = ranged("kbps=2000&lie=1");
    const res = await engine.job("audio.trim", { source_url: source.url, params: { start: 15, end: 18 } });
    expect(res.status, await res.clone().text()).toBe(200);
    const result = JSON.parse(res.headers.get("x-engine-result") ?? "{}") as EngineResult;
    expect(result.duration).toBeCloseTo(3, 1);
    expect(await source.count()).toBe(0);
    await res.arrayBuffer();
  });

  test("a ranged answer cut short fails the job as a source failure, not a shorter result", async () => {
    const source = ranged("kbps=100&cut=1");
    const res = await engine.job("audio.trim", { source_url: source.url, params: { start: 15, end: 18 } });
    expect(await errorOf(res)).toMatchObject({
      status: 502,
      code: "SOURCE_UNREACHABLE",
      message: "the connection to the source was reset",
    });
    expect(await source.count()).toBe(1);
    expect(await filesUnder(engine.engine.tmpDir)).toEqual([]);
  });

  test("a ranged answer that stalls trips the read timeout", async () => {
    // The whole-file download trickles (never done, never idle), so the seek to 15 s always takes a ranged
    // request, and that request's stall is the only one: no race with the download, whatever the load.
    const source = ranged("trickle=1&hang=1");
    const started = performance.now();
    const res = await engine.job("audio.trim", { source_url: source.url, params: { start: 15, end: 18 } });
    expect(await errorOf(res)).toMatchObject({
      status: 502,
      code: "SOURCE_UNREACHABLE",
      message: "the source stopped sending data (read timeout)",
    });
    expect(await source.count()).toBe(1);
    // The test engine's read timeout is 3 s: the error cannot come before it.
    expect(performance.now() - started).toBeGreaterThan(2500);
    expect(await filesUnder(engine.engine.tmpDir)).toEqual([]);
  });
});
