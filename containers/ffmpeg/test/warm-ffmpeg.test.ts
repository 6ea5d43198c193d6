/**
 * Warm ffmpeg commands (pipeline/warm-ffmpeg.ts): after a short job, its command waits started for the next
 * job of the same shape, which gets exactly the bytes a cold engine gives; other shapes and long encodes do
 * not use it; an aborted job kills the process it took; a process that died while waiting is not used;
 * at most `max` wait; closing the engine stops them all.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import { liveProcesses, traceCommands } from "../src/pipeline/ffmpeg.ts";
import { inputProtocolArgs } from "../src/pipeline/input-args.ts";
import {
  abortOnFirstCommand,
  ffmpegChildren,
  filesUnder,
  fixtureUrl,
  media,
  processAlive,
  saveBody,
  startTestEngine,
  type TestEngine,
  until,
} from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";

const bins = resolveBinaries(process.env);
const exec = promisify(execFile);

/** Every packet of a file (stream, timestamps, size and checksum), as ffmpeg's framemd5 muxer lists them. */
async function packets(file: string): Promise<Buffer> {
  const { stdout } = await exec(bins.ffmpeg, [
    "-v",
    "error",
    "-i",
    file,
    "-map",
    "0",
    "-c",
    "copy",
    "-f",
    "framemd5",
    "-",
  ]);
  return Buffer.from(stdout);
}

let warm: TestEngine;
let cold: TestEngine;
beforeAll(async () => {
  [warm, cold] = await Promise.all([
    startTestEngine({ warmCommands: 2, warmProbes: 0 }),
    startTestEngine({ warmCommands: 0, warmProbes: 0 }),
  ]);
});
afterAll(async () => {
  await Promise.all([warm.close(), cold.close()]);
});

const waiting = (engine: TestEngine = warm) => engine.engine.warmCommands.commands();
/**
 * Every request the engine handled has fully ended, its after-response work included: a warm process is
 * started (or not) right after a job's response, so from here `waiting()` says what the job left, with no
 * sleeping and no deadline, whatever the machine's load.
 */
const settled = (engine: TestEngine = warm) => engine.engine.idle();

/** Status, output digest and result header of a job, with the ffmpeg command lines it ran. */
async function run(engine: TestEngine, type: string, source: string, params: Record<string, unknown>) {
  const commands: string[][] = [];
  traceCommands((bin, args) => {
    if (bin === bins.ffmpeg) commands.push([...args]);
  });
  try {
    const res = await engine.job(type, { source_url: source, params });
    // Matroska/WebM carries a random segment UID: compare those by their packets.
    const webm = res.headers.get("content-type") === "video/webm";
    const body = webm ? await packets(await saveBody(res, "out.webm")) : Buffer.from(await res.arrayBuffer());
    return {
      status: res.status,
      sha: createHash("sha256").update(body).digest("hex"),
      result: res.headers.get("x-engine-result"),
      commands,
    };
  } finally {
    traceCommands(null);
  }
}

const RELAY_URL = /^http:\/\/127\.0\.0\.1:\d+\/s\/[0-9a-f]{48}$/;
const WARM_OUTPUT = /\/warm-[^/]+\/\w+\.\w+$/;
const inputOf = (args: readonly string[]) => args[args.indexOf("-i") + 1];
/** A command line without its source, the source's protocol options and its output path. */
const shape = (args: readonly string[]) => {
  const i = args.indexOf("-i");
  const protocol = inputProtocolArgs(args[i + 1]!).length;
  return JSON.stringify([...args.slice(0, i - protocol), ...args.slice(i + 2, -1)]);
};

/** Runs a job twice: a shape is kept warm once it has come a second time. */
async function twice(engine: TestEngine, type: string, source: string, params: Record<string, unknown>) {
  await run(engine, type, source, params);
  return run(engine, type, source, params);
}

describe("warm ffmpeg commands", () => {
  test("a cover is made by the process its predecessor left waiting, with the same bytes as a cold engine", async () => {
    const expected = await run(cold, "video.extract-cover", media(FIXTURES.av), {});
    expect(expected.status).toBe(200);
    // The first run of a shape leaves nothing waiting; the second does.
    await run(warm, "video.extract-cover", media(FIXTURES.av), {});
    await settled();
    expect(waiting()).toEqual([]);
    await run(warm, "video.extract-cover", media(FIXTURES.av), {});
    await settled();
    expect(waiting()).toHaveLength(1);
    const [command] = waiting();
    expect(inputOf(command!)).toMatch(RELAY_URL);
    expect(command!.at(-1)).toMatch(WARM_OUTPUT);
    const pid = warm.engine.warmCommands.pids()[0]!;

    const got = await run(warm, "video.extract-cover", media(FIXTURES.av), {});
    expect({ ...got, commands: undefined }).toEqual({ ...expected, commands: undefined });
    // One ffmpeg, the adopted one: the waiting command line, traced when the job took it.
    expect(got.commands).toEqual([command]);
    await settled();
    expect(processAlive(pid)).toBe(false);
    expect(warm.engine.warmCommands.pids().some((p) => p !== pid)).toBe(true);
    expect(await filesUnder(warm.engine.tmpDir)).toEqual([]);
  });

  test.each([
    ["video.extract-cover", FIXTURES.alpha, { format: "png", width: 160 }],
    ["video.extract-cover", FIXTURES.ntsc, { time: 1.5, format: "webp", quality: 70 }],
    ["audio.trim", FIXTURES.mp3, { start: 0.5, end: 2 }],
    ["audio.trim", FIXTURES.wav, { start: 0.25, end: 1.5 }],
    ["audio.trim", FIXTURES.av, { start: 1, end: 3 }],
    ["video.extract-audio", FIXTURES.av, {}],
    ["video.extract-audio", FIXTURES.avTail, { format: "original" }],
    ["video.extract-audio", FIXTURES.av, { format: "wav", channels: 1 }],
    ["video.trim", FIXTURES.av, { start: 2, end: 4, mode: "fast" }],
    ["video.trim", FIXTURES.alpha, { start: 1, end: 2, mode: "fast" }],
  ])("%s of %s %j: the same bytes warm as cold", async (type, name, params) => {
    const expected = await run(cold, type, media(name), params);
    expect(expected.status).toBe(200);
    await twice(warm, type, media(name), params);
    await settled();
    expect(waiting().some((c) => shape(c) === shape(expected.commands[0]!))).toBe(true);
    const got = await run(warm, type, media(name), params);
    expect({ ...got, commands: undefined }).toEqual({ ...expected, commands: undefined });
    expect(got.commands).toHaveLength(expected.commands.length);
    expect(inputOf(got.commands[0]!)).toMatch(RELAY_URL);
    expect(got.commands[0]!.at(-1)).toMatch(WARM_OUTPUT);
  });

  test("a command that differs only in its output file's name does not take the process (issue 29)", async () => {
    // A fast trim copies the video of a source with audio into video.mp4 (its audio is muxed in afterwards)
    // and of one without audio straight into output.mp4: the same arguments but the output's name. The
    // process left waiting by the first writes video.mp4; the second must not take it (it moved output.mp4,
    // which is not there: ENOENT, a 500) and gets exactly what a cold engine gives.
    const params = { start: 1, end: 2, mode: "fast" };
    const withAudio = await twice(warm, "video.trim", media(FIXTURES.av), params);
    expect(withAudio.status).toBe(200);
    await settled();
    const copy = waiting().find((c) => c.at(-1)?.endsWith("/video.mp4"));
    expect(copy).toBeDefined();
    const expected = await run(cold, "video.trim", media(FIXTURES.noAudio), params);
    expect(expected.status).toBe(200);
    // Same command but the output's name, so without the name in the shape the waiting one would be taken.
    expect(shape(expected.commands[0]!)).toBe(shape(copy!));
    expect(expected.commands[0]!.at(-1)).toMatch(/\/output\.mp4$/);
    const got = await run(warm, "video.trim", media(FIXTURES.noAudio), params);
    expect({ ...got, commands: undefined }).toEqual({ ...expected, commands: undefined });
    expect(got.commands[0]!.at(-1)).not.toMatch(WARM_OUTPUT);
  });

  test("a command of another shape does not take it, and long encodes leave nothing waiting", async () => {
    const first = await twice(warm, "video.extract-cover", media(FIXTURES.av), {});
    await settled();
    expect(waiting().some((c) => shape(c) === shape(first.commands[0]!))).toBe(true);
    const pid =
      warm.engine.warmCommands.pids()[waiting().findIndex((c) => shape(c) === shape(first.commands[0]!))]!;

    // Another time: another shape, run cold; the waiting cover stays; run again, this one waits beside it.
    const other = await run(warm, "video.extract-cover", media(FIXTURES.av), { time: 2 });
    expect(other.status).toBe(200);
    expect(other.commands[0]!.at(-1)).not.toMatch(WARM_OUTPUT);
    expect(processAlive(pid)).toBe(true);
    await run(warm, "video.extract-cover", media(FIXTURES.av), { time: 2 });
    await settled();
    expect([first, other].every((r) => waiting().some((c) => shape(c) === shape(r.commands[0]!)))).toBe(true);
    const before = waiting();

    for (const [type, params] of [
      ["video.trim", { start: 1, end: 2 }],
      ["video.watermark", { text: "warm?" }],
    ] as const) {
      expect((await run(warm, type, media(FIXTURES.short), params)).status).toBe(200);
    }
    await settled();
    expect(waiting()).toEqual(before);
  });

  test("at most `max` wait, the least recently run making room", async () => {
    const engine = await startTestEngine({ warmCommands: 1, warmProbes: 0 });
    try {
      await twice(engine, "video.extract-cover", media(FIXTURES.av), {});
      await settled(engine);
      expect(waiting(engine)).toHaveLength(1);
      const coverPid = engine.engine.warmCommands.pids()[0]!;
      // A one-off shape does not push it out; one that comes again does.
      await run(engine, "audio.trim", media(FIXTURES.mp3), { start: 0, end: 1 });
      await settled(engine);
      expect(engine.engine.warmCommands.pids()).toEqual([coverPid]);
      await run(engine, "audio.trim", media(FIXTURES.mp3), { start: 0, end: 1 });
      await settled(engine);
      expect(waiting(engine)[0]?.at(-1)).toMatch(/\.mp3$/);
      await until("the cover's process to exit", () => !processAlive(coverPid));
      expect(waiting(engine)).toHaveLength(1);
      const others = [...engine.engine.warmCommands.pids(), ...warm.engine.warmCommands.pids()];
      expect(await ffmpegChildren(others)).toEqual([]);
    } finally {
      await engine.close();
    }
  });

  test("an aborted job kills the process it took and leaves nothing behind", async () => {
    const engine = await startTestEngine({ warmCommands: 1, warmProbes: 0 });
    try {
      const params = { start: 0, end: 20 };
      // Two runs of the shape (a whole file, fast) leave its command waiting.
      await twice(engine, "audio.trim", media(FIXTURES.long), params);
      await settled(engine);
      expect(waiting(engine)).toHaveLength(1);
      const pid = engine.engine.warmCommands.pids()[0]!;
      // The client goes away the moment the job takes the waiting process (taking it traces its command);
      // the source trickles, so ffmpeg is still reading then.
      const abort = abortOnFirstCommand(bins.ffmpeg);
      try {
        const response = await engine
          .job(
            "audio.trim",
            { source_url: fixtureUrl(`/slow/${FIXTURES.long}?kbps=64`), params },
            { signal: abort.controller.signal },
          )
          .catch(() => null);
        expect(response).toBeNull();
      } finally {
        abort.stop();
      }
      expect(inputOf(abort.command() ?? [])).toMatch(RELAY_URL);
      await engine.engine.idle();
      await until("the taken process to exit", () => liveProcesses.size === 0);
      expect(processAlive(pid)).toBe(false);
      // Nothing started again for a job that failed (its after-response work has run): no process, no file.
      expect(waiting(engine)).toEqual([]);
      expect(await ffmpegChildren(warm.engine.warmCommands.pids())).toEqual([]);
      expect(await filesUnder(engine.engine.tmpDir)).toEqual([]);
    } finally {
      await engine.close();
    }
  });

  test("a process that died while waiting is not used: the job runs ffmpeg itself", async () => {
    const first = await twice(warm, "video.extract-cover", media(FIXTURES.av), {});
    await settled();
    const i = waiting().findIndex((c) => shape(c) === shape(first.commands[0]!));
    expect(i).toBeGreaterThanOrEqual(0);
    const dead = waiting()[i]!;
    const pid = warm.engine.warmCommands.pids()[i]!;
    process.kill(pid, "SIGKILL");
    await until("the killed process to be gone", () => !processAlive(pid));
    const got = await run(warm, "video.extract-cover", media(FIXTURES.av), {});
    expect({ ...got, commands: undefined }).toEqual({ ...first, commands: undefined });
    expect(got.commands).toHaveLength(1);
    expect(inputOf(got.commands[0]!)).not.toBe(inputOf(dead));
  });

  test("closing the engine stops every waiting process and removes their directories", async () => {
    const engine = await startTestEngine({ warmCommands: 2, warmProbes: 0 });
    await twice(engine, "video.extract-cover", media(FIXTURES.av), {});
    await settled(engine);
    expect(waiting(engine)).toHaveLength(1);
    const pid = engine.engine.warmCommands.pids()[0]!;
    await engine.close();
    await until("the process to exit", () => !processAlive(pid));
    expect(waiting(engine)).toEqual([]);
  });
});

describe("command shapes", () => {
  const dir = "/tmp/p6-engine/engine-1-a/job-x";
  const shapeOf = (args: string[], refs: string[]) => warm.engine.warmCommands.shapeOf(args, refs, dir);
  const input = (ref: string) => ["-f", "mov", ...inputProtocolArgs(ref), "-i", ref];

  test("the source and the output's directory are what may differ", () => {
    const a = shapeOf([...input("file:/x/source"), "-c", "copy", `${dir}/output.mp4`], ["file:/x/source"]);
    const b = shapeOf([...input("http://r/s/1"), "-c", "copy", `${dir}/output.mp4`], ["http://r/s/1"]);
    expect(a).not.toBeNull();
    expect(a?.key).toBe(b?.key);
    expect(a?.outputName).toBe("output.mp4");
    // The output's directory may differ, not its name (the waiting process writes the name it started with).
    expect(
      shapeOf([...input("file:/x/source"), "-c", "copy", `${dir}/video.mp4`], ["file:/x/source"])?.key,
    ).not.toBe(a?.key);
    expect(
      shapeOf([...input("file:/x/source"), "-c", "aac", `${dir}/output.mp4`], ["file:/x/source"])?.key,
    ).not.toBe(a?.key);
  });

  test.each([
    ["the output is not in the job's directory", [...input("s"), "/elsewhere/output.mp4"]],
    [
      "another file of the job is named",
      [...input("s"), "-vf", `drawtext=textfile=${dir}/text.txt`, `${dir}/o.mp4`],
    ],
    ["the source is read twice", [...input("s"), ...input("s"), `${dir}/o.mp4`]],
    ["the source is not an input", ["-f", "mov", "-i", "other", "-metadata", "s", `${dir}/o.mp4`]],
  ])("none when %s", (_why, args) => {
    expect(shapeOf(args, ["s"])).toBeNull();
  });

  test("none when another relay URL is an input (a logo)", async () => {
    const first = await twice(warm, "video.extract-cover", media(FIXTURES.av), {});
    await settled();
    expect(waiting().some((c) => shape(c) === shape(first.commands[0]!))).toBe(true);
    const logo = inputOf(waiting()[0]!)!;
    expect(logo).toMatch(RELAY_URL);
    expect(shapeOf([...input("s"), "-i", logo, `${dir}/o.mp4`], ["s"])).toBeNull();
  });
});
