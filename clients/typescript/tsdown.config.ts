import { defineConfig } from "tsdown";

/**
 * The published package: ES modules and type declarations in dist/, built from src/ by `npm pack` (prepack).
 * platform "neutral" keeps Node built-ins out: the client needs only fetch, Request/Response and crypto.
 * openapi-fetch and standardwebhooks stay dependencies (not bundled).
 */
export default defineConfig({
  entry: ["src/index.ts"],
  format: "esm",
  platform: "neutral",
  target: "es2022",
  dts: true,
  clean: true,
  outDir: "dist",
});
