/**
 * The files of the API reference's renderer (@scalar/api-reference's browser build, wrangler.toml [assets])
 * that /docs loads: its ES module entry and the chunks it imports, by path inside the assets directory. The
 * route serves only these (src/routes/docs), and `npm run deploy` uploads only these (scripts/deploy.ts):
 * 117 files, 4.9 MB of the package's 49 MB folder, which also holds source maps and a UMD build.
 */
export const RENDERER_FILE = /^(standalone\.esm\.js|chunks\/[\w-][\w.-]*\.js)$/;

export function isRendererFile(name: string) {
  return RENDERER_FILE.test(name) && !name.includes("..");
}
