import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { resolveBinaries } from "../../containers/ffmpeg/src/config.ts";
import { publishSync, recipeDir } from "../../containers/ffmpeg/test/support/fixture-files.ts";

/** Seconds of noise encoded once; the video repeats it (by stream copy) up to its length. */
const CLIP_SECONDS = 3;

/**
 * A large real video for the upload tests and the bench: 1280×720 test pattern under temporal noise (so MPEG-4
 * part 2 at q 3 cannot compress it: ≈ 17 MB/s), 25 fps, with a 440 Hz tone, faststart MP4. Cached by recipe in
 * the temp dir; `seconds` 18 gives ≈ 300 MB.
 *
 * Only a 3 s clip is encoded (the noise encode was ≈ 3 min of the 18 s on a fresh machine); the concat demuxer
 * repeats it by stream copy to `seconds` and the tone is encoded for the whole length. Every frame still
 * differs from its neighbours (the noise is per frame within the clip, and a clip's last frame is not its
 * first), so a trim one frame off is still told apart from an exact one; a trim start that is not a multiple
 * of 3 s falls inside a GOP, as in the encoded whole.
 */
export function largeVideo(seconds: number): string {
  // Keyed by this recipe; made under a name of its own and renamed (fixture-files.ts), so runs and clones
  // sharing the folder never read a part-written video or each other's clip.
  const dir = recipeDir("p6-upload-media", [import.meta.filename]);
  const file = path.join(dir, `noise-720p-${seconds}s.mp4`);
  if (existsSync(file)) return file;
  const { ffmpeg } = resolveBinaries(process.env);
  const nice = (args: string[]) =>
    execFileSync("nice", ["-n", "10", ffmpeg, "-v", "error", "-y", ...args], { stdio: "inherit" });
  publishSync(file, (partial) => {
    // Scratch files named after the partial: removed with it.
    const clip = `${partial}.clip.mp4`;
    const list = `${partial}.txt`;
    nice([
      ...["-f", "lavfi", "-i", `testsrc2=size=1280x720:rate=25`, "-t", String(CLIP_SECONDS)],
      ...["-vf", "noise=alls=30:allf=t", "-c:v", "mpeg4", "-q:v", "3", "-an", clip],
    ]);
    const repeats = Math.ceil(seconds / CLIP_SECONDS);
    writeFileSync(list, `file '${path.basename(clip)}'\n`.repeat(repeats));
    nice([
      ...["-f", "concat", "-safe", "0", "-i", list],
      ...["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", String(seconds)],
      ...["-map", "0:v", "-map", "1:a", "-c:v", "copy", "-c:a", "aac", "-b:a", "128k"],
      ...["-movflags", "+faststart", partial],
    ]);
  });
  return file;
}

/**
 * A ≈ 24 MiB real video (1280×720 under temporal noise, MPEG-4 part 2 at q 2, 25 fps, a tone): more than two
 * 8 MiB parts, so every chunk size up to 8 MiB + 1 crosses part boundaries. Cached by recipe, written whole.
 */
export function mediumVideo(): string {
  const file = path.join(recipeDir("p6-upload-media", [import.meta.filename]), "noise-720p-1.6s.mp4");
  if (existsSync(file)) return file;
  const { ffmpeg } = resolveBinaries(process.env);
  publishSync(file, (partial) =>
    execFileSync(
      "nice",
      [
        ...["-n", "10", ffmpeg, "-v", "error", "-y"],
        ...["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25", "-f", "lavfi"],
        ...["-i", "sine=frequency=440:sample_rate=48000", "-t", "1.6", "-vf", "noise=alls=30:allf=t"],
        ...["-c:v", "mpeg4", "-q:v", "2", "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart"],
        ...["-f", "mp4", partial],
      ],
      { stdio: "inherit" },
    ),
  );
  return file;
}

/** A small real video (320×240 H.264, 3 s, AAC): the 1 KiB-chunk upload's file. Cached by recipe, written whole. */
export function smallVideo(): string {
  const file = path.join(recipeDir("p6-upload-media", [import.meta.filename]), "small-240p-3s.mp4");
  if (existsSync(file)) return file;
  const { ffmpeg } = resolveBinaries(process.env);
  publishSync(file, (partial) =>
    execFileSync(ffmpeg, [
      ...["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi"],
      ...["-i", "sine=frequency=220:sample_rate=44100", "-t", "3", "-c:v", "libx264", "-c:a", "aac"],
      ...["-f", "mp4", partial],
    ]),
  );
  return file;
}
