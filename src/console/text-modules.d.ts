/** Files imported as text by the wrangler.toml [[rules]] of type Text. */
declare module "*.umd.min.js" {
  const text: string;
  export default text;
}

declare module "*/altcha.min.js" {
  const text: string;
  export default text;
}

declare module "*/altcha.css" {
  const text: string;
  export default text;
}

declare module "*/workers/pbkdf2.js" {
  const text: string;
  export default text;
}
