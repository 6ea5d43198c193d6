import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildDocument } from "../../clients/typescript/scripts/generate.ts";
import { addCodeSamples } from "../../src/docs/code-samples.ts";
import type { Document } from "../../src/docs/openapi.ts";

const root = path.resolve(import.meta.dirname, "../..");
const clientDir = path.join(root, "clients/typescript");

/**
 * Every TypeScript sample /docs shows (the client's typed calls, its upload helpers, plain fetch), compiled with
 * tsc against the client in clients/typescript: a sample that names a path, parameter, body field or option the
 * client does not have fails here, not in a reader's editor.
 */
describe("the reference's TypeScript-client samples", () => {
  it("type-check against @p6/media-client", async () => {
    const doc = addCodeSamples((await buildDocument()) as unknown as Document, "http://localhost:8787");
    const samples = Object.values(doc.paths ?? {}).flatMap((item) =>
      Object.values(item ?? {}).flatMap((operation) =>
        (
          (operation as { "x-codeSamples"?: { lang: string; source: string }[] })["x-codeSamples"] ?? []
        ).filter((sample) => sample.lang === "TypeScript"),
      ),
    );
    expect(samples.length).toBeGreaterThan(10);

    // Inside the client's package, so that its dependencies (openapi-fetch) resolve as they would for a user.
    const dir = mkdtempSync(path.join(clientDir, ".samples-"));
    try {
      for (const [index, sample] of samples.entries())
        writeFileSync(path.join(dir, `sample-${index}.ts`), sample.source);
      writeFileSync(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({
          extends: "../tsconfig.json",
          compilerOptions: { paths: { "@p6/media-client": ["../src/index.ts"] } },
          include: ["*.ts"],
        }),
      );
      const tsc = spawnSync(
        process.execPath,
        [path.join(root, "node_modules/typescript/bin/tsc"), "-p", dir],
        { encoding: "utf8" },
      );
      expect(`${tsc.stdout}${tsc.stderr}`).toBe("");
      expect(tsc.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
