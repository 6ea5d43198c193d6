import { describe, expect, it } from "vitest";
import { documentedRequestErrors } from "../../helpers/answers";
import { call, newAccount, problem } from "../../helpers/api";
import { idemKey } from "../../helpers/media";

/**
 * The "exactly one of" rules, as the document states them (oneOf of mutually exclusive branches) and as the
 * handlers enforce them (a 400 naming the field): for each body, the document refuses it exactly when the
 * server does. The document's verdict comes from Ajv in Node (test/support/answers.ts), the server's from the
 * route itself; an account without credits stops every accepted body at 402, before any work.
 */

const URL_ = "https://example.com/in.mp4";
const LOGO = "https://example.com/logo.png";
const UPLOAD = "01JD5Z8X4QK3M7R2T9V6W1Y0AB";

/** [what, path, body, the field the server names, or null when it accepts the body] */
const CASES: [string, string, Record<string, unknown>, string | null][] = [
  ["source_url", "/v1/video/probe", { source_url: URL_ }, null],
  ["source_upload_id", "/v1/video/probe", { source_upload_id: UPLOAD }, null],
  ["both sources", "/v1/video/probe", { source_url: URL_, source_upload_id: UPLOAD }, "source_upload_id"],
  ["no source", "/v1/video/probe", {}, "source_url"],
  ["trim with end", "/v1/video/trim", { source_url: URL_, params: { start: 0, end: 2 } }, null],
  ["trim with duration", "/v1/audio/trim", { source_url: URL_, params: { start: 0, duration: 2 } }, null],
  [
    "trim with end and duration",
    "/v1/video/trim",
    { source_url: URL_, params: { start: 0, end: 2, duration: 2 } },
    "params.duration",
  ],
  ["trim with neither", "/v1/audio/trim", { source_url: URL_, params: { start: 0 } }, "params.end"],
  ["a logo by URL", "/v1/image/watermark", { source_url: URL_, params: { watermark_url: LOGO } }, null],
  ["a text", "/v1/video/watermark", { source_url: URL_, params: { text: "©" } }, null],
  [
    "a logo by URL and by upload",
    "/v1/image/watermark",
    { source_url: URL_, params: { watermark_url: LOGO, watermark_upload_id: UPLOAD } },
    "params.watermark_upload_id",
  ],
  [
    "a logo and a text",
    "/v1/video/watermark",
    { source_url: URL_, params: { watermark_upload_id: UPLOAD, text: "©" } },
    "params.text",
  ],
  ["no mark", "/v1/image/watermark", { source_url: URL_, params: {} }, "params.watermark_url"],
  [
    "a text param next to a logo (video)",
    "/v1/video/watermark",
    { source_url: URL_, params: { watermark_url: LOGO, font_size: 20 } },
    "params.font_size",
  ],
  [
    "a text param next to a logo upload (video)",
    "/v1/video/watermark",
    { source_url: URL_, params: { watermark_upload_id: UPLOAD, shadow: { color: "#000000", dx: 1, dy: 1 } } },
    "params.shadow",
  ],
  [
    "scale next to a text (video)",
    "/v1/video/watermark",
    { source_url: URL_, params: { text: "a", scale: 0.3 } },
    "params.scale",
  ],
];

/** The same rules through POST /v1/tasks: the body as a task of the operation's type. */
const asTask = (path: string, body: Record<string, unknown>) => ({
  type: path.slice("/v1/".length).replace("/", "."),
  ...body,
});

/** And inside a pipeline's step (params only: the source is the task's). */
const PIPELINE_CASES: [string, Record<string, unknown>, string | null][] = [
  ["a step with a logo", { type: "video.watermark", params: { watermark_url: LOGO } }, null],
  [
    "a step with a logo and a text",
    { type: "video.watermark", params: { watermark_url: LOGO, text: "©" } },
    "params.steps[0].params.text",
  ],
  ["a step trimmed by end", { type: "video.trim", params: { start: 0, end: 1 } }, null],
  [
    "a step with end and duration",
    { type: "audio.trim", params: { start: 0, end: 1, duration: 1 } },
    "params.steps[0].params.duration",
  ],
];

async function serverField(response: Response) {
  if (response.status !== 400) return null;
  return (await problem(response)).errors?.[0]?.field ?? "(no field)";
}

describe("the document's one-of rules are the handlers'", () => {
  it.each(CASES)("%s: synchronous route and task", async (_, path, body, field) => {
    const { key } = await newAccount({ credits: 0 });
    const sync = await call(path, {
      method: "POST",
      key,
      json: body,
      headers: { "Idempotency-Key": idemKey() },
    });
    expect(await serverField(sync)).toBe(field);
    // Past validation: stopped by the empty balance, or by the unknown upload (404 naming it).
    if (field === null) expect([402, 404]).toContain(sync.status);
    const documented = await documentedRequestErrors("POST", path, body);
    expect(documented.length > 0, documented.join("; ")).toBe(field !== null);

    const task = asTask(path, body);
    expect(await serverField(await call("/v1/tasks", { method: "POST", key, json: task }))).toBe(field);
    const documentedTask = await documentedRequestErrors("POST", "/v1/tasks", task);
    expect(documentedTask.length > 0, documentedTask.join("; ")).toBe(field !== null);
  });

  it.each(PIPELINE_CASES)("%s: pipeline step", async (_, step, field) => {
    const { key } = await newAccount({ credits: 0 });
    const task = { type: "pipeline", source_url: URL_, params: { steps: [{ name: "one", ...step }] } };
    expect(await serverField(await call("/v1/tasks", { method: "POST", key, json: task }))).toBe(field);
    const documented = await documentedRequestErrors("POST", "/v1/tasks", task);
    expect(documented.length > 0, documented.join("; ")).toBe(field !== null);
  });
});
