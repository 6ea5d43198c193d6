/**
 * The watermark params are validated twice: by the Worker's zod schemas (the public contract) and again by
 * the media engine (its own image, containers/ffmpeg/src/pipeline/watermark.ts). This test sends the same
 * params to both, the engine being the real process of the test setup, and fails when they disagree:
 * whatever the Worker accepts (and sends on) the engine must accept, and what the Worker refuses the engine
 * refuses too.
 */
import { describe, expect, inject, it } from "vitest";
import { getOperation } from "../../src/operations";

const LOGO = "https://example.com/logo.png";

/** True when the engine refused the params themselves (not the unreachable source that follows them). */
async function engineRefuses(type: string, params: unknown): Promise<boolean> {
  const response = await fetch(`${inject("engineUrl")}/v1/jobs/${type}`, {
    method: "POST",
    headers: { authorization: `Bearer ${inject("engineSecret")}`, "content-type": "application/json" },
    body: JSON.stringify({
      job_id: `drift-${crypto.randomUUID()}`,
      // Nothing listens on port 9: params that pass lead to SOURCE_UNREACHABLE, never to work.
      source_url: "http://127.0.0.1:9/source",
      params,
    }),
  });
  const body = (await response.json()) as { code: string; field?: string };
  expect(response.status, JSON.stringify(body)).not.toBe(200);
  return body.code === "VALIDATION_INVALID_ARGUMENT" && (body.field ?? "").startsWith("params");
}

const MARK_CASES: [string, Record<string, unknown>][] = [
  ["a text", { text: "© Acme" }],
  ["a logo", { watermark_url: LOGO }],
  ["both a logo and a text", { watermark_url: LOGO, text: "x" }],
  ["neither", {}],
  ["an empty text", { text: "" }],
  ["a 200-character text", { text: "x".repeat(200) }],
  ["a 201-character text", { text: "x".repeat(201) }],
  ["a text that is a number", { text: 5 }],
  ["a logo URL that is not http(s)", { watermark_url: "ftp://example.com/logo.png" }],
  ["a logo URL that is not a URL", { watermark_url: "logo.png" }],
  ["a logo URL with credentials", { watermark_url: "https://user:pw@example.com/logo.png" }],
  ["a logo URL of 2049 characters", { watermark_url: `https://example.com/${"a".repeat(2029)}` }],
  ["font_size 1", { text: "x", font_size: 1 }],
  ["font_size 1000", { text: "x", font_size: 1000 }],
  ["font_size 0", { text: "x", font_size: 0 }],
  ["font_size 1001", { text: "x", font_size: 1001 }],
  ["font_size 12.5", { text: "x", font_size: 12.5 }],
  ["color #RRGGBB", { text: "x", color: "#12abEF" }],
  ["color #RRGGBBAA", { text: "x", color: "#12abEF80" }],
  ["color #RGB", { text: "x", color: "#fff" }],
  ["color by name", { text: "x", color: "red" }],
  ["each position", { text: "x", position: "center" }],
  ["an unknown position", { text: "x", position: "middle" }],
  ["margin 0", { text: "x", margin: 0 }],
  ["margin 1000", { text: "x", margin: 1000 }],
  ["margin -1", { text: "x", margin: -1 }],
  ["margin 1001", { text: "x", margin: 1001 }],
  ["margin 2.5", { text: "x", margin: 2.5 }],
  ["opacity 0", { text: "x", opacity: 0 }],
  ["opacity 1", { text: "x", opacity: 1 }],
  ["opacity 1.01", { text: "x", opacity: 1.01 }],
  ["opacity -0.01", { text: "x", opacity: -0.01 }],
  ["opacity as a string", { text: "x", opacity: "0.5" }],
  ["scale 1", { watermark_url: LOGO, scale: 1 }],
  ["scale 0.001", { watermark_url: LOGO, scale: 0.001 }],
  ["scale 0", { watermark_url: LOGO, scale: 0 }],
  ["scale 1.5", { watermark_url: LOGO, scale: 1.5 }],
  ["an unknown key", { text: "x", size: 3 }],
  ["null for an optional key", { text: "x", margin: null }],
  ["multi-line text", { text: "line one\nline two" }],
  ["each font_family", { text: "x", font_family: "serif" }],
  ["font_family mono", { text: "x", font_family: "mono" }],
  ["an unknown font_family", { text: "x", font_family: "cursive" }],
  ["font_weight bold", { text: "x", font_weight: "bold" }],
  ["an unknown font_weight", { text: "x", font_weight: "700" }],
  ["a stroke", { text: "x", stroke: { color: "#000000", width: 2 } }],
  ["a stroke of width 0", { text: "x", stroke: { color: "#000000", width: 0 } }],
  ["a stroke of width 51", { text: "x", stroke: { color: "#000000", width: 51 } }],
  ["a stroke without color", { text: "x", stroke: { width: 2 } }],
  ["a stroke with a named color", { text: "x", stroke: { color: "black", width: 2 } }],
  ["a stroke with an unknown member", { text: "x", stroke: { color: "#000000", width: 2, join: "round" } }],
  ["a stroke that is a string", { text: "x", stroke: "2px black" }],
  ["a shadow", { text: "x", shadow: { color: "#00000080", dx: 2, dy: -2, blur: 3 } }],
  ["a shadow without blur", { text: "x", shadow: { color: "#000000", dx: 0, dy: 0 } }],
  ["a shadow without dy", { text: "x", shadow: { color: "#000000", dx: 2 } }],
  ["a shadow offset of 101", { text: "x", shadow: { color: "#000000", dx: 101, dy: 0 } }],
  ["a shadow blur of -1", { text: "x", shadow: { color: "#000000", dx: 1, dy: 1, blur: -1 } }],
  ["null stroke", { text: "x", stroke: null }],
];

const WINDOW_CASES: [string, Record<string, unknown>][] = [
  ["start and end", { start: 0, end: 1.5 }],
  ["start and duration", { start: 2, duration: 1 }],
  ["start alone", { start: 1 }],
  ["end and duration both", { start: 0, end: 1, duration: 1 }],
  ["no start", { end: 1 }],
  ["a negative start", { start: -1, end: 1 }],
  ["end before start", { start: 2, end: 1 }],
  ["end equal to start", { start: 1, end: 1 }],
  ["duration 0", { start: 0, duration: 0 }],
  ["a start of more than a week", { start: 604_801, end: 604_802 }],
  ["a duration of more than a week", { start: 0, duration: 604_801 }],
  ["a string start", { start: "1", end: 2 }],
  ["an unknown key", { start: 0, end: 1, speed: 2 }],
];

const CASES: Record<string, [string, Record<string, unknown>][]> = {
  "video.trim": [
    ...WINDOW_CASES,
    ["mode fast", { start: 0, end: 1, mode: "fast" }],
    ["mode accurate", { start: 0, end: 1, mode: "accurate" }],
    ["an unknown mode", { start: 0, end: 1, mode: "exact" }],
  ],
  "audio.trim": [...WINDOW_CASES, ["a mode", { start: 0, end: 1, mode: "fast" }]],
  "video.extract-cover": [
    ["nothing", {}],
    ["everything", { time: 2.5, format: "webp", width: 320, height: 180, quality: 90 }],
    ["a negative time", { time: -1 }],
    ["width 0", { width: 0 }],
    ["width 8192", { width: 8192 }],
    ["width 8193", { width: 8193 }],
    ["a fractional height", { height: 10.5 }],
    ["quality 0", { quality: 0 }],
    ["quality 101", { quality: 101 }],
    ["format gif", { format: "gif" }],
    ["an unknown key", { size: 3 }],
  ],
  "video.extract-audio": [
    ["nothing", {}],
    ["everything", { format: "mp3", bitrate: "192k", sample_rate: 44100, channels: 2 }],
    ["each format", { format: "original" }],
    ["an unknown format", { format: "aac" }],
    ["bitrate 32k and 320k", { bitrate: "320k" }],
    ["bitrate 31k", { bitrate: "31k" }],
    ["bitrate 321k", { bitrate: "321k" }],
    ["bitrate as a number", { bitrate: 128 }],
    ["bitrate without k", { bitrate: "128" }],
    ["sample_rate 48000", { sample_rate: 48000 }],
    ["sample_rate 12345", { sample_rate: 12345 }],
    ["channels 3", { channels: 3 }],
    ["channels 1", { channels: 1 }],
  ],
  "video.watermark": [
    ...MARK_CASES,
    ["start and end", { text: "x", start: 1, end: 2.5 }],
    ["end before start", { text: "x", start: 2, end: 1 }],
    ["end equal to start", { text: "x", start: 2, end: 2 }],
    ["a negative start", { text: "x", start: -1 }],
  ],
  "image.watermark": [
    ...MARK_CASES,
    ["each format", { text: "x", format: "webp" }],
    ["format same", { text: "x", format: "same" }],
    ["an unknown format", { text: "x", format: "gif" }],
    ["quality 1 and 100", { text: "x", quality: 100 }],
    ["quality 0", { text: "x", quality: 0 }],
    ["quality 101", { text: "x", quality: 101 }],
    ["quality 50.5", { text: "x", quality: 50.5 }],
  ],
};

describe.each(Object.keys(CASES))("%s params: the Worker and the engine agree", (type) => {
  const schema = getOperation(type)!.params;
  it.each(CASES[type]!)("%s", async (_name, raw) => {
    const parsed = schema.safeParse(raw);
    if (parsed.success) {
      // What the Worker sends on (defaults filled in) must pass the engine.
      expect(await engineRefuses(type, parsed.data)).toBe(false);
    } else {
      expect(await engineRefuses(type, raw)).toBe(true);
    }
  });
});
