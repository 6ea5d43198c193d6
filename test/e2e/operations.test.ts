import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ffprobeBytes, serveFixtures } from "./media.ts";

const { dir, base } = inject("e2e");
let fixtures: Awaited<ReturnType<typeof serveFixtures>>;
let key: string;

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
  key = (admin("keys", "create", account.id, "--name", "e2e") as { key: string }).key;
});
afterAll(() => fixtures?.close());

async function operate(path: string, body: unknown) {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${key}`,
      "Content-Type": "application/json",
      "Idempotency-Key": `e2e-${path}`,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text) as Record<string, unknown> & { url: string };
}

async function downloadAndProbe(url: string) {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return ffprobeBytes(await response.arrayBuffer());
}

describe("the seven synchronous routes against npm run dev, with a key made by the admin CLI", () => {
  it("image watermark", async () => {
    const result = await operate("/v1/image/watermark", {
      source_url: fixtures.media("photo.jpg"),
      params: { watermark_url: fixtures.media("logo.png"), format: "png" },
    });
    const probed = await downloadAndProbe(result.url);
    expect(probed.streams[0]).toMatchObject({
      codec_name: "png",
      width: result.width,
      height: result.height,
    });
  });

  it("video watermark", async () => {
    const result = await operate("/v1/video/watermark", {
      source_url: fixtures.media("short.mp4"),
      params: { text: "e2e" },
    });
    expect(
      (await downloadAndProbe(result.url)).streams.find((s) => s.codec_type === "video")?.codec_name,
    ).toBe("h264");
  });

  it("extract cover", async () => {
    const result = await operate("/v1/video/extract-cover", {
      source_url: fixtures.media("av.mp4"),
      params: { width: 320 },
    });
    expect((await downloadAndProbe(result.url)).streams[0]).toMatchObject({
      codec_name: "mjpeg",
      width: 320,
      height: 180,
    });
  });

  it("video trim", async () => {
    const result = await operate("/v1/video/trim", {
      source_url: fixtures.media("av.mp4"),
      params: { start: 1, duration: 2 },
    });
    expect(Number((await downloadAndProbe(result.url)).format.duration)).toBeCloseTo(2, 0);
  });

  it("audio trim", async () => {
    const result = await operate("/v1/audio/trim", {
      source_url: fixtures.media("audio.mp3"),
      params: { start: 0, end: 1 },
    });
    expect(Number((await downloadAndProbe(result.url)).format.duration)).toBeCloseTo(1, 0);
  });

  it("extract audio", async () => {
    const result = await operate("/v1/video/extract-audio", { source_url: fixtures.media("av.mp4") });
    expect(result.duration).toBeCloseTo(6, 0);
    expect((await downloadAndProbe(result.url)).streams[0]?.codec_name).toBe("mp3");
  });

  it("probe", async () => {
    const result = await operate("/v1/video/probe", { source_url: fixtures.media("av.mp4") });
    expect(result).toMatchObject({
      type: "video.probe",
      codec: "h264",
      fps: "30/1",
      hasAlpha: false,
      width: 640,
      height: 360,
    });
  });
});
