/**
 * Which ffmpeg a local engine runs on: the one the tests verify, ffmpeg 5.x (Debian's 5.1, or the engine
 * image's build of the same source), never another one silently (issue 29: with no ffmpeg on PATH the engine
 * fell back to @ffmpeg-installer's 2018 build, on which exact runs came out wrong, while `npm run dev` said
 * "the ffmpeg found on PATH"). `npm run dev`, the benches and both test setups ask chooseEngineFfmpeg and print
 * what it chose; the engine itself no longer falls back to the npm builds (containers/ffmpeg/src/config.ts).
 *
 * In order: FFMPEG_PATH/FFPROBE_PATH when set; the engine's own build in .tools/ffmpeg (`npm run build:ffmpeg`)
 * when asked to prefer it (dev, benches; the tests run on PATH's, and test:container on the image's); PATH's
 * ffmpeg and ffprobe; Debian's, installed with apt-get where apt-get is there and we are root (as dev does for
 * fonts). Each must say it is version 5; otherwise FfmpegMissing, whose `command` is the one thing to run.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { onPath } from "../../containers/ffmpeg/src/config.ts";

/** Where `npm run build:ffmpeg` installs ffmpeg and ffprobe. */
export const ENGINE_FFMPEG_BIN = path.resolve(import.meta.dirname, "../../.tools/ffmpeg/bin");

/** Where Debian's ffmpeg package puts its programs. */
export const DEBIAN_BIN = "/usr/bin";

/** The major version the tests verify (Debian 12's 5.1 and the image's build of it). */
export const TESTED_MAJOR = 5;

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

export interface EngineFfmpeg {
  FFMPEG_PATH: string;
  FFPROBE_PATH: string;
  /** First line of `ffmpeg -version`, e.g. "ffmpeg version 5.1.9-0+deb12u1 Copyright …". */
  version: string;
  /** Where it came from, for the line printed. */
  how: string;
}

/** No tested ffmpeg here: `message` says what was found, `command` is what to run. */
export class FfmpegMissing extends Error {
  readonly command: string;
  constructor(message: string, command: string) {
    super(message);
    this.name = "FfmpegMissing";
    this.command = command;
  }
}

export interface ChooseOptions {
  env?: NodeJS.ProcessEnv;
  /** .tools/ffmpeg before PATH (dev, benches). */
  preferBuild?: boolean;
  /** Install Debian's with apt-get when none is found (and apt-get is there, and we are root). Default true. */
  install?: boolean;
  /** Default: process.getuid() === 0. */
  isRoot?: boolean;
  /** Overrides for tests. */
  buildBin?: string;
  debianBin?: string;
  log?: (line: string) => void;
}

/** First line of `<bin> -version`, or null when it does not run. */
export function versionLine(bin: string): string | null {
  try {
    const out = execFileSync(bin, ["-version"], { encoding: "utf8", timeout: 20_000, stdio: "pipe" });
    return out.split("\n")[0]?.trim() || null;
  } catch {
    return null;
  }
}

/** "ffmpeg version 5.1.9-0+deb12u1 …" or the build's "ffmpeg version 5.1.9-p6 …" (a release; "n5.1" from git). */
export const isTested = (line: string | null): boolean =>
  line !== null && new RegExp(`^ff(?:mpeg|probe) version n?${TESTED_MAJOR}\\.`).test(line);

const short = (line: string | null) => (line === null ? "does not run" : line.replace(/ Copyright.*/, ""));

/** The pair at `ffmpeg`/`ffprobe` when both are version 5, else why not. */
function check(ffmpeg: string, ffprobe: string, how: string): EngineFfmpeg | string {
  const version = versionLine(ffmpeg);
  if (!isTested(version)) return `${ffmpeg}: ${short(version)}`;
  const probe = versionLine(ffprobe);
  if (!isTested(probe)) return `${ffprobe}: ${short(probe)}`;
  return { FFMPEG_PATH: ffmpeg, FFPROBE_PATH: ffprobe, version: version!, how };
}

/** One line saying which ffmpeg the engine runs on. */
export const describeFfmpeg = (f: EngineFfmpeg): string =>
  `${short(f.version)} at ${f.FFMPEG_PATH} (${f.how}; ffprobe ${f.FFPROBE_PATH})`;

export function chooseEngineFfmpeg(options: ChooseOptions = {}): EngineFfmpeg {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const tried: string[] = [];
  const tryPair = (ffmpeg: string, ffprobe: string, how: string): EngineFfmpeg | null => {
    const found = check(ffmpeg, ffprobe, how);
    if (typeof found !== "string") return found;
    tried.push(found);
    return null;
  };
  if (env.FFMPEG_PATH || env.FFPROBE_PATH) {
    if (!env.FFMPEG_PATH || !env.FFPROBE_PATH) {
      throw new FfmpegMissing(
        "FFMPEG_PATH and FFPROBE_PATH are set together or not at all",
        "export FFMPEG_PATH=/path/to/ffmpeg FFPROBE_PATH=/path/to/ffprobe",
      );
    }
    const chosen = tryPair(env.FFMPEG_PATH, env.FFPROBE_PATH, "FFMPEG_PATH/FFPROBE_PATH");
    if (chosen) return chosen;
    throw new FfmpegMissing(
      `FFMPEG_PATH/FFPROBE_PATH are not ffmpeg ${TESTED_MAJOR}.x, the version the tests verify (${tried.join("; ")})`,
      "unset FFMPEG_PATH FFPROBE_PATH",
    );
  }
  const build = options.buildBin ?? ENGINE_FFMPEG_BIN;
  if (options.preferBuild && existsSync(path.join(build, "ffmpeg"))) {
    const chosen = tryPair(
      path.join(build, "ffmpeg"),
      path.join(build, "ffprobe"),
      "the engine image's build, .tools/ffmpeg",
    );
    if (chosen) return chosen;
  }
  const [ffmpeg, ffprobe] = [onPath("ffmpeg", env), onPath("ffprobe", env)];
  if (ffmpeg && ffprobe) {
    const chosen = tryPair(ffmpeg, ffprobe, "found on PATH");
    if (chosen) return chosen;
  } else tried.push("no ffmpeg and ffprobe on PATH");

  const debian = options.debianBin ?? DEBIAN_BIN;
  const aptGet = onPath("apt-get", env);
  const root = options.isRoot ?? process.getuid?.() === 0;
  if (aptGet !== null && root && options.install !== false) {
    log(`Installing Debian's ffmpeg with apt-get (the tests verify ffmpeg ${TESTED_MAJOR}.x)…`);
    const aptEnv = { ...env, DEBIAN_FRONTEND: "noninteractive" };
    const install = ["install", "-y", "-qq", "--no-install-recommends", "ffmpeg"];
    try {
      execFileSync(aptGet, install, { stdio: "ignore", env: aptEnv });
    } catch {
      try {
        execFileSync(aptGet, ["update", "-qq"], { stdio: "ignore", env: aptEnv });
        execFileSync(aptGet, install, { stdio: "ignore", env: aptEnv });
      } catch (err) {
        tried.push(`apt-get install ffmpeg failed (${err instanceof Error ? err.message : String(err)})`);
      }
    }
    const chosen = tryPair(
      path.join(debian, "ffmpeg"),
      path.join(debian, "ffprobe"),
      "Debian's, installed with apt-get",
    );
    if (chosen) return chosen;
  }
  const command =
    aptGet === null
      ? "FFMPEG_PATH=/path/to/ffmpeg-5 FFPROBE_PATH=/path/to/ffprobe-5 npm run dev   (ffmpeg 5.x from https://ffmpeg.org/download.html)"
      : root
        ? "apt-get install -y ffmpeg"
        : "sudo apt-get install -y ffmpeg";
  throw new FfmpegMissing(
    `no ffmpeg ${TESTED_MAJOR}.x, the version the tests verify: ${tried.join("; ")}`,
    command,
  );
}

/**
 * For the test setups and the benches: chooses (installing when it can), prints the choice, and sets
 * FFMPEG_PATH/FFPROBE_PATH in this process's environment so that everything started after it (the engines,
 * the test workers, ffmpeg run by the setup itself) uses it. Throws with the command to run when there is none.
 */
export function useEngineFfmpeg(label: string, options: ChooseOptions = {}): EngineFfmpeg {
  try {
    const chosen = chooseEngineFfmpeg({ ...options, log: (line) => console.log(`${label}: ${line}`) });
    process.env.FFMPEG_PATH = chosen.FFMPEG_PATH;
    process.env.FFPROBE_PATH = chosen.FFPROBE_PATH;
    console.log(`${label}: the engine runs on ${describeFfmpeg(chosen)}`);
    return chosen;
  } catch (err) {
    if (err instanceof FfmpegMissing) throw new Error(`${err.message}. Run: ${err.command}`);
    throw err;
  }
}
