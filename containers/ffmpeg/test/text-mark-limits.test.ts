/**
 * The `text_mark` of a job (issue 17: the Worker's PNG of a text mark) at and past its limits: the engine's
 * JSON body limit rose to 12 MiB to carry it, the PNG itself is capped at 8 MiB. Oversized and malformed marks
 * get their documented 4xx before the job takes a slot or starts ffmpeg, and the engine keeps serving.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { LIMITS } from "../src/security/limits.ts";
import {
  AUTH,
  assertSafeMessage,
  errorOf,
  ffmpegChildren,
  jobId,
  media,
  startTestEngine,
  type TestEngine,
} from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";
import { solidPng } from "./support/text-mark.ts";

let engine: TestEngine;
beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(() => engine.close());

const MiB = 1024 * 1024;

/**
 * POST a job whose body is exactly `body` (no text_mark added), as the Worker's client sends it, on a connection
 * of its own (issue 42). fetch's pool reuses an idle keep-alive connection; building an 11 MiB body blocks this
 * process, and on a loaded machine (two suites at once) the engine's keep-alive timeout closed that connection
 * meanwhile: the reused socket was reset (ECONNRESET) before the request reached the engine.
 */
const post = (type: string, body: string) =>
  new Promise<Response>((resolve, reject) => {
    const req = http.request(
      `${engine.url}/v1/jobs/${type}`,
      {
        method: "POST",
        agent: false,
        headers: { ...AUTH, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on("data", (part: Buffer) => parts.push(part));
        res.on("error", reject);
        res.on("end", () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of [value ?? []].flat()) headers.append(name, v);
          }
          resolve(new Response(Buffer.concat(parts), { status: res.statusCode ?? 0, headers }));
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });

const jobBody = (type: "image" | "video", textMark: unknown) =>
  JSON.stringify({
    job_id: jobId(),
    source_url: media(type === "image" ? FIXTURES.jpeg : FIXTURES.av),
    params: { text: "mark", font_size: 20 },
    text_mark: textMark,
  });

/** A PNG signature and an IHDR claiming `width`×`height`, with `idat` as its only data. */
function pngClaiming(width: number, height: number): Buffer {
  const real = solidPng(4, 4, [255, 0, 0, 255]);
  const forged = Buffer.from(real);
  forged.writeUInt32BE(width, 16);
  forged.writeUInt32BE(height, 20);
  return forged;
}

/** The engine is idle and serves a valid text mark job after a refusal. */
async function stillServing() {
  const health = (await (await fetch(`${engine.url}/v1/health`, { headers: AUTH })).json()) as {
    slots?: { busy: number; queued: number };
  };
  expect(health.slots).toMatchObject({ busy: 0, queued: 0 });
  const ok = await post(
    "image.watermark",
    jobBody("image", { png: solidPng(40, 20, [0, 0, 255, 255]).toString("base64"), font_size: 20 }),
  );
  expect(ok.status, await ok.clone().text()).toBe(200);
  await ok.arrayBuffer();
}

describe("text_mark past its limits", () => {
  test("a body over the 12 MiB JSON limit (a 13 MiB mark) → 413 REQUEST_BODY_TOO_LARGE", async () => {
    expect(LIMITS.maxRequestBodyBytes).toBe(12 * MiB);
    const before = await ffmpegChildren();
    const body = jobBody("video", { png: "A".repeat(13 * MiB), font_size: 20 });
    const res = await post("video.watermark", body).catch((error: unknown) => error);
    // The engine answers as soon as the limit is passed and closes the connection (http-io.ts sendError); a
    // client still sending may see that close as a reset instead of the 413, never as a job that ran.
    if (res instanceof Response) {
      const err = await errorOf(res);
      expect(err).toMatchObject({ status: 413, code: "REQUEST_BODY_TOO_LARGE" });
      expect(err.message).toBe("the request body exceeds 12 MiB");
    } else {
      expect(String((res as Error).cause ?? res)).toMatch(/ECONNRESET|EPIPE|socket|closed/i);
    }
    expect(await ffmpegChildren(before)).toEqual([]);
    await stillServing();
  });

  test("a mark over 8 MiB within the body limit → 400 naming text_mark, image and video", async () => {
    // 8.5 MiB of PNG as base64 (11.3 MiB): the body passes, the mark does not.
    const png = Buffer.alloc(8.5 * MiB);
    solidPng(4, 4, [0, 0, 0, 255]).copy(png);
    for (const [type, kind] of [
      ["image.watermark", "image"],
      ["video.watermark", "video"],
    ] as const) {
      const res = await post(type, jobBody(kind, { png: png.toString("base64"), font_size: 20 }));
      const err = await errorOf(res);
      expect(err).toMatchObject({
        status: 400,
        code: "VALIDATION_INVALID_ARGUMENT",
        field: expect.stringMatching(/^text_mark(\.|$)/),
      });
      assertSafeMessage(err.message);
    }
    await stillServing();
  });

  test.each([
    ["a JPEG", { png: Buffer.from([0xff, 0xd8, 0xff, 0xe0, ...Array(60).fill(0)]).toString("base64") }],
    ["not base64 at all", { png: "%%%% not base64 %%%%" }],
    [
      "a PNG cut after its signature",
      { png: solidPng(4, 4, [0, 0, 0, 255]).subarray(0, 20).toString("base64") },
    ],
    ["a font_size of 0", { png: solidPng(4, 4, [0, 0, 0, 255]).toString("base64"), font_size: 0 }],
    ["a font_size over 1000", { png: solidPng(4, 4, [0, 0, 0, 255]).toString("base64"), font_size: 1001 }],
    ["an unknown member", { png: solidPng(4, 4, [0, 0, 0, 255]).toString("base64"), scale: 2 }],
  ])("malformed: %s → 400 naming text_mark", async (_name, mark) => {
    const before = await ffmpegChildren();
    for (const kind of ["image", "video"] as const) {
      const res = await post(`${kind}.watermark`, jobBody(kind, { font_size: 20, ...mark }));
      const err = await errorOf(res);
      expect(err).toMatchObject({
        status: 400,
        code: "VALIDATION_INVALID_ARGUMENT",
        field: expect.stringMatching(/^text_mark(\.|$)/),
      });
      assertSafeMessage(err.message);
    }
    expect(await ffmpegChildren(before)).toEqual([]);
  });

  test.each([
    ["0×0", 0, 0],
    ["100000×100000 (10 gigapixels)", 100_000, 100_000],
  ])(
    "a PNG whose header claims %s, with 4×4 pixels of data → 400 naming text_mark before ffmpeg starts",
    async (_n, w, h) => {
      const before = await ffmpegChildren();
      for (const kind of ["image", "video"] as const) {
        const res = await post(
          `${kind}.watermark`,
          jobBody(kind, { png: pngClaiming(w, h).toString("base64"), font_size: 20 }),
        );
        const err = await errorOf(res);
        expect(err, JSON.stringify(err)).toMatchObject({
          status: 400,
          code: "VALIDATION_INVALID_ARGUMENT",
          field: expect.stringMatching(/^text_mark(\.|$)/),
        });
        assertSafeMessage(err.message);
      }
      expect(await ffmpegChildren(before)).toEqual([]);
      await stillServing();
    },
  );
});
