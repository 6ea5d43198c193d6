/**
 * The engine's own ffmpeg build on this machine: `npm run build:ffmpeg` (containers/ffmpeg/build-ffmpeg.sh)
 * puts it in .tools/ffmpeg, the same build as the engine's image. `npm run dev` and the benches run the local
 * engine on it when it is there and FFMPEG_PATH/FFPROBE_PATH are not set; otherwise the engine finds Debian's
 * ffmpeg on PATH. The tests run on PATH's ffmpeg; test:container runs the engine suite on the image's build.
 */
import { existsSync } from "node:fs";
import path from "node:path";

/** Where `npm run build:ffmpeg` installs ffmpeg and ffprobe. */
export const ENGINE_FFMPEG_BIN = path.resolve(import.meta.dirname, "../../.tools/ffmpeg/bin");

/** FFMPEG_PATH and FFPROBE_PATH of the local build, or none when it is not built or the paths are set. */
export function engineFfmpegEnv(
  env: NodeJS.ProcessEnv = process.env,
  bin = ENGINE_FFMPEG_BIN,
): Record<string, string> {
  if (env.FFMPEG_PATH || env.FFPROBE_PATH) return {};
  const ffmpeg = path.join(bin, "ffmpeg");
  const ffprobe = path.join(bin, "ffprobe");
  return existsSync(ffmpeg) && existsSync(ffprobe) ? { FFMPEG_PATH: ffmpeg, FFPROBE_PATH: ffprobe } : {};
}
