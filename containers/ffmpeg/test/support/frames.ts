/**
 * Every decoded video frame of a file (edit list honoured) with its presentation time, its duration and its
 * picture's MD5, by time: the fast-trim tests compare an output's pictures with the source's own frames.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { resolveBinaries } from "../../src/config.ts";

const exec = promisify(execFile);
const bins = resolveBinaries(process.env);

export interface DecodedFrame {
  t: number;
  duration: number;
  md5: string;
}

export async function decodedFrames(file: string): Promise<DecodedFrame[]> {
  const { stdout: times } = await exec(bins.ffprobe, [
    ...["-v", "error", "-select_streams", "v:0"],
    ...["-show_entries", "frame=best_effort_timestamp_time,pkt_duration_time", "-of", "csv=p=0", file],
  ]);
  const { stdout: md5s } = await exec(
    bins.ffmpeg,
    ["-v", "error", "-i", file, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "framemd5", "-"],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  // A frame's line may carry side data after its fields (a display matrix): time and duration come first.
  const fields = times
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => l.split(",").map(Number));
  const sums = md5s
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .map((l) => l.split(",").at(-1)!.trim());
  if (sums.length !== fields.length)
    throw new Error(`${file}: ${sums.length} pictures for ${fields.length} frames`);
  // framemd5 lists frames in output (presentation) order; ffprobe's times are in the same order.
  return fields
    .map(([t, duration], i) => ({ t: t!, duration: duration!, md5: sums[i]! }))
    .sort((a, b) => a.t - b.t);
}
