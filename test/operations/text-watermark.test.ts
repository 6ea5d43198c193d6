/**
 * Text watermarks through the routes (issue 17): the Worker draws the mark once; images composite it, video
 * (synchronous and as a task) sends it to the engine, which overlays it; the same pixels reach both.
 */
import { describe, expect, inject, it } from "vitest";
import { compositeOver } from "../../src/images/composite";
import type { Rgba } from "../../src/images/rgba";
import { renderMark } from "../../src/images/text";
import * as markModule from "../../src/text/mark";
import { newAccount, problem } from "../helpers/api";
import { download, media, operate } from "../helpers/media";
import { createTaskCall, terminal, waitForTask } from "../helpers/task-api";
import { seedEmojiPack } from "../text/fonts";

const standIn = "STAND_IN" in markModule;

/** A frame of a video decoded by real ffmpeg (the loopback inspector), as RGBA. */
async function frame(bytes: Uint8Array, t: number): Promise<Rgba> {
  const response = await fetch(`${inject("inspectorUrl")}/frame?t=${t}`, { method: "POST", body: bytes });
  expect(response.status, await response.clone().text()).toBe(200);
  const width = Number(response.headers.get("x-width"));
  const height = Number(response.headers.get("x-height"));
  const rgb = new Uint8Array(await response.arrayBuffer());
  const data = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++)
    data.set([rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!, 255], i * 4);
  return { data, width, height };
}

/**
 * Mean absolute difference of luma (BT.601) over a rectangle: 4:2:0 video keeps luma at full resolution but
 * shares chroma between 2×2 pixels, so a glyph's edges keep their brightness, not their colour.
 */
function meanLumaDiff(a: Rgba, b: Rgba, r: { x: number; y: number; width: number; height: number }): number {
  const luma = (d: Uint8ClampedArray, i: number) => 0.299 * d[i]! + 0.587 * d[i + 1]! + 0.114 * d[i + 2]!;
  let sum = 0;
  for (let y = r.y; y < r.y + r.height; y++)
    for (let x = r.x; x < r.x + r.width; x++) {
      const i = (y * a.width + x) * 4;
      sum += Math.abs(luma(a.data, i) - luma(b.data, i));
    }
  return sum / (r.width * r.height);
}

async function json(response: Response) {
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text) as Record<string, unknown> & { url: string; width: number; height: number };
}

describe("text watermarks through the routes", () => {
  it("video: the frame shows the very bitmap the image path composites (within YUV and H.264 loss)", async () => {
    const { key } = await newAccount({ credits: 20 });
    // Margin 16 keeps the overlay on even coordinates (4:2:0 chroma places marks on even pixels).
    const params = {
      text: "Mark مرحبا",
      font_size: 36,
      color: "#FFFF00",
      opacity: 1,
      position: "top-left",
      margin: 16,
    } as const;
    const result = await json(
      await operate("/v1/video/watermark", key, { source_url: media("short.mp4"), params }),
    );
    const after = await frame((await download(result.url)).bytes, 0.5);
    const source = new Uint8Array(await (await fetch(media("short.mp4"))).arrayBuffer());
    const before = await frame(source, 0.5);
    const bitmap = (await renderMark(params, 36, {}))!;
    const expected: Rgba = { ...before, data: before.data.slice() };
    compositeOver(expected, bitmap, 16, 16, 1);
    const region = { x: 16, y: 16, width: bitmap.width, height: bitmap.height };
    const error = meanLumaDiff(after, expected, region);
    const markEffect = meanLumaDiff(before, expected, region);
    console.log(`text mark on video: luma error ${error.toFixed(2)}, mark effect ${markEffect.toFixed(2)}`);
    expect(markEffect).toBeGreaterThan(20);
    // The mark's pixels arrive: what is left is the encoder's loss, far below the mark's own effect.
    expect(error).toBeLessThan(markEffect / 5);
    // A mark one pixel off would not match as well: the placement is exact.
    const shifted: Rgba = { ...before, data: before.data.slice() };
    compositeOver(shifted, bitmap, 18, 16, 1);
    expect(meanLumaDiff(after, shifted, region)).toBeGreaterThan(error * 1.5);
  });

  it.skipIf(standIn)("video: colour emoji arrive in colour on the frame", async () => {
    // The pictures live in the FONTS bucket, cut out of Debian's Noto Color Emoji as `npm run dev` does.
    const seeded = await seedEmojiPack();
    if (!seeded.ok) throw new Error(seeded.reason);
    const { key } = await newAccount({ credits: 20 });
    const params = {
      text: "😀",
      font_size: 96,
      color: "#000000",
      opacity: 1,
      position: "top-left",
      margin: 16,
    };
    const result = await json(
      await operate("/v1/video/watermark", key, { source_url: media("short.mp4"), params }),
    );
    const after = await frame((await download(result.url)).bytes, 0.5);
    const before = await frame(new Uint8Array(await (await fetch(media("short.mp4"))).arrayBuffer()), 0.5);
    // Noto's grinning face is yellow: pixels of the mark's box that became strongly yellow (black text, or
    // a grey picture, never gives one).
    const yellowish = (d: Uint8ClampedArray, i: number) => d[i]! > 180 && d[i + 1]! > 130 && d[i + 2]! < 100;
    let yellow = 0;
    for (let y = 16; y < 16 + 120 && y < after.height; y++)
      for (let x = 16; x < 16 + 130 && x < after.width; x++) {
        const i = (y * after.width + x) * 4;
        if (yellowish(after.data, i) && !yellowish(before.data, i)) yellow++;
      }
    expect(yellow).toBeGreaterThan(1000);
  });

  it("video as a task takes the same path (the mark drawn by the Worker)", async () => {
    const { key } = await newAccount({ credits: 20 });
    const created = await createTaskCall(key, {
      type: "video.watermark",
      source_url: media("short.mp4"),
      params: { text: "Task مرحبا\nline 2", position: "bottom", stroke: { color: "#000000", width: 2 } },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const task = await waitForTask(key, id, terminal, 120_000);
    expect(task.status, JSON.stringify(task)).toBe("succeeded");
  });

  it("image and video: a mark over the pixel budget is a 400 problem naming params.font_size", async () => {
    const { key } = await newAccount({ credits: 20 });
    const params = { text: "W".repeat(40), font_size: 1000 };
    for (const [path, source] of [
      ["/v1/image/watermark", "photo.jpg"],
      ["/v1/video/watermark", "short.mp4"],
    ] as const) {
      const response = await operate(path, key, { source_url: media(source), params });
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      const body = await problem(response);
      expect(body.code).toBe("VALIDATION_INVALID_ARGUMENT");
      expect(body.errors?.map((e) => e.field)).toEqual(["params.font_size"]);
    }
  });

  it.skipIf(standIn)("image and video: characters no font covers are a 400 naming them", async () => {
    const { key } = await newAccount({ credits: 20 });
    for (const [path, source] of [
      ["/v1/image/watermark", "photo.jpg"],
      ["/v1/video/watermark", "short.mp4"],
    ] as const) {
      const response = await operate(path, key, { source_url: media(source), params: { text: "ok 𐀀" } });
      expect(response.status).toBe(400);
      const body = await problem(response);
      expect(body.errors?.map((e) => e.field)).toEqual(["params.text"]);
      expect(body.detail).toContain("U+10000");
    }
  });

  it("params are validated: style members, families and weights", async () => {
    const { key } = await newAccount({ credits: 20 });
    for (const [params, field] of [
      [{ text: "x", font_family: "cursive" }, "params.font_family"],
      [{ text: "x", font_weight: 700 }, "params.font_weight"],
      [{ text: "x", stroke: { color: "#000000" } }, "params.stroke.width"],
      [{ text: "x", shadow: { color: "black", dx: 1, dy: 1 } }, "params.shadow.color"],
    ] as const) {
      const response = await operate("/v1/image/watermark", key, { source_url: media("photo.jpg"), params });
      expect(response.status).toBe(400);
      expect((await problem(response)).errors?.map((e) => e.field)).toContain(field);
    }
    const ok = await operate("/v1/image/watermark", key, {
      source_url: media("photo.jpg"),
      params: {
        text: "© 2026\nExample",
        font_family: "serif",
        font_weight: "bold",
        stroke: { color: "#000000AA", width: 2 },
        shadow: { color: "#00000080", dx: 2, dy: 2, blur: 2 },
      },
    });
    expect(ok.status, await ok.clone().text()).toBe(200);
  });
});
