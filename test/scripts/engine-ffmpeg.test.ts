/** Which ffmpeg `npm run dev` and the benches give the local engine (scripts/lib/engine-ffmpeg.ts). */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { engineFfmpegEnv } from "../../scripts/lib/engine-ffmpeg.ts";

describe("engineFfmpegEnv", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "p6-engine-ffmpeg-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const put = (name: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, name), "#!/bin/sh\n");
    chmodSync(path.join(dir, name), 0o755);
  };

  test("the build's two programs when both are there, nothing while one is missing", () => {
    expect(engineFfmpegEnv({}, dir)).toEqual({});
    put("ffmpeg");
    expect(engineFfmpegEnv({}, dir)).toEqual({});
    put("ffprobe");
    expect(engineFfmpegEnv({}, dir)).toEqual({
      FFMPEG_PATH: path.join(dir, "ffmpeg"),
      FFPROBE_PATH: path.join(dir, "ffprobe"),
    });
  });

  test("FFMPEG_PATH or FFPROBE_PATH set: the engine resolves them itself", () => {
    put("ffmpeg");
    put("ffprobe");
    expect(engineFfmpegEnv({ FFMPEG_PATH: "/usr/bin/ffmpeg" }, dir)).toEqual({});
    expect(engineFfmpegEnv({ FFPROBE_PATH: "/usr/bin/ffprobe" }, dir)).toEqual({});
  });
});
