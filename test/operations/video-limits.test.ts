import { describe, expect, it } from "vitest";
import { newAccount, problem } from "../helpers/api";
import { media, operate } from "../helpers/media";

/** The measured attack of issue 13: a 400 KB 16384×8192 MP4 drove ffmpeg to 1.6 GiB for one cover. */
describe("POST /v1/video/extract-cover on a 16384×8192 video", () => {
  it("413 naming the per-frame pixel limit", async () => {
    const { key } = await newAccount({ credits: 10 });
    const response = await operate("/v1/video/extract-cover", key, {
      source_url: media("huge-16384x8192.mp4"),
    });
    expect(response.status).toBe(413);
    const body = await problem(response);
    expect(body.code).toBe("REQUEST_BODY_TOO_LARGE");
    expect(body.detail).toMatch(
      /16384×8192 \(134\.2 megapixels\), over the limit of 35\.7 megapixels per frame/,
    );
  });
});
