import { ROTATION_OVERLAP_MS } from "../../webhooks/secrets";
import { PostForm } from "./components";
import { formatRemaining } from "./format";

/** The question before a webhook secret rotation (dashboard and console): what happens, then the one button. */
export function ConfirmRotation(props: { action: string; cancel: string }) {
  return (
    <section class="panel">
      <h1>Rotate the webhook signing secret?</h1>
      <p>
        A new secret signs every delivery from now on. The current one keeps signing beside it for{" "}
        {formatRemaining(ROTATION_OVERLAP_MS)}, then stops: every receiver must have the new secret by then. A
        rotation cannot be undone.
      </p>
      <PostForm action={props.action} class="actions">
        <button type="submit" class="danger">
          Rotate the secret
        </button>
        <a href={props.cancel}>Cancel</a>
      </PostForm>
    </section>
  );
}
