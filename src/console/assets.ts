import type { Hono } from "hono";
// The browser half of @simplewebauthn, imported as text (wrangler.toml [[rules]] Text) and served from here: no CDN.
import WEBAUTHN_BROWSER from "../../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js";
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

const SCRIPT = "text/javascript; charset=utf-8";

/**
 * The browser files the console serves itself (no CDN), to anyone: the passkey library, and Uppy with its
 * stylesheet and the Uploads page's script (src/console/bundled, `npm run console:build`). Uppy's files may be
 * loaded by a customer's own page too: they are the same library as Uppy's CDN build.
 */
const FILES: [path: string, body: string, type: string][] = [
  [consolePaths.webauthnScript, WEBAUTHN_BROWSER, SCRIPT],
  [consolePaths.uppyScript, UPPY, SCRIPT],
  [consolePaths.uppyStyles, UPPY_STYLES, "text/css; charset=utf-8"],
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
