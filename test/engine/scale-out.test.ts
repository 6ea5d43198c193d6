import { describe, expect, inject, it } from "vitest";
import {
  ENGINE_LOAD_HEADER,
  type EngineTarget,
  HttpMediaEngine,
  LoadBoard,
  parseEngineLoad,
  urlTarget,
} from "../../src/engine";
import { newAccount } from "../helpers/api";
import { fixture, media, operateWith } from "../helpers/media";

const secret = () => inject("engineSecret");

/** An instance reached like urlTarget, counting the jobs sent to it. */
function counted(url: string) {
  const target = urlTarget(url);
  const counter = { jobs: 0 };
  const wrapped: EngineTarget = {
    ...target,
    fetch: (request) => {
      if (request.method === "POST") counter.jobs++;
      return target.fetch(request);
    },
  };
  return { target: wrapped, counter };
}

/** Saturates a one-slot, no-queue engine with a job whose source never answers; `release` ends it. */
async function saturate(url: string) {
  const engine = new HttpMediaEngine({ targets: [urlTarget(url)], secret: secret(), loads: new LoadBoard() });
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
  return async () => {
    controller.abort();
    await engine.abort(jobId);
    await answer;
  };
}

describe("routing over several engine instances", () => {
  it("one of three engines saturated: every request succeeds on the others, the busy one is avoided", async () => {
    const [busyUrl, idleUrl] = inject("smallEngines").scaleOut;
    const release = await saturate(busyUrl);
    try {
      const busy = counted(busyUrl);
      const idle = counted(idleUrl);
      const main = counted(inject("engineUrl"));
      const engine = new HttpMediaEngine({
        targets: [busy.target, idle.target, main.target],
        secret: secret(),
        loads: new LoadBoard(),
      });
      for (let i = 0; i < 6; i++) {
        // Jobs that need a general slot (a synchronous probe would also fit the busy one's light lane).
        const res = await engine.run("video.extract-cover", {
          job_id: `scale-${crypto.randomUUID()}`,
          source_url: media("av.mp4"),
          params: { width: 160 },
        });
        expect(res.status, await res.clone().text()).toBe(200);
        // The answer carries the answering instance's load as of its end. Jobs of earlier files may still run on
        // the shared main engine, so only its shape is asserted here; which instance answered is counted below.
        const load = parseEngineLoad(res.headers.get(ENGINE_LOAD_HEADER));
        expect(load).not.toBeNull();
        expect(load!.busy).toBeLessThanOrEqual(load!.slots);
        await res.arrayBuffer();
      }
      // Once refused (503 with its load), the saturated instance is tried last: at most once here.
      expect(busy.counter.jobs).toBeLessThanOrEqual(1);
      expect(idle.counter.jobs + main.counter.jobs).toBe(6);
    } finally {
      await release();
    }
  });

  it("through the API: ENGINE_URL lists three engines, one saturated, synchronous calls succeed", async () => {
    const [busyUrl, idleUrl] = inject("smallEngines").scaleOut;
    const release = await saturate(busyUrl);
    try {
      const { key } = await newAccount({ credits: 10 });
      const engines = { ENGINE_URL: `${busyUrl},${idleUrl},${inject("engineUrl")}` };
      for (let i = 0; i < 4; i++) {
        const res = await operateWith(engines, "/v1/video/extract-cover", key, {
          source_url: media("av.mp4"),
        });
        expect(res.status, await res.clone().text()).toBe(200);
      }
    } finally {
      await release();
    }
  });

  it("every instance refusing → 503 naming capacity; progress and abort reach the instance that took the job", async () => {
    const [a, b] = inject("smallEngines").scaleOut;
    const releases = [await saturate(a), await saturate(b)];
    try {
      const both = new HttpMediaEngine({
        targets: [urlTarget(a), urlTarget(b), urlTarget("http://127.0.0.1:9")],
        secret: secret(),
        loads: new LoadBoard(),
      });
      // An operation that needs a general slot (a synchronous probe has a light lane of its own).
      const res = await both.run("video.extract-cover", {
        job_id: "refused",
        source_url: media("av.mp4"),
        params: { width: 160 },
      });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { message: string }).message).toMatch(/capacity/);
    } finally {
      for (const release of releases) await release();
    }
    const engine = new HttpMediaEngine({
      targets: [urlTarget(a), urlTarget(b)],
      secret: secret(),
      loads: new LoadBoard(),
    });
    const jobId = `placed-${crypto.randomUUID()}`;
    const running = engine.run("video.probe", { job_id: jobId, source_url: fixture("/hang") });
    while ((await engine.progress(jobId)) === null) await new Promise((r) => setTimeout(r, 20));
    await engine.abort(jobId);
    expect((await running).status).toBe(500);
    expect(await engine.progress(jobId)).toBeNull();
  });
});

describe("LoadBoard", () => {
  const t = (name: string) => ({ name });
  const loaded = (value: string) => new Headers({ [ENGINE_LOAD_HEADER]: value });

  it("orders by free slots as last heard: free, unknown, full, refused", () => {
    const board = new LoadBoard();
    board.observe("free", loaded("busy=0;slots=2;queued=0"));
    board.observe("full", loaded("busy=2;slots=2;queued=0"));
    board.refused("down");
    board.observe("plain", new Headers()); // not the engine's answer: nothing learned
    expect(board.order([t("down"), t("full"), t("plain"), t("free")]).map((x) => x.name)).toEqual([
      "free",
      "plain",
      "full",
      "down",
    ]);
  });

  it("reads and refuses header values", () => {
    expect(parseEngineLoad("busy=1;slots=4;queued=2")).toEqual({ busy: 1, slots: 4, queued: 2 });
    expect(parseEngineLoad("busy=x")).toBeNull();
    expect(parseEngineLoad(null)).toBeNull();
  });
});
