import type { Hono } from "hono";
// The browser half of @simplewebauthn, imported as text (wrangler.toml [[rules]] Text) and served from here: no CDN.
import WEBAUTHN_BROWSER from "../../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js";
// The ALTCHA widget's CSP-friendly build (altcha/external: no inline styles or blob workers) and its worker.
import ALTCHA_STYLE from "../../node_modules/altcha/dist/external/altcha.css";
import ALTCHA_WIDGET from "../../node_modules/altcha/dist/external/altcha.min.js";
import ALTCHA_PBKDF2_WORKER from "../../node_modules/altcha/dist/workers/pbkdf2.js";
import UPLOADS_PAGE from "./bundled/uploads-page.bundle.js";
import UPPY_STYLES from "./bundled/uppy.bundle.css";
import UPPY from "./bundled/uppy.bundle.js";
import type { ConsoleEnv } from "./context";
import { CONSOLE, consolePaths } from "./paths";

/**
 * Runs a passkey ceremony for each `form[data-webauthn]` when it is submitted: the options come from the form's
 * `data-options`, the authenticator's answer goes into its `response` field, and the form is then posted as
 * usual (with its CSRF token). No fetch: the server sees an ordinary form post. The form's buttons are rendered
 * disabled and enabled here, once the handler is in place.
 */
export const WEBAUTHN_SCRIPT = `
document.querySelectorAll("form[data-webauthn]").forEach(function (form) {
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var lib = window.SimpleWebAuthnBrowser;
    var status = form.querySelector("[data-webauthn-status]");
    var say = function (text) { if (status) status.textContent = text; };
    if (!lib || !lib.browserSupportsWebAuthn()) { say("This browser does not support passkeys."); return; }
    var optionsJSON = JSON.parse(form.getAttribute("data-options"));
    var ceremony = form.getAttribute("data-webauthn") === "register"
      ? lib.startRegistration({ optionsJSON: optionsJSON })
      : lib.startAuthentication({ optionsJSON: optionsJSON });
    say("Waiting for the passkey…");
    ceremony.then(function (answer) {
      form.querySelector("input[name=response]").value = JSON.stringify(answer);
      form.submit();
    }, function (error) { say("The passkey was not used: " + error.message); });
  });
  form.querySelectorAll("button[type=submit]").forEach(function (button) { button.disabled = false; });
});
`;

/**
 * Starts the widget's proof of work in a worker served from here (the external build bundles none): the one
 * algorithm our challenges use (src/users/challenge.ts). A module script, so it runs after the widget's module.
 */
export const ALTCHA_SCRIPT = `globalThis.$altcha.algorithms.set("PBKDF2/SHA-256", () => new Worker(${JSON.stringify(consolePaths.altchaWorker)}));`;

const SCRIPT = "text/javascript; charset=utf-8";
const STYLE = "text/css; charset=utf-8";

/**
 * The browser files the console serves itself (no CDN), to anyone: the passkey library, the ALTCHA widget with
 * its stylesheet and worker, and Uppy with its stylesheet and the Uploads page's script (src/console/bundled,
 * `npm run console:build`). Uppy's files may be loaded by a customer's own page too: they are the same library
 * as Uppy's CDN build.
 */
const FILES: [path: string, body: string, type: string][] = [
  [consolePaths.webauthnScript, WEBAUTHN_BROWSER, SCRIPT],
  [consolePaths.altchaScript, ALTCHA_WIDGET, SCRIPT],
  [consolePaths.altchaStyle, ALTCHA_STYLE, STYLE],
  [consolePaths.altchaWorker, ALTCHA_PBKDF2_WORKER, SCRIPT],
  [consolePaths.uppyScript, UPPY, SCRIPT],
  [consolePaths.uppyStyles, UPPY_STYLES, STYLE],
  [consolePaths.uploadsScript, UPLOADS_PAGE, SCRIPT],
];

/** The console's paths of the files above, which need no session. */
export const ASSET_PATHS: readonly string[] = FILES.map(([path]) => path);

export function registerAssets(app: Hono<ConsoleEnv>) {
  for (const [path, body, type] of FILES) {
    app.get(path.slice(CONSOLE.length), (c) =>
      c.body(body, 200, { "Content-Type": type, "Cache-Control": "public, max-age=86400" }),
    );
  }
}
