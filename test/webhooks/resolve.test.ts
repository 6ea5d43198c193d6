import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { REFUSED_NAMES } from "../../containers/ffmpeg/test/support/dns";
import { createEngine } from "../../src/engine";
import { attempts, consume, delivery, endedTask, enqueueHeld } from "./support";

/**
 * Every delivery attempt resolves the webhook's name first (through the engine's address policy) and is
 * not sent when any address is loopback, private, metadata or unspecified: a name that pointed somewhere
 * public at creation may point elsewhere now. DNS is the resolver engine's test table.
 */

const resolverEngine = () =>
  createEngine({ engineUrl: inject("resolverEngineUrl"), secret: env.ENGINE_SECRET as string });

async function heldTo(url: string) {
  const { task, body } = await endedTask(url);
  return (await enqueueHeld(task, "completed", body)).result!.deliveryId;
}

describe("an attempt to a name that now resolves to a refused address", () => {
  it.each(REFUSED_NAMES)("%s: a failed attempt, not sent, retried later", async (name) => {
    const id = await heldTo(`https://${name}/hook`);
    const result = await consume(id, {
      messageId: `r-${name}`,
      overrides: { allowPrivate: false, engine: resolverEngine() },
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
    await consume(id, { overrides: { allowPrivate: false, engine: resolverEngine() } });
    expect((await attempts(id))[0]?.error).toBe("not sent: DNS lookup of the webhook host failed");
  });

  it("without an engine to ask, nothing is sent", async () => {
    const id = await heldTo("https://public.test/hook");
    await consume(id, { overrides: { allowPrivate: false, engine: null } });
    expect((await attempts(id))[0]?.error).toMatch(/^not sent: the address check is unavailable/);
  });
});
