/**
 * Binary resolution, and every operation once more with the npm-shipped builds (@ffmpeg-installer's
 * 2018 ffmpeg, @ffprobe-installer's 2023 ffprobe), run as a real engine process started like `npm run dev`
 * starts it.
 */

import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { npmBinary, resolveBinaries } from "../src/config.ts";
import { type RunningEngine, startEngine } from "../src/launch.ts";
import type { EngineResult } from "../src/protocol.ts";
import { AUTH, ffprobe, filesUnder, fixtureUrl, jobId, media, SECRET, saveBody } from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";
import { textMarkFor, withTextMark } from "./support/text-mark.ts";

const execFileAsync = promisify(execFile);

describe("resolveBinaries", () => {
  test("FFMPEG_PATH/FFPROBE_PATH win, then PATH; never the npm packages on their own", () => {
    expect(
      resolveBinaries({ FFMPEG_PATH: "/opt/ff", FFPROBE_PATH: "/opt/fp", PATH: "/usr/bin" }),
    ).toMatchObject({
      ffmpeg: "/opt/ff",
      ffprobe: "/opt/fp",
      source: { ffmpeg: "env", ffprobe: "env" },
    });
    // A folder of its own on PATH: Debian's ffmpeg is in /usr/bin, the image's build in /usr/local/bin.
    const onPath = mkdtempSync(path.join(os.tmpdir(), "p6-path-"));
    for (const name of ["ffmpeg", "ffprobe"]) {
      writeFileSync(path.join(onPath, name), "#!/bin/sh\n");
      chmodSync(path.join(onPath, name), 0o755);
    }
    try {
      expect(resolveBinaries({ PATH: `/nonexistent:${onPath}` })).toMatchObject({
        ffmpeg: path.join(onPath, "ffmpeg"),
        ffprobe: path.join(onPath, "ffprobe"),
        source: { ffmpeg: "path", ffprobe: "path" },
      });
    } finally {
      rmSync(onPath, { recursive: true, force: true });
    }
    // No ffmpeg on PATH: the engine does not start (it ran @ffmpeg-installer's 2018 build silently, issue 29).
    expect(npmBinary("ffmpeg")).not.toBeNull();
    expect(() => resolveBinaries({ PATH: "/nonexistent" })).toThrow(
      "ffmpeg not found: the engine runs on ffmpeg 5.x (apt-get install ffmpeg), on PATH or named by FFMPEG_PATH",
    );
  });

  test("this suite runs on ffmpeg 5.x, the version it verifies (its setup chose and named it)", async () => {
    const bins = resolveBinaries(process.env);
    expect(bins.source).toEqual({ ffmpeg: "env", ffprobe: "env" });
    for (const bin of [bins.ffmpeg, bins.ffprobe]) {
      const { stdout } = await execFileAsync(bin, ["-version"]);
      expect(stdout.split("\n")[0]).toMatch(/^ff(mpeg|probe) version n?5\./);
    }
  });
});

/**
 * The components the engine names that come from libraries outside ffmpeg: the image's own build
 * (build-ffmpeg.sh) enables only those, so this runs wherever the suite runs (Debian's build on the host, the
 * image's in test:container) and fails on a build that lost one. ffmpeg's own components are all in both.
 */
describe("the ffmpeg in use has every external library the engine uses", () => {
  const bins = resolveBinaries(process.env);
  /** The names `ffmpeg -<what>` lists (flags column, then the name; demuxers list "mov,mp4,…" as one). */
  const names = async (what: string) => {
    const { stdout } = await execFileAsync(bins.ffmpeg, ["-hide_banner", `-${what}`], { maxBuffer: 8 << 20 });
    const found = new Set<string>();
    for (const line of stdout.split("\n")) {
      const match = /^ (\S+)\s+(\S+)\s/.exec(line);
      if (match && match[2] !== "=") for (const name of match[2]!.split(",")) found.add(name);
    }
    return found;
  };

  test("encoders: libx264, libmp3lame, libopus, libvorbis, libwebp", async () => {
    const encoders = await names("encoders");
    for (const name of ["libx264", "libmp3lame", "libopus", "libvorbis", "libwebp"])
      expect(encoders.has(name), name).toBe(true);
  });
  // libvpx: VP8/VP9 with their alpha plane (extract-cover.ts); libdav1d: ffmpeg 5.1 has no software AV1 decoder.
  test("decoders: libvpx, libvpx-vp9, libdav1d, libspeex", async () => {
    const decoders = await names("decoders");
    for (const name of ["libvpx", "libvpx-vp9", "libdav1d", "libspeex"])
      expect(decoders.has(name), name).toBe(true);
  });
  test("the demuxers sniff.ts forces, and lavfi for the tests' fixtures", async () => {
    const demuxers = await names("demuxers");
    const forced = [
      "aac",
      "avi",
      "flac",
      "flv",
      "jpeg_pipe",
      "matroska",
      "mov",
      "mp3",
      "mpegts",
      "ogg",
      "png_pipe",
    ];
    for (const name of [...forced, "wav", "webp_pipe", "lavfi"]) expect(demuxers.has(name), name).toBe(true);
  });
});

const npmFfmpeg = npmBinary("ffmpeg");
const npmFfprobe = npmBinary("ffprobe");

describe.runIf(npmFfmpeg !== null && npmFfprobe !== null)("with the npm-shipped ffmpeg/ffprobe", () => {
  let engine: RunningEngine;
  let tmp: string;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "p6-engine-npm-"));
    engine = await startEngine({
      ENGINE_SECRET: SECRET,
      ALLOW_PRIVATE_SOURCES: "true",
      FFMPEG_PATH: npmFfmpeg!,
      FFPROBE_PATH: npmFfprobe!,
      ENGINE_TMPDIR: tmp,
      PATH: "/nonexistent",
    });
  });
  afterAll(async () => {
    await engine?.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  const job = (type: string, source: string, params: Record<string, unknown> = {}) =>
    fetch(`${engine.url}/v1/jobs/${type}`, {
      method: "POST",
      headers: AUTH,
      body: JSON.stringify(withTextMark({ job_id: jobId(), source_url: media(source), params })),
    });

  test("the engine runs the 2018 build", async () => {
    expect(engine.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = (await (await fetch(`${engine.url}/v1/health`, { headers: AUTH })).json()) as {
      ffmpeg: string;
    };
    expect(health.ffmpeg).toMatch(/N-47683/);
  });

  test("video.probe", async () => {
    expect(await (await job("video.probe", FIXTURES.alpha)).json()).toEqual({
      codec: "vp9",
      durationSec: 2,
      fps: "25/1",
      hasAlpha: true,
      width: 320,
      height: 240,
    });
    expect(await (await job("video.probe", FIXTURES.ntsc)).json()).toMatchObject({ fps: "30000/1001" });
  });

  test.each<[string, string, Record<string, unknown>, string, Record<string, unknown>]>([
    ["video.extract-cover", FIXTURES.av, { width: 320, format: "webp" }, "webp", { width: 320, height: 180 }],
    ["video.extract-cover", FIXTURES.alpha, { format: "png" }, "png", { width: 320, height: 240 }],
    // Not an accurate video.trim: its frame-exact window (issue 29) sets its last frame's duration with the
    // setts bitstream filter, which the 2018 build lacks (500). The engine no longer runs on these builds
    // (config.ts, scripts/lib/engine-ffmpeg.ts): this block only shows what they still do.
    ["video.trim", FIXTURES.av, { start: 2.5, end: 4, mode: "fast" }, "mp4", { start: 2 }],
    ["audio.trim", FIXTURES.mp3, { start: 1, end: 3 }, "mp3", { start: 1 }],
    ["video.extract-audio", FIXTURES.av, { format: "opus", bitrate: "96k" }, "opus", {}],
    ["video.extract-audio", FIXTURES.av, {}, "mp3", {}],
    [
      "video.watermark",
      FIXTURES.av,
      { text: "npm build", position: "top" },
      "mp4",
      { width: 640, height: 360 },
    ],
    [
      "video.watermark",
      FIXTURES.av,
      { watermark_url: media(FIXTURES.logo), position: "center" },
      "mp4",
      { width: 640 },
    ],
    [
      "image.watermark",
      FIXTURES.jpeg,
      { watermark_url: media(FIXTURES.logo), format: "webp" },
      "webp",
      { width: 300, height: 200 },
    ],
    ["image.watermark", FIXTURES.logo, { text: "npm" }, "png", { width: 160, height: 80 }],
    ["image.watermark", FIXTURES.logo, { text: "npm", format: "jpeg" }, "jpeg", { width: 160 }],
  ])("%s %s %o", async (type, source, params, format, expected) => {
    const res = await job(type, source, params);
    expect(res.status, await res.clone().text()).toBe(200);
    const result = JSON.parse(res.headers.get("x-engine-result")!) as EngineResult;
    if (type === "video.trim" && params.mode === "fast" && result.copied === false) {
      // With the 2018 build this cut is not copied but re-encoded exactly (copied: false, start as asked):
      // that build's MP4 muxer ends the edit list at the copy's decode-time span (2.067 s), not its
      // presented one (2.134 s, Debian's 5.1), so the last, reordered B-frame (at 2.1 s) lies outside the
      // edit and is read as discarded; trim-fast.ts sees a hidden frame and re-encodes. Either answer is a
      // documented one.
      expect(result).toMatchObject({ format, start: 2.5 });
    } else expect(result).toMatchObject({ format, ...expected });
    const probe = await ffprobe(await saveBody(res, `npm.${format}`));
    expect(probe.streams.length).toBeGreaterThan(0);
    if (result.duration !== undefined && probe.format.duration !== undefined) {
      expect(Math.abs(Number(probe.format.duration) - result.duration)).toBeLessThan(0.1);
    }
  });

  test("nothing is left in the engine's temp directory", async () => {
    expect(await filesUnder(tmp)).toEqual([]);
  });

  test("SIGTERM kills running jobs and removes their files before the engine exits", async () => {
    const id = jobId();
    const running = fetch(`${engine.url}/v1/jobs/video.watermark`, {
      method: "POST",
      headers: AUTH,
      body: JSON.stringify({
        job_id: id,
        source_url: fixtureUrl(`/slow/${FIXTURES.long}?kbps=300`),
        params: { text: "x" },
        text_mark: textMarkFor({ text: "x" }),
      }),
    }).catch(() => null);
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${engine.url}/v1/jobs/${id}`, { headers: AUTH });
      if (res.ok && ((await res.json()) as { progress: number }).progress > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await filesUnder(tmp)).length).toBeGreaterThan(0);
    await engine.stop();
    await running;
    expect(engine.child.exitCode).toBe(0);
    expect(await filesUnder(tmp)).toEqual([]);
    expect(await processesMentioning(tmp)).toEqual([]);
  });
});

/** Processes whose command line mentions `text` (an orphaned ffmpeg would still name its job directory). */
async function processesMentioning(text: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(text) && Number(entry) !== process.pid) found.push(Number(entry));
  }
  return found;
}
