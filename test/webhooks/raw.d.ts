/** Vite's `?raw` imports (a file's text), used to read wrangler.toml in config.test.ts. */
declare module "*?raw" {
  const text: string;
  export default text;
}
