import { defineConfig } from "tsdown";

/**
 * The published package: ES modules and type declarations in dist/, built from src/ by `npm pack` (prepack).
 * Two entries with one API: index.js (browsers, bundlers, Workers: tus-js-client's browser build)
 * and node.js (package.json "exports" condition "node": tus-js-client's Node build, node:stream); what they
 * share lands in a common chunk. platform "neutral" keeps Node built-ins out of index.js; node.js names
 * node:stream, left external. openapi-fetch, standardwebhooks and tus-js-client stay dependencies (not bundled).
 */
export default defineConfig({
  entry: ["src/index.ts", "src/node.ts"],
  format: "esm",
  platform: "neutral",
  target: "es2022",
  deps: { neverBundle: [/^node:/] },
  dts: true,
  clean: true,
  outDir: "dist",
});
