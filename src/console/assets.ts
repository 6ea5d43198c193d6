import type { Hono } from "hono";
// The browser half of @simplewebauthn, imported as text (wrangler.toml [[rules]] Text) and served from here: no CDN.
import WEBAUTHN_BROWSER from "../../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js";
import type { ConsoleEnv } from "./context";

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

export function registerAssets(app: Hono<ConsoleEnv>) {
  app.get("/assets/webauthn.js", (c) =>
    c.body(WEBAUTHN_BROWSER, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=86400",
    }),
  );
}
