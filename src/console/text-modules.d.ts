/** Files imported as text by the wrangler.toml [[rules]] of type Text. */
declare module "*.umd.min.js" {
  const text: string;
  export default text;
}
