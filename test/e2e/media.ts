import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { resolveBinaries } from "../../containers/ffmpeg/src/config.ts";
import { engineFixturesDir } from "../../containers/ffmpeg/test/support/fixture-files.ts";
import { startFixtureServer } from "../../containers/ffmpeg/test/support/fixture-server.ts";
import { generateFixtures } from "../../containers/ffmpeg/test/support/media.ts";

const exec = promisify(execFile);
const binaries = resolveBinaries(process.env);

/** Real media generated with ffmpeg, served from loopback: the "public internet" of the end-to-end tests. */
export async function serveFixtures() {
  // The engine suite's folder, keyed by its generators, which write each file whole (fixture-files.ts).
  const dir = engineFixturesDir();
  await generateFixtures(binaries.ffmpeg, dir);
  const server = await startFixtureServer(dir);
  return { media: (name: string) => server.url(`/media/${name}`), close: () => server.close() };
}

/** ffprobe of a downloaded file. */
export async function ffprobeBytes(bytes: ArrayBuffer) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "p6-e2e-probe-"));
  try {
    const file = path.join(dir, "file");
    writeFileSync(file, Buffer.from(bytes));
    const { stdout } = await exec(binaries.ffprobe, [
      "-v",
      "error",
      "-show_streams",
      "-show_format",
      "-of",
      "json",
      file,
    ]);
    return JSON.parse(stdout) as {
      streams: { codec_type: string; codec_name: string; width?: number; height?: number }[];
      format: { duration: string };
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
