/**
 * Job lifecycle: progress, abort by DELETE, client disconnect and timeout each leave no ffmpeg process and
 * no temp file; a saturated engine answers SERVICE_UNAVAILABLE; sources still downloading are read
 * through the relay.
 */
import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { liveProcesses } from "../src/pipeline/ffmpeg.ts";
import type { EngineResult } from "../src/protocol.ts";
import {
  AUTH,
  errorOf,
  ffmpegChildren,
  ffprobe,
  filesUnder,
  fixtureUrl,
  jobId,
  media,
  SECRET,
  saveBody,
  startTestEngine,
  type TestEngine,
} from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";
import { withTextMark } from "./support/text-mark.ts";

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine({ slots: 1, queue: 1 });
});
afterAll(() => engine.close());

const status = async (id: string) => {
  const res = await fetch(`${engine.url}/v1/jobs/${id}`, { headers: AUTH });
  return res.status === 404 ? null : ((await res.json()) as { state: string; progress: number });
};

/**
 * A source that never finishes within a test: the 20 s video's first 256 KiB at once (its index and a few
 * seconds of media), then 1 KiB every 500 ms, so a job reading it runs until it is stopped, whatever the
 * machine's load, and never trips the read timeout.
 */
const ENDLESS_SOURCE = () => fixtureUrl(`/ranged/${FIXTURES.long}?trickle=1`);
/** The same video throttled to 400 KiB/s: a job on it lasts several seconds, then ends. */
const THROTTLED_SOURCE = () => fixtureUrl(`/slow/${FIXTURES.long}?kbps=400`);

/**
 * Starts a watermark of the 20 s video and waits until ffmpeg reports progress. On the default source the
 * job runs until it is deleted or its client goes; `THROTTLED_SOURCE` lets it end on its own.
 */
async function startLongJob(init: RequestInit = {}, source = ENDLESS_SOURCE()) {
  const id = jobId();
  // A copy of the audio: ffmpeg starts on the source's head at once and reports progress as it reads (an
  // encode or a watermark first reads the source's tail for its timing, which these sources hold back, so
  // the job stayed in its probes and the loop below ran out: ~50 s of this file, testing a probing job).
  const response = fetch(`${engine.url}/v1/jobs/video.extract-audio`, {
    method: "POST",
    headers: AUTH,
    body: JSON.stringify({ job_id: id, source_url: source, params: { format: "original" } }),
    ...init,
  }).catch((err: unknown) => err as Error);
  const seen: number[] = [];
  for (let i = 0; i < 200; i++) {
    const s = await status(id);
    if (s !== null && s.state === "running" && s.progress > 0) {
      seen.push(s.progress);
      if (seen.length >= 2) break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { id, response, seen };
}

/** Waits until the engine has handled every request to its end, then asserts nothing is left behind. */
async function expectClean() {
  await engine.engine.idle();
  expect(engine.engine.jobs.size).toBe(0);
  expect(liveProcesses.size).toBe(0);
  expect(await ffmpegChildren(engine.engine.warmProbes.pids())).toEqual([]);
  expect(await filesUnder(engine.engine.tmpDir)).toEqual([]);
  expect(engine.engine.pool.stats()).toEqual({ total: 1, busy: 0, queued: 0 });
}

describe("progress", () => {
  test("a running job reports increasing progress in 0..1, then disappears", async () => {
    const { id, response, seen } = await startLongJob({}, THROTTLED_SOURCE());
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen[1]!).toBeGreaterThanOrEqual(seen[0]!);
    for (const p of seen) {
      expect(p).toBeGreaterThan(0);
      expect(p).toBeLessThanOrEqual(1);
    }
    const res = (await response) as Response;
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(await status(id)).toBeNull();
    await expectClean();
  });
});

describe("abort", () => {
  test("DELETE kills ffmpeg and removes the temp files", async () => {
    const { id, response, seen } = await startLongJob();
    // ffmpeg is running (it reported progress), not the job's probes.
    expect(seen.length).toBeGreaterThan(0);
    expect(liveProcesses.size).toBe(1);
    const del = await fetch(`${engine.url}/v1/jobs/${id}`, { method: "DELETE", headers: AUTH });
    expect(del.status).toBe(204);
    const res = (await response) as Response;
    expect(res.status).toBe(500);
    await expectClean();
    expect((await fetch(`${engine.url}/v1/jobs/${id}`, { method: "DELETE", headers: AUTH })).status).toBe(
      404,
    );
  });

  test("a client that disconnects aborts its job", async () => {
    const controller = new AbortController();
    const { response, seen } = await startLongJob({ signal: controller.signal });
    expect(seen.length).toBeGreaterThan(0);
    expect(liveProcesses.size).toBe(1);
    controller.abort();
    await response;
    await expectClean();
  });

  test("a job over its time budget is killed and answered 504", async () => {
    const res = await engine.job("video.watermark", {
      source_url: ENDLESS_SOURCE(),
      params: { text: "slow" },
      timeout_ms: 1200,
    });
    expect(await errorOf(res)).toMatchObject({ status: 504, code: "PROCESSING_TIMEOUT" });
    await expectClean();
  });
});

describe("keep-alive connections", () => {
  /** POSTs over a node:http agent with one keep-alive socket: every request reuses the previous connection. */
  const post = (agent: http.Agent, route: string, body: unknown) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const data = JSON.stringify(body);
      const url = new URL(route, engine.url);
      const req = http.request(
        url,
        {
          method: "POST",
          agent,
          headers: { ...AUTH, "content-type": "application/json", "content-length": Buffer.byteLength(data) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              text: res.statusCode === 200 ? "" : Buffer.concat(chunks).toString(),
            }),
          );
        },
      );
      req.on("error", reject);
      req.end(data);
    });

  test("back-to-back requests on one connection are never taken for a disconnect", async () => {
    // The client sends the next request as soon as it has the previous file's bytes, often before the
    // engine's end of that response has finished; Node then queues the new response without a socket.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const failures: string[] = [];
      for (let i = 0; i < 240; i++) {
        const name = [FIXTURES.photo3mp, FIXTURES.jpeg, FIXTURES.logo][i % 3]!;
        const res =
          i % 40 === 39
            ? await post(agent, "/v1/jobs/video.probe", { job_id: jobId(), source_url: media(FIXTURES.av) })
            : await post(agent, "/v1/fetch", { source_url: media(name) });
        if (res.status !== 200) failures.push(`#${i} ${res.status} ${res.text}`);
      }
      expect(failures).toEqual([]);
    } finally {
      agent.destroy();
    }
    await expectClean();
  });

  test("a pipelined job waits behind the first; closing the connection aborts both", async () => {
    const ids = [jobId(), jobId()];
    const request = (id: string) => {
      const body = JSON.stringify(
        withTextMark({
          job_id: id,
          source_url: ENDLESS_SOURCE(),
          params: { text: "pipelined" },
        }),
      );
      return (
        "POST /v1/jobs/video.watermark HTTP/1.1\r\nHost: engine\r\n" +
        `Authorization: Bearer ${SECRET}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
      );
    };
    const { hostname, port } = new URL(engine.url);
    const socket = net.connect(Number(port), hostname);
    await once(socket, "connect");
    socket.on("error", () => {});
    socket.write(request(ids[0]!) + request(ids[1]!));
    let first = await status(ids[0]!);
    for (let i = 0; i < 200 && !(first?.state === "running" && first.progress > 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      first = await status(ids[0]!);
    }
    expect(first).toMatchObject({ state: "running" });
    // The second answer is queued behind the first on the same connection: the client is still there.
    expect(await status(ids[1]!)).toEqual({ state: "queued", progress: 0 });
    socket.destroy();
    await expectClean();
    expect(await status(ids[0]!)).toBeNull();
    expect(await status(ids[1]!)).toBeNull();
  });
});

describe("saturation", () => {
  test("one slot, one queue place: the third job is refused at once with 503", async () => {
    const first = await startLongJob();
    const secondId = jobId();
    const second = fetch(`${engine.url}/v1/jobs/video.probe`, {
      method: "POST",
      headers: AUTH,
      body: JSON.stringify({ job_id: secondId, source_url: media(FIXTURES.av) }),
    });
    for (let i = 0; i < 50 && (await status(secondId)) === null; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await status(secondId)).toEqual({ state: "queued", progress: 0 });
    expect(engine.engine.pool.stats()).toEqual({ total: 1, busy: 1, queued: 1 });
    const third = await engine.job("video.probe", { source_url: media(FIXTURES.av) });
    expect(await errorOf(third)).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE" });
    // Refused without waiting for the slot: the first job (which ends only when deleted) still holds it and
    // the second still waits, so the answer came while nothing had moved.
    expect(await status(first.id)).toMatchObject({ state: "running" });
    expect(await status(secondId)).toEqual({ state: "queued", progress: 0 });
    expect(engine.engine.pool.stats()).toEqual({ total: 1, busy: 1, queued: 1 });
    // The queued job runs once the slot frees.
    await fetch(`${engine.url}/v1/jobs/${first.id}`, { method: "DELETE", headers: AUTH });
    await first.response;
    expect((await second).status).toBe(200);
    await expectClean();
  });

  test("a job id already running is refused", async () => {
    const first = await startLongJob();
    const dup = await fetch(`${engine.url}/v1/jobs/video.probe`, {
      method: "POST",
      headers: AUTH,
      body: JSON.stringify({ job_id: first.id, source_url: media(FIXTURES.av) }),
    });
    expect(await errorOf(dup)).toMatchObject({ status: 400, field: "job_id" });
    await fetch(`${engine.url}/v1/jobs/${first.id}`, { method: "DELETE", headers: AUTH });
    await first.response;
    await expectClean();
  });
});

describe("sources still downloading (relay) and without length", () => {
  test.each([
    ["a throttled source", `/slow/${FIXTURES.avTail}?kbps=600`],
    ["a source without Content-Length", `/chunked/${FIXTURES.av}`],
    ["a faststart source, throttled", `/slow/${FIXTURES.av}?kbps=300`],
  ])("%s gives the same results", async (_, route) => {
    const res = await engine.job("video.trim", {
      source_url: fixtureUrl(route),
      params: { start: 1, end: 2.5 },
    });
    expect(res.status).toBe(200);
    const result = JSON.parse(res.headers.get("x-engine-result")!) as EngineResult;
    expect(result).toMatchObject({ format: "mp4", width: 640, height: 360, start: 1, end: 2.5 });
    const probe = await ffprobe(await saveBody(res, "relay.mp4"));
    expect(Math.abs(Number(probe.streams[0]?.duration) - 1.5)).toBeLessThan(0.04);
    await expectClean();
  });

  test("a download held back behind a slow encode gives the whole output", async () => {
    // The download runs at most 128 KiB ahead of ffmpeg, so it is held back most of the encode. That a hold
    // does not count as a stalled source is checked on the mechanism in fetcher.test.ts (the socket's
    // timeout is off while held): a short read timeout here would only measure the machine's load.
    const paced = await startTestEngine({}, { fetchPolicy: { downloadAheadBytes: 128 * 1024 } });
    try {
      const res = await paced.job("video.watermark", {
        source_url: media(FIXTURES.long),
        params: { text: "paced" },
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const result = JSON.parse(res.headers.get("x-engine-result")!) as EngineResult;
      expect(result.duration).toBeCloseTo(20, 0);
      await res.arrayBuffer();
    } finally {
      await paced.close();
    }
  });

  test("a probe of a faststart MP4 does not wait for the whole download", async () => {
    // A download that never ends within the test: the first 256 KiB (the header and more), then 1 KiB every
    // 500 ms (the 2 MB file would take half an hour). An answer at all proves the probe did not wait for the
    // rest; no ranged request was made, so the header came from that download.
    const tag = `probe-${jobId()}`;
    const res = await engine.job("video.probe", {
      source_url: fixtureUrl(`/ranged/${FIXTURES.long}?trickle=1&tag=${tag}`),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ codec: "h264", width: 320, height: 180 });
    const stats = await fetch(fixtureUrl(`/ranged-stats?tag=${tag}`));
    expect(await stats.json()).toEqual({ ranged: 0 });
    await expectClean();
  });
});
