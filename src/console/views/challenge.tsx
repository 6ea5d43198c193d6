import type { Challenge } from "altcha-lib";
import type { Context } from "hono";
import { useContext } from "hono/jsx";
import { PageContext } from "../../ui/components";
import { ALTCHA_SCRIPT } from "../assets";
import type { ConsoleEnv } from "../context";
import { allowInCsp } from "../csp";
import { consolePaths } from "../paths";

/** What a sign-in form shows when a challenge is due (src/users/challenge.ts). */
export type ChallengeWidget =
  | { kind: "altcha"; challenge: Challenge }
  | { kind: "turnstile"; siteKey: string };

const TURNSTILE_ORIGIN = "https://challenges.cloudflare.com";

/** Opens the page's Content-Security-Policy to what the widget needs. */
export function allowChallenge(c: Context<ConsoleEnv>, widget: ChallengeWidget) {
  if (widget.kind === "turnstile")
    allowInCsp(c, { "script-src": [TURNSTILE_ORIGIN], "frame-src": [TURNSTILE_ORIGIN] });
  else allowInCsp(c, { "worker-src": ["'self'"] });
}

/**
 * The challenge inside a form: ALTCHA's widget with the challenge inline (it starts on load and puts its answer in
 * the form's `altcha` field), or Turnstile's (its answer goes in `cf-turnstile-response`). Scripts by nonce.
 */
export function ChallengeField(props: { widget: ChallengeWidget }) {
  const { nonce } = useContext(PageContext);
  if (props.widget.kind === "turnstile") {
    return (
      <>
        <div class="cf-turnstile" data-sitekey={props.widget.siteKey} />
        <script nonce={nonce} src={`${TURNSTILE_ORIGIN}/turnstile/v0/api.js`} async defer />
      </>
    );
  }
  return (
    <>
      <link rel="stylesheet" href={consolePaths.altchaStyle} nonce={nonce} />
      <altcha-widget challenge={JSON.stringify(props.widget.challenge)} name="altcha" auto="onload" />
      <script type="module" nonce={nonce} src={consolePaths.altchaScript} />
      <script type="module" nonce={nonce} dangerouslySetInnerHTML={{ __html: ALTCHA_SCRIPT }} />
    </>
  );
}
