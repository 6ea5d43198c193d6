/**
 * npm run console:build: the console's browser code, bundled with esbuild into src/console/bundled/, which is
 * committed and imported by the Worker as text (wrangler.toml [[rules]] Text; served by src/console/assets.ts):
 *  - uppy.bundle.js: Uppy's core, Dashboard and tus uploader (src/console/browser/uppy.ts), the global `Uppy`;
 *  - uppy.bundle.css: Uppy's core and Dashboard stylesheets, as their packages ship them (minified);
 *  - uploads-page.bundle.js: the Uploads page's script (src/console/browser/uploads-page.ts).
 * Committed rather than built by `npm run dev` or deploy, so the Worker builds (wrangler, the worker tests'
 * workerd) need no step of their own; `npm run check` runs this with --check, which fails when a file is not
 * what the current sources and packages build (esbuild's output is deterministic for one version).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { build } from "esbuild";

const root = path.resolve(import.meta.dirname, "..");
const browser = path.join(root, "src/console/browser");
const out = path.join(root, "src/console/bundled");
const require = createRequire(path.join(root, "package.json"));

/** One browser script: an IIFE for the browsers the console supports, minified, without license comments. */
async function script(entry: string, globalName?: string) {
  const result = await build({
    entryPoints: [path.join(browser, entry)],
    bundle: true,
    format: "iife",
    ...(globalName ? { globalName } : {}),
    platform: "browser",
    target: ["es2020", "chrome100", "firefox100", "safari15"],
    minify: true,
    legalComments: "none",
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}

const versions = ["@uppy/core", "@uppy/dashboard", "@uppy/tus", "tus-js-client", "preact"]
  .map((name) => `${name}@${(require(`${name}/package.json`) as { version: string }).version}`)
  .join(", ");
const banner = (what: string) =>
  `/* ${what}. Built by scripts/build-console-assets.ts from ${versions}. */\n`;

const files: Record<string, string> = {
  "uppy.bundle.js": banner("Uppy (MIT), the global Uppy") + (await script("uppy.ts", "Uppy")),
  "uppy.bundle.css":
    banner("Uppy's stylesheets (MIT)") +
    ["@uppy/core/css/style.min.css", "@uppy/dashboard/css/style.min.css"]
      .map((name) => readFileSync(require.resolve(name), "utf8").trim())
      .join("\n") +
    "\n",
  "uploads-page.bundle.js": banner("The console's Uploads page") + (await script("uploads-page.ts")),
};

const check = process.argv.includes("--check");
const stale: string[] = [];
for (const [name, text] of Object.entries(files)) {
  const file = path.join(out, name);
  if (!check) {
    writeFileSync(file, text);
    continue;
  }
  let current = "";
  try {
    current = readFileSync(file, "utf8");
  } catch {}
  if (current !== text) stale.push(path.relative(root, file));
}
if (stale.length > 0) {
  console.error(`Out of date: ${stale.join(", ")}. Run: npm run console:build`);
  process.exit(1);
}
if (!check) {
  for (const [name, text] of Object.entries(files))
    console.log(`${path.relative(root, path.join(out, name))}: ${text.length.toLocaleString("en-US")} bytes`);
}
