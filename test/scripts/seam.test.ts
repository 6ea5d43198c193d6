/**
 * npm run check's seam step (scripts/check-seam.ts): the Worker and the engine share code only through
 * @p6/contract, imported by name. Run as npm run check runs it (a Node process), on small trees made here.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const script = path.join(root, "scripts/check-seam.ts");
const trees: string[] = [];
afterEach(() => {
  for (const dir of trees.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A project tree with these files (path → content) and the check's exit code and output on it. */
function check(files: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), "p6-seam-"));
  trees.push(dir);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  const run = spawnSync(process.execPath, [script, dir], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

const clean = {
  "src/engine/types.ts": 'export type { JobType } from "@p6/contract/wire";\n',
  "src/images/codecs.ts":
    'import { jpegFrame } from "@p6/contract/jpeg-frame";\nimport { x } from "../util/x";\n',
  "containers/ffmpeg/src/server.ts":
    'import { PROTOCOL_VERSION } from "@p6/contract/wire";\nimport "./pool.ts";\n',
  "packages/contract/src/sniff.ts": 'import type { MediaKind } from "./operations/index.ts";\n',
};

describe("npm run check: no deep import across the seam", () => {
  test("imports by package name and within a side pass", () => {
    expect(check(clean)).toEqual({ status: 0, output: "" });
  });

  test.each([
    [
      "the Worker into the engine",
      "src/images/codecs.ts",
      'import { jpegFrame } from "../../containers/ffmpeg/src/jpeg-frame";',
    ],
    [
      "the Worker into the package by path",
      "src/fetch/targets.ts",
      'export * from "../../packages/contract/src/address-policy.ts";',
    ],
    [
      "the engine into the Worker",
      "containers/ffmpeg/src/server.ts",
      'import type { MediaEngine } from "../../../src/engine/types.ts";',
    ],
    [
      "the engine, dynamically",
      "containers/ffmpeg/src/main.ts",
      'const m = await import("../../../src/app.ts");',
    ],
    [
      "the package into the engine",
      "packages/contract/src/sniff.ts",
      'import { EngineError } from "../../../containers/ffmpeg/src/protocol.ts";',
    ],
  ])("fails on a deep import: %s", (_, file, line) => {
    const result = check({ ...clean, [file]: `${line}\n` });
    expect(result.status).toBe(1);
    expect(result.output).toContain(`${file}:1:`);
    expect(result.output).toContain("@p6/contract");
  });

  test("a doc comment showing another folder's import is not an import", () => {
    const comment =
      '/**\n * Used as `import { startEngine } from "../../../src/app.ts"`.\n */\n// import "../../../src/x";\n';
    expect(check({ ...clean, "containers/ffmpeg/src/launch.ts": comment }).status).toBe(0);
  });

  test("this repository passes, and npm run check runs the step", () => {
    expect(check({}).status).toBe(0);
    const run = spawnSync(process.execPath, [script, root], { encoding: "utf8" });
    expect(run.stdout + run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(readFileSync(path.join(root, "scripts/check.ts"), "utf8")).toContain('["scripts/check-seam.ts"]');
  });
});
