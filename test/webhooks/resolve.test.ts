import { describe, expect, inject, it } from "vitest";
import { REFUSED_NAMES } from "../../containers/ffmpeg/test/support/dns";
import { attempts, consume, delivery, endedTask, enqueueHeld, refusingConnect } from "./support";

/**
 * Every delivery attempt resolves the webhook's name first (DNS over HTTPS from the Worker, the shared address
 * policy) and is not sent when any address is loopback, private, metadata or unspecified: a name that pointed
 * somewhere public at creation may point elsewhere now. DNS is the DoH stand-in's test table
 * (test/support/doh-server.ts), DOH_URL in the test bindings.
 */

const production = { allowPrivate: false };

async function heldTo(url: string) {
  const { task, body } = await endedTask(url);
  return (await enqueueHeld(task, "completed", body)).result!.deliveryId;
}

describe("an attempt to a name that now resolves to a refused address", () => {
  it.each(REFUSED_NAMES)("%s: a failed attempt, not sent, retried later", async (name) => {
    const id = await heldTo(`https://${name}/hook`);
    const result = await consume(id, {
      messageId: `r-${name}`,
      overrides: production,
    });
    expect(result.retryMessages).toEqual([{ msgId: `r-${name}` }]);
    expect(await attempts(id)).toMatchObject([
      {
        attempt: 1,
        statusCode: null,
        latencyMs: 0,
        error: "not sent: webhook resolves to a private or reserved address",
      },
    ]);
    expect(await delivery(id)).toMatchObject({ status: "pending", attemptCount: 1 });
  });

  it("a name that does not resolve is a failed attempt naming the lookup", async () => {
    const id = await heldTo("https://gone.test/hook");
    await consume(id, { overrides: production });
    expect((await attempts(id))[0]?.error).toBe("not sent: DNS lookup of the webhook host failed");
  });

  it.each([
    ["a resolver that cannot be reached", "public.test", { dohUrl: "http://127.0.0.1:9/dns-query" }],
    ["a resolver answering SERVFAIL", "servfail.test", {}],
  ])("%s: nothing is sent", async (_, name, overrides) => {
    const id = await heldTo(`https://${name}/hook`);
    await consume(id, { overrides: { ...production, ...overrides } });
    expect((await attempts(id))[0]?.error).toBe("not sent: the address check is unavailable");
  });

  it("a public name is allowed and sent to its checked address (a stand-in: nothing leaves the machine)", async () => {
    const id = await heldTo("https://public.test/hook");
    const dialled: string[] = [];
    await consume(id, { overrides: { ...production, timeoutMs: 3_000, connect: refusingConnect(dialled) } });
    const [attempt] = await attempts(id);
    expect(attempt?.error).not.toMatch(/^not sent/);
    expect(dialled).toEqual(["93.184.216.34:443", "[2606:2800:220:1:248:1893:25c8:1946]:443"]);
    const asked = (await (await fetch(inject("dohUrl").replace(/dns-query$/, "_asked"))).json()) as string[];
    expect(asked).toEqual(expect.arrayContaining(["public.test A", "public.test AAAA"]));
  });
});
