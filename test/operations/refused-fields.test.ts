import { describe, expect, it } from "vitest";
import { newAccount, problem } from "../helpers/api";
import { media, operate } from "../helpers/media";

/** A refused URL is reported under the field the client wrote it in (issue 13: a logo named source_url). */
describe("POST /v1/image/watermark: refused URLs name their field", () => {
  it.each([
    ["source_url", { source_url: "http://169.254.169.254/a.png", params: { text: "x" } }],
    [
      "params.watermark_url",
      { source_url: media("logo.png"), params: { watermark_url: "http://169.254.169.254/logo.png" } },
    ],
  ])("%s", async (field, body) => {
    const { key } = await newAccount({ credits: 10 });
    const response = await operate("/v1/image/watermark", key, body);
    expect(response.status).toBe(400);
    const error = await problem(response);
    expect(error.errors?.map((e) => e.field)).toEqual([field]);
    expect(error.detail).toBe(`${field} points to a private or reserved address`);
  });
});
