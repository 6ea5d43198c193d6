/**
 * The engine's modules import each other in one direction: no circle, type imports included (pipeline/job.ts
 * hands every job the warm processes, which once took helpers back from job.ts; input-args.ts holds those now).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";

const SRC = path.join(import.meta.dirname, "../src");
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*)["'](\.[^"']+)["']/g;

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return modules(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** Every circle of relative imports, as the chain of files from its first module back to it. */
function circles(): string[] {
  const graph = new Map(
    modules(SRC).map((file) => [
      file,
      [...readFileSync(file, "utf8").matchAll(IMPORT)].map((m) => path.resolve(path.dirname(file), m[1]!)),
    ]),
  );
  const found = new Set<string>();
  const done = new Set<string>();
  const walk = (file: string, chain: string[]) => {
    if (chain.includes(file)) {
      found.add([...chain.slice(chain.indexOf(file)), file].map((f) => path.relative(SRC, f)).join(" → "));
      return;
    }
    if (done.has(file)) return;
    for (const next of graph.get(file) ?? []) walk(next, [...chain, file]);
    done.add(file);
  };
  for (const file of graph.keys()) walk(file, []);
  return [...found];
}

test("no module of the engine imports itself through others", () => {
  expect(circles()).toEqual([]);
});
