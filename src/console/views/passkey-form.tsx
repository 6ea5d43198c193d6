import type { Child } from "hono/jsx";
import { useContext } from "hono/jsx";
import { PageContext } from "../../ui/components";
import { CSRF_FIELD } from "../../ui/forms";
import { WEBAUTHN_SCRIPT } from "../assets";
import { consolePaths } from "../paths";

/**
 * A form that runs a passkey ceremony before it is posted (WEBAUTHN_SCRIPT), with the library it needs, both
 * under the page's CSP nonce. Like every form, it carries the CSRF token. Its button starts disabled and the script
 * enables it once the submit handler is attached: a click before the scripts have run would otherwise post the form
 * without a passkey answer (seen under load in CI), and without JavaScript the button could not work at all.
 */
export function PasskeyForm(props: {
  action: string;
  mode: "register" | "authenticate";
  options: unknown;
  /** The submit button's text. */
  button: string;
  secondary?: boolean;
  /** Fields shown before the button. */
  children?: Child;
}) {
  const { csrf, nonce } = useContext(PageContext);
  return (
    <>
      <form
        method="post"
        action={props.action}
        class="stack"
        data-webauthn={props.mode}
        data-options={JSON.stringify(props.options)}
      >
        <input type="hidden" name={CSRF_FIELD} value={csrf} />
        <input type="hidden" name="response" value="" />
        {props.children}
        <button type="submit" class={props.secondary ? "secondary" : undefined} disabled>
          {props.button}
        </button>
        <p class="muted small" data-webauthn-status role="status" />
      </form>
      <script nonce={nonce} src={consolePaths.webauthnScript} />
      <script nonce={nonce} dangerouslySetInnerHTML={{ __html: WEBAUTHN_SCRIPT }} />
    </>
  );
}
