/** tus-js-client's browser build by path (tus-browser.ts): the package's own types. */
declare module "tus-js-client/lib.esm/browser/index.js" {
  export * from "tus-js-client";
}
