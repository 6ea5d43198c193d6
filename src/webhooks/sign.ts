import { Webhook } from "standardwebhooks";

/**
 * The webhook-signature header: one `v1,<base64>` token per active secret, space-separated, so a receiver
 * holding either the old or the new secret verifies during a rotation. Each token is the published
 * standardwebhooks library's own signature (HMAC-SHA256 keyed by the base64 part of `whsec_<base64>`, over
 * `<msgId>.<timestampSec>.<body>`: interface.md "Signature"), not a hand-written copy of it.
 */
export function signatureHeader(
  secrets: string[],
  msgId: string,
  timestampSec: number,
  body: string,
): string {
  const at = new Date(timestampSec * 1000);
  return secrets.map((secret) => new Webhook(secret).sign(msgId, at, body)).join(" ");
}
