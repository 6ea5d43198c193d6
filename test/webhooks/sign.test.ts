import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { generateWebhookSecret } from "../../src/webhooks/secrets";
import { signatureHeader } from "../../src/webhooks/sign";

const body = '{"id":"01J0000000000000000000000","status":"succeeded","note":"ünïcödé ✓"}';
const msgId = "msg_01J0000000000000000000000";

describe("signatureHeader", () => {
  it("produces a v1 token the standardwebhooks verifier accepts", async () => {
    const secret = generateWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const header = signatureHeader([secret], msgId, timestamp, body);
    expect(header).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const headers = {
      "webhook-id": msgId,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": header,
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("is HMAC-SHA256 keyed by the base64 part after whsec_, over id.timestamp.body (computed here with WebCrypto)", async () => {
    const keyBytes = new Uint8Array(32).map((_, i) => i);
    const secret = `whsec_${btoa(String.fromCharCode(...keyBytes))}`;
    const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    const mac = new Uint8Array(
      await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${msgId}.1700000000.${body}`)),
    );
    expect(signatureHeader([secret], msgId, 1_700_000_000, body)).toBe(
      `v1,${btoa(String.fromCharCode(...mac))}`,
    );
  });

  it("carries one token per secret, each verifying with its own secret only", async () => {
    const [current, previous, stranger] = [
      generateWebhookSecret(),
      generateWebhookSecret(),
      generateWebhookSecret(),
    ];
    const timestamp = Math.floor(Date.now() / 1000);
    const header = signatureHeader([current, previous], msgId, timestamp, body);
    expect(header.split(" ")).toHaveLength(2);
    const headers = {
      "webhook-id": msgId,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": header,
    };
    expect(() => new Webhook(current).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(stranger).verify(body, headers)).toThrow();
  });

  it("signs the id, the timestamp and the exact body: changing any one breaks verification", async () => {
    const secret = generateWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signatureHeader([secret], msgId, timestamp, body);
    const wh = new Webhook(secret);
    const base = {
      "webhook-id": msgId,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signature,
    };
    expect(() => wh.verify(`${body} `, base)).toThrow();
    expect(() => wh.verify(body, { ...base, "webhook-id": "msg_other" })).toThrow();
    expect(() => wh.verify(body, { ...base, "webhook-timestamp": String(timestamp + 1) })).toThrow();
  });
});
