/** POST /v1/fetch: the one hardened fetcher, used by the Worker for image sources and logos. */

import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  AUTH,
  errorOf,
  filesUnder,
  fixturePath,
  fixtureUrl,
  media,
  startTestEngine,
  type TestEngine,
} from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine.close());

const fetchSource = (body: Record<string, unknown>) =>
  fetch(`${engine.url}/v1/fetch`, {
    method: "POST",
    headers: { ...AUTH, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("/v1/fetch", () => {
  test.each([
    [FIXTURES.logo, "png", "image/png", 160, 80],
    [FIXTURES.jpeg, "jpeg", "image/jpeg", 300, 200],
    [FIXTURES.webp, "webp", "image/webp", 300, 200],
  ])("%s streams back with its sniffed type and size", async (name, format, contentType, width, height) => {
    const res = await fetchSource({ source_url: media(name), accept: ["image"] });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(contentType);
    expect(JSON.parse(res.headers.get("x-engine-media")!)).toEqual({ kind: "image", format, width, height });
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(await readFile(fixturePath(name)))).toBe(true);
    expect(Number(res.headers.get("content-length"))).toBe(bytes.length);
  });

  test("the type comes from the content, not the name", async () => {
    const res = await fetchSource({ source_url: media(FIXTURES.textAsMp4) });
    expect(await errorOf(res)).toMatchObject({
      status: 415,
      code: "CONTENT_TYPE_UNSUPPORTED",
      message: "the source is not a PNG, JPEG or WebP image",
    });
    const video = await fetchSource({ source_url: media(FIXTURES.av), accept: ["image"] });
    expect(video.status).toBe(415);
  });

  test("video may be accepted explicitly", async () => {
    const res = await fetchSource({ source_url: media(FIXTURES.av), accept: ["video"] });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.headers.get("x-engine-media")!)).toEqual({ kind: "video", format: "mp4" });
    await res.arrayBuffer();
  });

  test("size cap, upstream errors and bad arguments", async () => {
    expect(
      await errorOf(await fetchSource({ source_url: media(FIXTURES.jpeg), max_source_bytes: 1000 })),
    ).toMatchObject({
      status: 413,
      code: "REQUEST_BODY_TOO_LARGE",
    });
    expect(await errorOf(await fetchSource({ source_url: fixtureUrl("/status/404") }))).toMatchObject({
      status: 502,
      message: "the source answered with HTTP status 404",
    });
    expect(await errorOf(await fetchSource({ source_url: "ftp://x/y.png" }))).toMatchObject({
      status: 400,
      field: "source_url",
    });
    expect(
      await errorOf(await fetchSource({ source_url: media(FIXTURES.logo), accept: ["pdf"] })),
    ).toMatchObject({ status: 400, field: "accept[0]" });
    expect(await filesUnder(engine.engine.tmpDir)).toEqual([]);
  });

  // The envelope fields the job routes read too (http-io.ts sourceFields), with the fetch route's defaults.
  const GiB = 1024 ** 3;
  test.each([
    [{ max_source_bytes: 0 }, "max_source_bytes"],
    [{ max_source_bytes: 4 * GiB + 1 }, "max_source_bytes"],
    [{ max_source_bytes: "1000" }, "max_source_bytes"],
    [{ timeout_ms: 0 }, "timeout_ms"],
    [{ timeout_ms: 3_600_001 }, "timeout_ms"],
    [{ timeout_ms: 1.5 }, "timeout_ms"],
  ])("%o → 400 naming %s", async (fields, field) => {
    const res = await fetchSource({ source_url: media(FIXTURES.jpeg), ...fields });
    expect(await errorOf(res)).toMatchObject({ status: 400, code: "VALIDATION_INVALID_ARGUMENT", field });
  });

  test("the ceilings themselves are accepted: 4 GiB, one hour", async () => {
    const res = await fetchSource({
      source_url: media(FIXTURES.jpeg),
      max_source_bytes: 4 * GiB,
      timeout_ms: 3_600_000,
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  test("a fetch over its timeout_ms → 504, nothing left behind", async () => {
    const res = await fetchSource({
      source_url: fixtureUrl("/hang"),
      timeout_ms: 500,
    });
    expect(await errorOf(res)).toMatchObject({
      status: 504,
      code: "PROCESSING_TIMEOUT",
      message: "fetching the source took too long",
    });
    await engine.engine.idle();
    expect(await filesUnder(engine.engine.tmpDir)).toEqual([]);
  });
});
