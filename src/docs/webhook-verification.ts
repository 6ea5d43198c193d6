/**
 * Receiver-side verification of a delivery (Standard Webhooks, as src/webhooks/sign.ts signs), for the
 * reference page. Each follows interface.md "Signature" steps 1–5 with the language's standard library.
 */
export const WEBHOOK_VERIFICATION: { language: string; code: string }[] = [
  {
    language: "TypeScript (Node)",
    code: `import { createHmac, timingSafeEqual } from "node:crypto";

/** rawBody: the request body exactly as received, before any JSON parsing. */
export function verifyWebhook(secret: string, headers: Headers, rawBody: string): boolean {
  const id = headers.get("webhook-id");
  const timestamp = headers.get("webhook-timestamp");
  const signatures = headers.get("webhook-signature");
  if (!id || !timestamp || !signatures) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 5 * 60) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(\`\${id}.\${timestamp}.\${rawBody}\`).digest();
  return signatures.split(" ").some((token) => {
    const [version, signature = ""] = token.split(",");
    const given = Buffer.from(signature, "base64");
    return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

// Or, with the published verifier (npm install standardwebhooks):
// new Webhook(secret).verify(rawBody, Object.fromEntries(headers)) throws unless valid.`,
  },
  {
    language: "Python",
    code: `import base64, hashlib, hmac, time

def verify_webhook(secret: str, headers, raw_body: bytes) -> bool:
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not (msg_id and timestamp and signatures):
        return False
    if abs(time.time() - int(timestamp)) > 5 * 60:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + raw_body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(token, expected) for token in signatures.split(" "))`,
  },
  {
    language: "Go",
    code: `package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Verify reports whether a delivery is authentic; body is the raw request body.
func Verify(secret string, h http.Header, body []byte) bool {
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sent, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || id == "" {
		return false
	}
	if age := time.Since(time.Unix(sent, 0)); age > 5*time.Minute || age < -5*time.Minute {
		return false
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	expected := []byte("v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for _, token := range strings.Split(h.Get("webhook-signature"), " ") {
		if hmac.Equal([]byte(token), expected) {
			return true
		}
	}
	return false
}`,
  },
];
