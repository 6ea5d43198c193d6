import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { api, base, expectProbeTruth, key, sha256, storedBytes } from "./client.ts";
import { mediumVideo } from "./media.ts";

/**
 * Python's tuspy (Debian's python3-tuspy: PyPI is out of reach; .ci/run installs it) with sha1 checksums, the
 * algorithm the tus checksum extension makes mandatory and tuspy's default: an upload killed midway (the
 * process, mid-PATCH or between two) and resumed by a new process from the offset HEAD reports.
 */

const PYTHON = "/usr/bin/python3";
const SCRIPT = path.join(import.meta.dirname, "tuspy-upload.py");

type Line = { url?: string; offset: number; done?: boolean; algorithm?: string };

function run(file: string, chunk: number, resume?: string) {
  const child = spawn(
    PYTHON,
    [SCRIPT, `${base()}/v1/uploads`, key(), file, String(chunk), ...(resume ? [resume] : [])],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const lines: Line[] = [];
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => {
    for (const line of text.split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Line);
  });
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, lines, exited, stderr: () => stderr };
}

const offsetOf = async (url: string) => {
  const head = await fetch(url, {
    method: "HEAD",
    headers: { Authorization: `Bearer ${key()}`, "Tus-Resumable": "1.0.0" },
  });
  return Number(head.headers.get("upload-offset"));
};

const until = async <T>(check: () => T | undefined | Promise<T | undefined>, what: string, ms = 120_000) => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe("tuspy (sha1 checksums): killed midway, resumed by a new process", () => {
  it("stored = sent, the resume starts at HEAD's offset, and the probe tells the file's truth", async () => {
    const file = mediumVideo();
    const bytes = readFileSync(file);
    const chunk = 256 * 1024;
    const first = run(file, chunk);
    const url = await until(() => first.lines[0]?.url, "the upload URL");
    // Killed once a quarter is stored: mid-PATCH or between two, as a crash or a closed laptop would. Watched
    // with GET, which never stops a PATCH (a writer's HEAD would).
    const id = url.split("/").pop()!;
    const stored = async () => ((await (await api(`/v1/uploads/${id}`)).json()) as { offset: number }).offset;
    await until(
      async () => ((await stored()) >= bytes.byteLength / 4 ? true : undefined),
      "a quarter stored",
    );
    first.child.kill("SIGKILL");
    await first.exited;
    expect(first.lines.some((line) => line.done)).toBe(false);
    const kept = await offsetOf(url);
    expect(kept).toBeLessThan(bytes.byteLength);
    // A checksummed PATCH keeps all of its bytes or none: the offset is a whole number of chunks.
    expect(kept % chunk).toBe(0);

    const second = run(file, chunk, url);
    const code = await second.exited;
    expect(code, second.stderr()).toBe(0);
    expect(second.lines[0]).toMatchObject({ url, offset: kept });
    expect(second.lines.at(-1)).toMatchObject({ done: true, offset: bytes.byteLength, algorithm: "sha1" });

    expect(((await (await api(`/v1/uploads/${id}`)).json()) as { state: string }).state).toBe("complete");
    expect(sha256(await storedBytes(id))).toBe(sha256(bytes));
    await expectProbeTruth(id, file);
  });
});
