import type { Context } from "hono";
import { useContext } from "hono/jsx";
import { PageContext } from "../../ui/components";
import type { ConsoleEnv } from "../context";
import { allowInCsp } from "../csp";
import { consolePaths } from "../paths";

/**
 * As the user types a new password (quarter of a second after the last key), asks the server's own estimate
 * (POST /console/password-strength, the very check the form's submission runs) and shows its verdict under the
 * field. The server stays the judge: this only says early what the submission would say.
 */
const SCRIPT = `document.querySelectorAll("[data-password-strength]").forEach(function (out) {
  var input = document.getElementById(out.getAttribute("data-password-strength"));
  if (!input) return;
  var email = input.form && input.form.querySelector("input[name=email]");
  var timer, asked = 0;
  var check = function () {
    var n = ++asked;
    if (!input.value) { out.textContent = ""; out.removeAttribute("data-acceptable"); return; }
    fetch(out.getAttribute("data-endpoint"), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ password: input.value, email: email ? email.value : out.getAttribute("data-email") || "" }),
    }).then(function (r) { return r.ok ? r.json() : null; }).then(function (verdict) {
      if (n !== asked || !verdict) return;
      out.textContent = verdict.message;
      out.setAttribute("data-acceptable", String(verdict.acceptable));
    }, function () {});
  };
  input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(check, 250); });
});`;

/** Lets the page's script ask the meter's endpoint (connect-src 'self'). */
export const allowPasswordStrength = (c: Context<ConsoleEnv>) => allowInCsp(c, { "connect-src": ["'self'"] });

/** The live verdict on the password field `field` (its input's id); `email`: the account's, when no field has it. */
export function PasswordStrength(props: { field: string; email?: string }) {
  const { nonce } = useContext(PageContext);
  return (
    <>
      <p
        class="hint strength"
        id={`${props.field}-strength`}
        aria-live="polite"
        data-password-strength={props.field}
        data-endpoint={consolePaths.passwordStrength}
        data-email={props.email}
      />
      <script nonce={nonce} dangerouslySetInnerHTML={{ __html: SCRIPT }} />
    </>
  );
}
