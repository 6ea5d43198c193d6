import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import type { AccountSlots } from "../../src/capacity/account-slots";
import { slotsFor } from "../../src/capacity/slots";
import { createEngine, readEngineError } from "../../src/engine";
import { engineFailure } from "../../src/operations/engine-runner";
import { newAccount, problem } from "../helpers/api";
import { fixture, media, operate, operateWith } from "../helpers/media";

const secret = () => inject("engineSecret");

async function expect503(response: Response) {
  const text = await response.clone().text();
  expect(response.status, text).toBe(503);
  const body = await problem(response);
  expect(body.code).toBe("SERVICE_UNAVAILABLE");
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
  return body;
}

/** Starts a job that holds an engine slot (its source never answers) until `release` aborts it. */
async function holdSlot(engineUrl: string) {
  const engine = createEngine({ engineUrl, secret: secret() });
  const jobId = `hold-${crypto.randomUUID()}`;
  const controller = new AbortController();
  const answer = engine
    // A general slot: a synchronous probe would sit in the engine's light lane (ENGINE_LIGHT_SLOTS) instead.
    .run(
      "video.extract-cover",
      { job_id: jobId, source_url: fixture("/hang"), params: { width: 160 } },
      controller.signal,
    )
    .catch(() => null);
  while ((await engine.progress(jobId)) === null) await new Promise((r) => setTimeout(r, 20));
  return {
    release: async () => {
      controller.abort();
      await engine.abort(jobId);
      await answer;
    },
  };
}

describe("engine failures are 503 SERVICE_UNAVAILABLE with Retry-After, never 500", () => {
  it("an engine that cannot be reached", async () => {
    const { key } = await newAccount({ credits: 10 });
    await expect503(
      await operateWith({ ENGINE_URL: "http://127.0.0.1:9" }, "/v1/video/probe", key, {
        source_url: media("av.mp4"),
      }),
    );
  });

  it("a container that cannot start (the Container binding without a container runtime)", async () => {
    const { key } = await newAccount({ credits: 10 });
    await expect503(
      await operateWith({ ENGINE_URL: "" }, "/v1/video/probe", key, { source_url: media("av.mp4") }),
    );
  });

  it.each([
    [500, "Failed to start container: the image could not be pulled"],
    [500, "Container suddenly disconnected, try again"],
    [503, "There is no Container instance available at this time."],
    [429, "rate limited"],
  ])("the Container layer's plain-text %i answer (%s)", async (status, text) => {
    const response = new Response(text, { status, headers: { "content-type": "text/plain" } });
    expect((await readEngineError(response.clone())).code).toBe("SERVICE_UNAVAILABLE");
    const error = await engineFailure(response);
    expect(error.status).toBe(503);
    expect(Number(error.headers["Retry-After"])).toBeGreaterThan(0);
  });

  it("the engine's own INTERNAL stays INTERNAL", async () => {
    const response = Response.json({ code: "INTERNAL", message: "boom" }, { status: 500 });
    expect((await readEngineError(response)).code).toBe("INTERNAL");
  });

  it("a saturated engine (every slot busy, no queue)", async () => {
    const small = inject("smallEngines").engineCapacity;
    const hold = await holdSlot(small);
    try {
      const { key } = await newAccount({ credits: 10 });
      // An operation that needs a general slot (a synchronous probe has a light lane of its own).
      const body = await expect503(
        await operateWith({ ENGINE_URL: small }, "/v1/video/extract-cover", key, {
          source_url: media("av.mp4"),
        }),
      );
      expect(body.detail).toMatch(/capacity/);
    } finally {
      await hold.release();
    }
  });
});

describe("each account's share of the engine", () => {
  const share = { ENGINE_ACCOUNT_MAX_SLOTS: "2" };

  it("an account that holds its whole share gets 503 + Retry-After; another account's calls succeed", async () => {
    const greedy = await newAccount({ credits: 10 });
    const other = await newAccount({ credits: 10 });
    // Two of the greedy account's jobs in flight (as leases, so nothing depends on timing).
    const slots = slotsFor(env, greedy.accountId);
    for (const holder of ["job-a", "job-b"]) {
      expect(await slots.acquire(holder, 2, 60_000)).toEqual({ granted: true });
    }
    const refused = await expect503(
      await operateWith(share, "/v1/video/probe", greedy.key, { source_url: media("av.mp4") }),
    );
    expect(refused.detail).toMatch(/share/);
    const served = await operateWith(share, "/v1/video/probe", other.key, { source_url: media("av.mp4") });
    expect(served.status, await served.clone().text()).toBe(200);
    // Once one of its jobs ends, the greedy account is served again.
    await slots.release("job-a");
    const again = await operateWith(share, "/v1/video/probe", greedy.key, { source_url: media("av.mp4") });
    expect(again.status).toBe(200);
    expect(await slots.held()).toEqual(["job-b"]);
  });

  it("a real job in flight counts: the slot is held while it runs and released on every exit path", async () => {
    const { key, accountId } = await newAccount({ credits: 10 });
    const one = { ENGINE_ACCOUNT_MAX_SLOTS: "1", SYNC_TIMEOUT_SECONDS: "2" };
    const slow = operateWith(one, "/v1/video/probe", key, { source_url: fixture("/hang") });
    const slots = slotsFor(env, accountId);
    while ((await slots.held()).length === 0) await new Promise((r) => setTimeout(r, 20));
    await expect503(await operateWith(one, "/v1/video/probe", key, { source_url: media("av.mp4") }));
    expect((await slow).status).toBe(504);
    expect(await slots.held()).toEqual([]);
    const after = await operateWith(one, "/v1/video/probe", key, { source_url: media("av.mp4") });
    expect(after.status).toBe(200);
    expect(await slots.held()).toEqual([]);
  });

  it("the slot is free when the answer arrives: back-to-back calls on a share of one all succeed", async () => {
    const { key, accountId } = await newAccount({ credits: 20 });
    const one = { ENGINE_ACCOUNT_MAX_SLOTS: "1" };
    const slots = slotsFor(env, accountId);
    // A data result (probe) and a stored file (extract-audio): the release overlaps the storing and charging.
    for (const path of ["/v1/video/probe", "/v1/video/extract-audio", "/v1/video/probe"]) {
      const response = await operate(path, key, { source_url: media("av.mp4") });
      expect(response.status, await response.clone().text()).toBe(200);
      expect(await slots.held()).toEqual([]);
      const next = await operateWith(one, path, key, { source_url: media("av.mp4") });
      expect(next.status, await next.clone().text()).toBe(200);
      expect(await slots.held()).toEqual([]);
    }
  });

  it("a lease lapses: a holder that died without releasing cannot leak a slot", async () => {
    const { accountId } = await newAccount();
    const slots = slotsFor(env, accountId);
    expect(await slots.acquire("crashed", 1, 60_000)).toEqual({ granted: true });
    expect(await slots.acquire("next", 1, 60_000)).toMatchObject({ granted: false });
    // The holder never releases; its lease's time passes.
    await runInDurableObject(slots, (_instance: AccountSlots, state) => {
      state.storage.kv.put("leases", { crashed: Date.now() - 1 });
    });
    expect(await slots.acquire("next", 1, 60_000)).toEqual({ granted: true });
  });
});
