import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractClient } from "./client.ts";
import { ffprobeBytes, serveFixtures } from "./media.ts";
import { e2eService } from "./service.ts";

const { dir, base } = await e2eService();
let fixtures: Awaited<ReturnType<typeof serveFixtures>>;
let api: Awaited<ReturnType<typeof contractClient>>;

function admin(...args: string[]) {
  return JSON.parse(
    execFileSync("npm", ["run", "--silent", "admin", "--", ...args], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, ADMIN_URL: base },
    }),
  );
}

beforeAll(async () => {
  fixtures = await serveFixtures();
  const account = admin("accounts", "create", "--name", "e2e-ops", "--credits", "100") as { id: string };
  const key = (admin("keys", "create", account.id, "--name", "e2e") as { key: string }).key;
  api = await contractClient(base, key);
});
afterAll(() => fixtures?.close());

/** The client's result of an operation: 200, with the key the client generated. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  expect(result.response.status, JSON.stringify(result.error)).toBe(200);
  expect(result.response.headers.get("idempotent-replayed")).toBeNull();
  return result.data!;
}

async function downloadAndProbe(url: string) {
  const response = await api.download(url);
  expect(response.status).toBe(200);
  return ffprobeBytes(await response.arrayBuffer());
}

describe("the seven synchronous routes against npm run dev, with a key made by the admin CLI", () => {
  /** An image watermark of photo.jpg as PNG: 200, and the file it points to is the PNG it reports. */
  async function watermarkPng(mark: { watermark_url: string } | { text: string }) {
    const result = ok(
      await api.client.POST("/v1/image/watermark", {
        body: { source_url: fixtures.media("photo.jpg"), params: { ...mark, format: "png" } },
      }),
    );
    const probed = await downloadAndProbe(result.url);
    expect(probed.streams[0]).toMatchObject({
      codec_name: "png",
      width: result.width,
      height: result.height,
    });
  }

  it("image watermark", () => watermarkPng({ watermark_url: fixtures.media("logo.png") }));

  // Each script draws from a font kept in R2 (src/text/remote-fonts.ts): one missing from the bucket would
  // refuse the request (FontUnavailableError), not draw boxes.
  it("image watermark with text in the fonts npm run dev put into the local bucket (CJK, Gurmukhi, emoji)", () =>
    watermarkPng({ text: "日本語 한국어 ਪੰਜਾਬੀ 😀" }));

  it("video watermark", async () => {
    const result = ok(
      await api.client.POST("/v1/video/watermark", {
        body: {
          source_url: fixtures.media("short.mp4"),
          params: { text: "e2e" },
        },
      }),
    );
    expect(
      (await downloadAndProbe(result.url)).streams.find((s) => s.codec_type === "video")?.codec_name,
    ).toBe("h264");
  });

  it("extract cover", async () => {
    const result = ok(
      await api.client.POST("/v1/video/extract-cover", {
        body: {
          source_url: fixtures.media("av.mp4"),
          params: { width: 320 },
        },
      }),
    );
    expect((await downloadAndProbe(result.url)).streams[0]).toMatchObject({
      codec_name: "mjpeg",
      width: 320,
      height: 180,
    });
  });

  it("video trim", async () => {
    const result = ok(
      await api.client.POST("/v1/video/trim", {
        body: {
          source_url: fixtures.media("av.mp4"),
          params: { start: 1, duration: 2 },
        },
      }),
    );
    expect(Number((await downloadAndProbe(result.url)).format.duration)).toBeCloseTo(2, 0);
  });

  it("audio trim", async () => {
    const result = ok(
      await api.client.POST("/v1/audio/trim", {
        body: {
          source_url: fixtures.media("audio.mp3"),
          params: { start: 0, end: 1 },
        },
      }),
    );
    expect(Number((await downloadAndProbe(result.url)).format.duration)).toBeCloseTo(1, 0);
  });

  it("extract audio", async () => {
    const result = ok(
      await api.client.POST("/v1/video/extract-audio", {
        body: { source_url: fixtures.media("av.mp4") },
      }),
    );
    expect(result.duration).toBeCloseTo(6, 0);
    expect((await downloadAndProbe(result.url)).streams[0]?.codec_name).toBe("mp3");
  });

  it("probe", async () => {
    const result = ok(
      await api.client.POST("/v1/video/probe", {
        body: { source_url: fixtures.media("av.mp4") },
      }),
    );
    expect(result).toMatchObject({
      type: "video.probe",
      codec: "h264",
      fps: "30/1",
      hasAlpha: false,
      width: 640,
      height: 360,
    });
  });

  it("a repeated Idempotency-Key replays the stored result", async () => {
    const request = {
      body: { source_url: fixtures.media("av.mp4") },
      headers: { "Idempotency-Key": "e2e-probe-replay" },
    };
    const first = ok(await api.client.POST("/v1/video/probe", request));
    const again = await api.client.POST("/v1/video/probe", request);
    expect(again.response.status).toBe(200);
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    expect(again.data).toEqual(first);
  });

  it("every response matched the OpenAPI document", () => {
    expect(api.contract.checked()).toBeGreaterThanOrEqual(15);
    expect(api.failures()).toEqual([]);
  });
});
