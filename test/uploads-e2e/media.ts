import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { resolveBinaries } from "../../containers/ffmpeg/src/config.ts";

/**
 * A large real video for the upload tests and the bench: 1280×720 test pattern under temporal noise (so MPEG-4
 * part 2 at q 3 cannot compress it: ≈ 17 MB/s), 25 fps, with a 440 Hz tone, faststart MP4. Cached by recipe in
 * the temp dir; `seconds` 18 gives ≈ 300 MB.
 */
export function largeVideo(seconds: number): string {
  const dir = path.join(os.tmpdir(), "p6-upload-media");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `noise-720p-${seconds}s-v1.mp4`);
  if (existsSync(file)) return file;
  const { ffmpeg } = resolveBinaries(process.env);
  const partial = `${file}.part.mp4`;
  execFileSync(
    "nice",
    [
      "-n",
      "10",
      ffmpeg,
      ...["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25"],
      ...["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", String(seconds)],
      ...["-vf", "noise=alls=30:allf=t", "-c:v", "mpeg4", "-q:v", "3", "-c:a", "aac", "-b:a", "128k"],
      ...["-movflags", "+faststart", partial],
    ],
    { stdio: "inherit" },
  );
  renameSync(partial, file);
  return file;
}

export const sizeOf = (file: string) => statSync(file).size;
