import { ImageWatermarkParamsSchema } from "@p6/contract/params";
import { describe, expect, it } from "vitest";

const URL = "https://example.com/logo.png";

describe("ImageWatermarkParamsSchema", () => {
  it("fills in the defaults", () => {
    expect(ImageWatermarkParamsSchema.parse({ watermark_url: URL })).toEqual({
      watermark_url: URL,
      color: "#FFFFFF",
      position: "bottom-right",
      margin: 16,
      opacity: 0.5,
      scale: 0.2,
      format: "same",
      quality: 85,
    });
  });

  it.each([
    { text: "© 2026", font_size: 48, color: "#ff000080", position: "top-left", margin: 0, opacity: 1 },
    { text: "x".repeat(200), color: "#00FF00" },
    { watermark_url: "http://example.com/a.webp", scale: 1, opacity: 0, format: "webp", quality: 1 },
    { watermark_url: URL, position: "center", margin: 1000, format: "jpeg", quality: 100 },
  ])("accepts %j", (params) => {
    expect(ImageWatermarkParamsSchema.safeParse(params).success).toBe(true);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["an unknown key", { text: "a", rotate: 90 }, ""],
    ["both watermark_url and text", { text: "a", watermark_url: URL }, "text"],
    ["neither watermark_url nor text", { opacity: 0.3 }, "watermark_url"],
    ["empty text", { text: "" }, "text"],
    ["text over 200 characters", { text: "x".repeat(201) }, "text"],
    ["a non-http URL", { watermark_url: "ftp://example.com/a.png" }, "watermark_url"],
    ["a relative URL", { watermark_url: "/logo.png" }, "watermark_url"],
    ["a color without #", { text: "a", color: "FFFFFF" }, "color"],
    ["a 3-digit color", { text: "a", color: "#FFF" }, "color"],
    ["a named color", { text: "a", color: "white" }, "color"],
    ["font_size 0", { text: "a", font_size: 0 }, "font_size"],
    ["a fractional font_size", { text: "a", font_size: 12.5 }, "font_size"],
    ["font_size over 1000", { text: "a", font_size: 1001 }, "font_size"],
    ["an unknown position", { text: "a", position: "middle" }, "position"],
    ["a negative margin", { text: "a", margin: -1 }, "margin"],
    ["margin over 1000", { text: "a", margin: 1001 }, "margin"],
    ["opacity over 1", { text: "a", opacity: 1.5 }, "opacity"],
    ["negative opacity", { text: "a", opacity: -0.1 }, "opacity"],
    ["scale 0", { watermark_url: URL, scale: 0 }, "scale"],
    ["scale over 1", { watermark_url: URL, scale: 1.01 }, "scale"],
    ["an unknown format", { text: "a", format: "gif" }, "format"],
    ["quality 0", { text: "a", quality: 0 }, "quality"],
    ["quality 101", { text: "a", quality: 101 }, "quality"],
    ["a string number", { text: "a", opacity: "0.5" }, "opacity"],
  ])("rejects %s", (_, params, field) => {
    const result = ImageWatermarkParamsSchema.safeParse(params);
    expect(result.success).toBe(false);
    const paths = result.error!.issues.map((issue) => issue.path.join("."));
    if (field) expect(paths).toContain(field);
    else expect(result.error!.issues.some((issue) => issue.code === "unrecognized_keys")).toBe(true);
  });
});
