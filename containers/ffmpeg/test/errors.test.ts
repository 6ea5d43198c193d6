/** Every bad request and bad input maps to its public code, HTTP status and a safe message. */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import {
  AUTH,
  assertSafeMessage,
  errorOf,
  fixtureUrl,
  media,
  startTestEngine,
  type TestEngine,
} from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";

let engine: TestEngine;
/** An engine in production mode (ALLOW_PRIVATE_SOURCES=false) whose only trusted host is the fixture server. */
let closed: TestEngine;
let closedPort = 0;
const port = inject("fixturePort");
const trusted = (pathname: string) => `http://fixtures.test:${port}${pathname}`;

beforeAll(async () => {
  const refusing = http.createServer();
  await new Promise<void>((r) => refusing.listen(0, "127.0.0.1", r));
  closedPort = (refusing.address() as AddressInfo).port;
  await new Promise((r) => refusing.close(r));
  const noDns = async (hostname: string) => {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  };
  // Long enough that a loaded machine is not taken for a silent source (the /hang and /stall tests wait it out).
  engine = await startTestEngine({ readTimeoutMs: 5000 }, { fetchPolicy: { resolve: noDns } });
  closed = await startTestEngine(
    { allowPrivateSources: false },
    {
      fetchPolicy: {
        trustedHosts: [`fixtures.test:${port}`],
        resolve: async (hostname) =>
          hostname === "fixtures.test" ? [{ address: "127.0.0.1", family: 4 }] : noDns(hostname),
      },
    },
  );
});
afterAll(async () => {
  await engine.close();
  await closed.close();
});

async function expectError(res: Response, status: number, code: string, field?: string) {
  const err = await errorOf(res);
  expect(err, JSON.stringify(err)).toMatchObject({ status, code, ...(field === undefined ? {} : { field }) });
  expect(res.headers.get("content-type")).toBe("application/json");
  assertSafeMessage(err.message);
  return err;
}

describe("the envelope", () => {
  test("missing or wrong secret → 401", async () => {
    const none = await fetch(`${engine.url}/v1/health`);
    await expectError(none, 401, "INTERNAL");
    const wrong = await fetch(`${engine.url}/v1/jobs/video.probe`, {
      method: "POST",
      headers: { authorization: "Bearer nope" },
      body: "{}",
    });
    await expectError(wrong, 401, "INTERNAL");
  });

  test("/healthz needs no secret, /v1/health reports slots and ffmpeg", async () => {
    expect(await (await fetch(`${engine.url}/healthz`)).text()).toBe("ok");
    const health = (await (await fetch(`${engine.url}/v1/health`, { headers: AUTH })).json()) as {
      ffmpeg: string;
    };
    expect(health).toMatchObject({ ok: true, protocol: 1, slots: { total: 2, busy: 0, queued: 0 } });
    expect(health.ffmpeg).toMatch(/^ffmpeg version /);
  });

  test("unknown job type → 404", async () => {
    const res = await engine.job("video.explode", { source_url: media(FIXTURES.av) });
    await expectError(res, 404, "RESOURCE_NOT_FOUND");
  });

  test.each([
    [{ source_url: 42 }, "source_url"],
    [{ source_url: "" }, "source_url"],
    [{ source_url: "x", job_id: "bad id!" }, "job_id"],
    [{ source_url: "http://a.example/x", max_source_bytes: -1 }, "max_source_bytes"],
    [{ source_url: "http://a.example/x", timeout_ms: 1.5 }, "timeout_ms"],
    [{ source_url: "http://a.example/x", params: [] }, "params"],
  ])("%o → 400 %s", async (body, field) => {
    await expectError(await engine.job("video.probe", body), 400, "VALIDATION_INVALID_ARGUMENT", field);
  });

  test("a body that is not JSON → 400", async () => {
    const res = await fetch(`${engine.url}/v1/jobs/video.probe`, {
      method: "POST",
      headers: AUTH,
      body: "{nope",
    });
    await expectError(res, 400, "VALIDATION_INVALID_ARGUMENT", "body");
  });
});

describe("params (decisions.md §4)", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["video.probe", { x: 1 }, "params.x"],
    ["video.trim", {}, "params.start"],
    ["video.trim", { start: -1, end: 2 }, "params.start"],
    ["video.trim", { start: 1 }, "params.end"],
    ["video.trim", { start: 2, end: 2 }, "params.end"],
    ["video.trim", { start: 1, end: 2, duration: 1 }, "params.duration"],
    ["video.trim", { start: 1, duration: 0 }, "params.duration"],
    ["video.trim", { start: "1", end: 2 }, "params.start"],
    ["video.trim", { start: 1, end: 2, mode: "quick" }, "params.mode"],
    ["video.trim", { start: 1, end: 2, format: "mp4" }, "params.format"],
    ["audio.trim", { start: 1, end: 2, mode: "fast" }, "params.mode"],
    ["video.extract-cover", { format: "gif" }, "params.format"],
    ["video.extract-cover", { width: 0 }, "params.width"],
    ["video.extract-cover", { height: 9000 }, "params.height"],
    ["video.extract-cover", { width: 10.5 }, "params.width"],
    ["video.extract-cover", { quality: 101 }, "params.quality"],
    ["video.extract-cover", { format: "png", quality: 80 }, "params.quality"],
    ["video.extract-cover", { time: -1 }, "params.time"],
    ["video.extract-audio", { format: "aiff" }, "params.format"],
    ["video.extract-audio", { bitrate: "500k" }, "params.bitrate"],
    ["video.extract-audio", { bitrate: "16k" }, "params.bitrate"],
    ["video.extract-audio", { bitrate: "fast" }, "params.bitrate"],
    ["video.extract-audio", { format: "wav", bitrate: "128k" }, "params.bitrate"],
    ["video.extract-audio", { format: "opus", sample_rate: 44100 }, "params.sample_rate"],
    ["video.extract-audio", { sample_rate: 12345 }, "params.sample_rate"],
    ["video.extract-audio", { channels: 3 }, "params.channels"],
    ["video.extract-audio", { format: "original", channels: 1 }, "params.channels"],
    // The contract's schema (the Worker's) is the engine's: what it refuses, the engine refuses too.
    ["video.extract-audio", { bitrate: 128000 }, "params.bitrate"],
    ["video.extract-audio", { format: "wav", sample_rate: 88200 }, "params.sample_rate"],
    ["video.watermark", {}, "params.watermark_url"],
    ["video.watermark", { text: "a", watermark_url: "http://a.example/l.png" }, "params.text"],
    ["video.watermark", { text: "" }, "params.text"],
    ["video.watermark", { text: "x".repeat(201) }, "params.text"],
    ["video.watermark", { text: "a\u0007b" }, "params.text"],
    ["video.watermark", { text: "a", color: "red" }, "params.color"],
    ["video.watermark", { text: "a", color: "#FFF" }, "params.color"],
    ["video.watermark", { text: "a", font_size: 0 }, "params.font_size"],
    ["video.watermark", { text: "a", scale: 0.5 }, "params.scale"],
    ["video.watermark", { text: "a", font_family: "cursive" }, "params.font_family"],
    ["video.watermark", { text: "a", font_weight: "light" }, "params.font_weight"],
    ["video.watermark", { text: "a", stroke: { color: "#000000" } }, "params.stroke.width"],
    ["video.watermark", { text: "a", stroke: { color: "#000", width: 1 } }, "params.stroke.color"],
    ["video.watermark", { text: "a", stroke: { color: "#000000", width: 1, x: 1 } }, "params.stroke.x"],
    ["video.watermark", { text: "a", shadow: { color: "#000000", dx: 1, dy: 101 } }, "params.shadow.dy"],
    ["video.watermark", { text: "a", shadow: [] }, "params.shadow"],
    [
      "video.watermark",
      { watermark_url: "http://a.example/l.png", font_weight: "bold" },
      "params.font_weight",
    ],
    ["video.watermark", { watermark_url: "http://a.example/l.png", font_size: 20 }, "params.font_size"],
    ["video.watermark", { watermark_url: "http://a.example/l.png", scale: 0 }, "params.scale"],
    ["video.watermark", { watermark_url: "http://a.example/l.png", scale: 1.5 }, "params.scale"],
    ["video.watermark", { text: "a", position: "middle" }, "params.position"],
    ["video.watermark", { text: "a", margin: 1001 }, "params.margin"],
    ["video.watermark", { text: "a", opacity: 1.1 }, "params.opacity"],
    ["video.watermark", { text: "a", start: 3, end: 2 }, "params.end"],
    ["video.watermark", { text: "a", quality: 80 }, "params.quality"],
  ];
  test.each(cases)("%s %o → 400 %s", async (type, params, field) => {
    await expectError(
      await engine.job(type, { source_url: media(FIXTURES.av), params }),
      400,
      "VALIDATION_INVALID_ARGUMENT",
      field,
    );
  });

  test.each([
    ["video.trim", { start: 6.5, end: 8 }, "params.start"],
    ["audio.trim", { start: 9, duration: 1 }, "params.start"],
    ["video.extract-cover", { time: 7 }, "params.time"],
    ["video.watermark", { text: "a", start: 6 }, "params.start"],
  ])("%s %o beyond the media → 400 %s", async (type, params, field) => {
    await expectError(
      await engine.job(type, { source_url: media(FIXTURES.av), params }),
      400,
      "VALIDATION_INVALID_ARGUMENT",
      field,
    );
  });
});

describe("media that cannot be used → 415", () => {
  const TYPES: [string, Record<string, unknown>][] = [
    ["video.probe", {}],
    ["video.extract-cover", {}],
    ["video.trim", { start: 0, end: 1 }],
    ["audio.trim", { start: 0, end: 1 }],
    ["video.extract-audio", {}],
    ["video.watermark", { text: "a" }],
  ];

  test.each(TYPES)("a text file named .mp4 (%s)", async (type, params) => {
    const err = await expectError(
      await engine.job(type, { source_url: media(FIXTURES.textAsMp4), params }),
      415,
      "CONTENT_TYPE_UNSUPPORTED",
    );
    expect(err.message).toBe("the source is not a supported audio or video format");
  });

  test.each(TYPES)("a truncated MP4 (%s)", async (type, params) => {
    for (const name of [FIXTURES.truncated, FIXTURES.truncatedFaststart]) {
      const err = await expectError(
        await engine.job(type, { source_url: media(name), params }),
        415,
        "CONTENT_TYPE_UNSUPPORTED",
      );
      expect(err.message).toMatch(/truncated/);
    }
  });

  test("an MP4 without audio: extract-audio and audio.trim say so", async () => {
    for (const [type, params] of [
      ["video.extract-audio", {}],
      ["audio.trim", { start: 0, end: 1 }],
    ] as const) {
      const err = await expectError(
        await engine.job(type, { source_url: media(FIXTURES.noAudio), params }),
        415,
        "CONTENT_TYPE_UNSUPPORTED",
      );
      expect(err.message).toBe("the source has no audio stream");
    }
  });

  test.each(["video.probe", "video.extract-cover", "video.watermark", "video.trim"])(
    "%s of an MP3 → no video stream",
    async (type) => {
      const params =
        type === "video.watermark" ? { text: "a" } : type === "video.trim" ? { start: 0, end: 1 } : {};
      const err = await expectError(
        await engine.job(type, { source_url: media(FIXTURES.mp3), params }),
        415,
        "CONTENT_TYPE_UNSUPPORTED",
      );
      expect(err.message).toBe("the source has no video stream");
    },
  );

  test("an image is not a video", async () => {
    const err = await expectError(
      await engine.job("video.probe", { source_url: media(FIXTURES.logo) }),
      415,
      "CONTENT_TYPE_UNSUPPORTED",
    );
    expect(err.message).toBe("the source is an image (png), not audio or video");
  });

  test("a watermark_url that is not an image", async () => {
    const res = await engine.job("video.watermark", {
      source_url: media(FIXTURES.av),
      params: { watermark_url: media(FIXTURES.mp3) },
    });
    const err = await expectError(res, 415, "CONTENT_TYPE_UNSUPPORTED");
    expect(err.message).toBe("watermark_url does not point to a PNG, JPEG or WebP image");
  });
});

describe("sources that cannot be fetched → 502 naming the cause", () => {
  test.each([
    [() => fixtureUrl("/status/404"), "the source answered with HTTP status 404"],
    [() => fixtureUrl("/status/503"), "the source answered with HTTP status 503"],
    [() => fixtureUrl("/chain/6/av.mp4"), "too many redirects (more than 5)"],
    [() => `http://127.0.0.1:${closedPort}/a.mp4`, "the source host refused the connection"],
    [() => "http://no-such-host.invalid/a.mp4", "DNS lookup of the source host failed"],
    [() => fixtureUrl("/hang"), "the source timed out (no data received)"],
    [() => fixtureUrl("/stall/av-tail.mp4"), "the source stopped sending data (read timeout)"],
  ])("%s", async (url, message) => {
    const err = await expectError(
      await engine.job("video.probe", { source_url: url() }),
      502,
      "SOURCE_UNREACHABLE",
    );
    expect(err.message).toBe(message);
  });

  test.each<[string, Record<string, unknown>]>([
    ["audio.trim", { start: 2, end: 18 }],
    ["video.extract-audio", { format: "wav" }],
    ["video.trim", { start: 1, end: 18, mode: "fast" }],
  ])("a source that closes early under %s: 502, not a shorter result", async (type, params) => {
    // /short/ declares the whole length and closes after half of it; ffmpeg takes that for the end.
    const err = await expectError(
      await engine.job(type, { source_url: fixtureUrl(`/short/${FIXTURES.long}`), params }),
      502,
      "SOURCE_UNREACHABLE",
    );
    expect(err.message).toMatch(/^the (connection to the source was reset|source closed the connection)/);
    // ffmpeg asks the relay again (-reconnect), is refused and stops. With ffmpeg's default
    // reconnect_delay_max it would retry for 120 s (relay.ts), past this test's timeout.
  });

  test("a watermark logo that cannot be fetched", async () => {
    const res = await engine.job("video.watermark", {
      source_url: media(FIXTURES.av),
      params: { watermark_url: fixtureUrl("/status/404") },
    });
    await expectError(res, 502, "SOURCE_UNREACHABLE");
  });
});

describe("limits", () => {
  test("a source over max_source_bytes → 413 naming the limit", async () => {
    const err = await expectError(
      await engine.job("video.probe", { source_url: media(FIXTURES.av), max_source_bytes: 10_000 }),
      413,
      "REQUEST_BODY_TOO_LARGE",
    );
    expect(err.message).toMatch(/over the limit of 10000 bytes$/);
  });

  test("a declared 5 GiB source is refused before downloading, whatever the job", async () => {
    const err = await expectError(
      await engine.job("video.trim", { source_url: fixtureUrl("/huge"), params: { start: 0, end: 1 } }),
      413,
      "REQUEST_BODY_TOO_LARGE",
    );
    expect(err.message).toBe("the source is 5 GiB, over the limit of 512 MiB");
  });

  test("a source without length is cut off at the limit", async () => {
    const err = await expectError(
      await engine.job("video.probe", {
        source_url: fixtureUrl("/endless/av-tail.mp4"),
        max_source_bytes: 3 * 1024 * 1024,
      }),
      413,
      "REQUEST_BODY_TOO_LARGE",
    );
    expect(err.message).toBe("the source is larger than the limit of 3 MiB");
  });

  test("a job over its time budget → 504", async () => {
    const res = await engine.job("video.extract-audio", {
      source_url: fixtureUrl("/slow/long.mp4?kbps=40"),
      timeout_ms: 700,
    });
    const err = await expectError(res, 504, "PROCESSING_TIMEOUT");
    expect(err.message).toBe("processing exceeded the time budget of 0.7 s");
  });
});

describe("private addresses in production mode → 400 naming the field", () => {
  test.each([
    "http://127.0.0.1/a.mp4",
    "http://2130706433/a.mp4",
    "http://0x7f.1/a.mp4",
    "http://[::ffff:127.0.0.1]/a.mp4",
    "http://169.254.169.254/latest",
    "http://10.0.0.1/a.mp4",
    "http://localhost/a.mp4",
  ])("source_url %s", async (url) => {
    const err = await expectError(
      await closed.job("video.probe", { source_url: url }),
      400,
      "VALIDATION_INVALID_ARGUMENT",
      "source_url",
    );
    expect(err.message).toBe("source_url points to a private or reserved address");
  });

  test("a source that redirects to a private address", async () => {
    const to = encodeURIComponent(`http://127.1:${port}/media/av.mp4`);
    const err = await expectError(
      await closed.job("video.probe", { source_url: trusted(`/redirect?to=${to}`) }),
      400,
      "VALIDATION_INVALID_ARGUMENT",
      "source_url",
    );
    expect(err.message).toBe("source_url redirects to a URL that points to a private or reserved address");
  });

  test("a private watermark_url", async () => {
    const res = await closed.job("video.watermark", {
      source_url: trusted(`/media/${FIXTURES.av}`),
      params: { watermark_url: `http://[::1]:${port}/media/${FIXTURES.logo}` },
    });
    await expectError(res, 400, "VALIDATION_INVALID_ARGUMENT", "params.watermark_url");
  });

  test("the trusted stand-in host works end to end", async () => {
    const res = await closed.job("video.probe", { source_url: trusted(`/media/${FIXTURES.av}`) });
    expect(res.status).toBe(200);
  });
});
