import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { attempts, consume, endedTask, enqueueHeld, receiverEndpoint, refusingConnect } from "./support";

/**
 * Issue 40, item 1: the check and the send used to resolve the webhook's name separately. The Worker asked
 * DNS over HTTPS (the stand-in resolver, test/support/doh-server.ts: `public.test` is 93.184.216.34), then
 * `fetch` resolved the name again on the host, which may say something else. Here the host's resolver is
 * played by wrapping the Worker's `fetch` (the only API in workerd that resolves a name on the host): it sends
 * `public.test` to 127.0.0.1, where the loopback receiver listens. With the production address policy
 * (ALLOW_PRIVATE_SOURCES=false) the signed webhook must not reach it.
 *
 * What this proves: a delivery connects to the address its check resolved, and nothing else resolves the name.
 * The TCP connection to 93.184.216.34 is a stand-in that refuses (no traffic leaves this machine), and records
 * where the delivery dialled. What it does not prove: anything about Cloudflare's own egress, which the
 * production setting (WEBHOOK_EGRESS=platform) relies on (docs/decisions.md "Webhooks").
 */

/** The host's resolver, as the Worker's fetch consults it: `name` resolves to `address`. */
function hostResolves(name: string, address: string) {
  const realFetch = globalThis.fetch;
  return vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.hostname !== name) return realFetch(request);
    url.hostname = address;
    return realFetch(new Request(url, request));
  });
}

afterEach(() => vi.restoreAllMocks());

describe("a webhook goes only to the address its check resolved", () => {
  it("DoH says public, the host says 127.0.0.1: nothing reaches loopback", async () => {
    const receiver = await receiverEndpoint();
    const { port, pathname } = new URL(receiver.url);
    const { task, body } = await endedTask(`http://public.test:${port}${pathname}`);
    const id = (await enqueueHeld(task, "completed", body)).result!.deliveryId;
    hostResolves("public.test", "127.0.0.1");
    const dialled: string[] = [];
    await consume(id, {
      overrides: { allowPrivate: false, timeoutMs: 3_000, connect: refusingConnect(dialled) },
    });
    expect(await receiver.received()).toEqual([]);
    // Both checked addresses (A, then AAAA), each refusing: nothing else, and never loopback.
    expect(dialled).toEqual([`93.184.216.34:${port}`, `[2606:2800:220:1:248:1893:25c8:1946]:${port}`]);
    const [attempt] = await attempts(id);
    expect(attempt).toMatchObject({ attempt: 1, statusCode: null });
    expect(attempt?.error).toMatch(/connection refused/);
  });

  it("over a real socket: the checked address, the name in Host, the signature intact", async () => {
    const receiver = await receiverEndpoint();
    const { port, pathname } = new URL(receiver.url);
    // loopback.test is 127.0.0.1 at the stand-in resolver; loopback is open under ALLOW_PRIVATE_SOURCES.
    const { task, body, account } = await endedTask(`http://loopback.test:${port}${pathname}?a=1&b=2`);
    const id = (await enqueueHeld(task, "completed", body)).result!.deliveryId;
    // The host's resolver knows nothing of loopback.test: only the checked address can reach the receiver.
    await consume(id, { overrides: { allowPrivate: true, timeoutMs: 5_000 } });
    const [got] = await receiver.received();
    expect(got).toMatchObject({ method: "POST", path: pathname, body });
    expect(got!.headers.host).toBe(`loopback.test:${port}`);
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["content-length"]).toBe(String(new TextEncoder().encode(body).length));
    const verified = new Webhook(account.webhookSecret).verify(got!.body, got!.headers);
    expect(verified).toEqual(JSON.parse(body));
    expect(await attempts(id)).toMatchObject([{ attempt: 1, statusCode: 200, error: null }]);
  });
});
