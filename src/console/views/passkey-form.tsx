import type { Child } from "hono/jsx";
import { useContext } from "hono/jsx";
import { CSRF_FIELD } from "../../dashboard/middleware";
import { PageContext } from "../../dashboard/views/components";
import { WEBAUTHN_SCRIPT } from "../assets";
import { consolePaths } from "../paths";

/**
 * A form that runs a passkey ceremony before it is posted (WEBAUTHN_SCRIPT), with the library it needs, both
 * under the page's CSP nonce. Like every form, it carries the CSRF token.
 */
export function PasskeyForm(props: {
  action: string;
  mode: "register" | "authenticate";
  options: unknown;
  children: Child;
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
        <p class="muted small" data-webauthn-status role="status" />
      </form>
      <script nonce={nonce} src={consolePaths.webauthnScript} />
      <script nonce={nonce} dangerouslySetInnerHTML={{ __html: WEBAUTHN_SCRIPT }} />
    </>
  );
}
