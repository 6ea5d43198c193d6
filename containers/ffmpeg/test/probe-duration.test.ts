/**
 * video.probe reports what plays when the container's header says otherwise (issue 29, class F): a file cut
 * short whose header still states its whole length (fixture2.mkv: 1132 s for 1.7 s), a subtitle that
 * outlasts the audio and video (matroska-test5-short.mkv: 3.4 s for 2.0 s), a timeline that starts at 300 s
 * (310 s for 10 s), a timeline that starts a little after 0 in a container whose header states where it ends
 * (an FLV of B-frame H.264 from 0.133 s and AAC from 0.110 s stated 3.133 s for 3.041; a Matroska file from
 * 0.079 s stated 3.100 s for 3.029). The truth is measured by decoding: from the first video frame or audio frame to the end
 * of the last one (ffprobe's frames), without the file's own duration fields.
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import { fixturePath, media, startTestEngine, type TestEngine } from "./support/engine.ts";
import { ensureFixtures, ffmpeg } from "./support/ffmpeg-fixture.ts";

vi.setConfig({ testTimeout: 120_000 });

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

const FILES = {
  /** The first 35 % of a 10 s H.264/AAC Matroska file, whose header still says 10 s (fixture2.mkv). */
  mkvTruncated: "dur-truncated.mkv",
  /** 2 s of H.264/AAC and a subtitle shown until 6 s (matroska-test5-short.mkv). */
  mkvSubtitle: "dur-subtitle.mkv",
  /** 10 s of H.264/AAC whose timeline starts at 300 s. */
  mp4At300: "dur-at-300.mp4",
  mkvAt300: "dur-at-300.mkv",
  /** 3 s of B-frame H.264 and AAC in FLV: video from 0.133 s, audio from 0.110 s (h264-aac.flv of the matrix). */
  flvLate: "dur-late.flv",
  /** 3 s of H.264/AAC in Matroska on a timeline moved 0.1 s late: audio from 0.079 s. */
  mkvLate: "dur-late.mkv",
} as const;

const avInputs = (seconds: number) => [
  ...["-f", "lavfi", "-i", `testsrc2=size=160x90:rate=25:duration=${seconds}`],
  ...["-f", "lavfi", "-i", `aevalsrc=0.2*sin(2*PI*440*t):s=48000:d=${seconds}`],
];
const AV_CODECS = ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac"];
const av = (seconds: number) => [...avInputs(seconds), ...AV_CODECS];

async function generate(): Promise<void> {
  await ensureFixtures({
    [FILES.mkvTruncated]: async (out) => {
      const whole = `${out}.whole.mkv`;
      await ffmpeg([...av(10), "-f", "matroska", whole]);
      const bytes = await readFile(whole);
      await writeFile(out, bytes.subarray(0, Math.floor(bytes.length * 0.35)));
    },
    [FILES.mkvSubtitle]: async (out) => {
      const srt = `${out}.srt`;
      await writeFile(srt, "1\n00:00:00,500 --> 00:00:06,000\nstill shown\n");
      await ffmpeg([
        ...avInputs(2),
        "-i",
        srt,
        "-map",
        "0",
        "-map",
        "1",
        "-map",
        "2",
        ...AV_CODECS,
        "-c:s",
        "srt",
        out,
      ]);
    },
    [FILES.mp4At300]: (out) => ffmpeg([...av(10), "-output_ts_offset", "300", "-f", "mp4", out]),
    [FILES.mkvAt300]: (out) => ffmpeg([...av(10), "-output_ts_offset", "300", "-f", "matroska", out]),
    [FILES.flvLate]: (out) => ffmpeg([...av(3), "-ar", "44100", "-f", "flv", out]),
    [FILES.mkvLate]: (out) => ffmpeg([...av(3), "-output_ts_offset", "0.1", "-f", "matroska", out]),
  });
}

/**
 * What plays of a file: from the first video frame or audio sample to the end of the last, measured by
 * decoding (ffprobe's frames: presentation time + duration), without the file's own duration fields.
 */
async function playedSeconds(file: string): Promise<number> {
  const spans: [number, number][] = [];
  for (const stream of ["v:0", "a:0"]) {
    const { stdout } = await exec(bins.ffprobe, [
      ...["-v", "quiet", "-select_streams", stream],
      ...["-show_entries", "frame=best_effort_timestamp_time,pkt_duration_time", "-of", "csv=p=0", file],
    ]);
    const rows = stdout
      .split("\n")
      .map((l) => l.split(",").map(Number))
      .filter((r) => r.length >= 2 && Number.isFinite(r[0]));
    if (rows.length === 0) continue;
    spans.push([
      Math.min(...rows.map((r) => r[0]!)),
      Math.max(...rows.map((r) => r[0]! + (Number.isFinite(r[1]) ? r[1]! : 0))),
    ]);
  }
  return Math.max(...spans.map((s) => s[1])) - Math.min(...spans.map((s) => s[0]));
}

let engine: TestEngine;
beforeAll(async () => {
  await generate();
  engine = await startTestEngine();
}, 180_000);
afterAll(() => engine.close());

describe("video.probe reports what plays, not what the header says", () => {
  // Tolerance: what the header may still say. A Matroska header states its video's end, which stops short of
  // the padding of the last AAC frame (8 ms here; packets that end past the header by less than 20 ms may be
  // Opus or Vorbis padding a DiscardPadding hides, probe.ts); an FLV's packets count (1 ms: rounding).
  test.each([
    [FILES.mkvTruncated, "cut short (header: 10 s)", 0.05],
    [FILES.mkvSubtitle, "a subtitle until 6 s", 0.05],
    [FILES.mp4At300, "MP4 from 300 s", 0.05],
    [FILES.mkvAt300, "Matroska from 300 s", 0.05],
    [FILES.flvLate, "FLV from 0.110 s", 0.001],
    [FILES.mkvLate, "Matroska from 0.079 s", 0.01],
  ])("%s: %s", async (source, _shape, tolerance) => {
    const res = await engine.job("video.probe", { source_url: media(source) });
    expect(res.status).toBe(200);
    const { durationSec } = (await res.json()) as { durationSec: number };
    const played = await playedSeconds(fixturePath(source));
    expect(Math.abs(durationSec - played)).toBeLessThanOrEqual(tolerance);
  });
});
