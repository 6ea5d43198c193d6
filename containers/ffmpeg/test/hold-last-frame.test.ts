/**
 * lastFrameLasts (reencode.ts): the last frame's duration set on its packet in the output's 1/90000 s, no
 * B-frames (so that frame is the last packet), and nothing repeated. Its effect on real files:
 * watermark-timing.test.ts and player-window.test.ts.
 */
import { describe, expect, test } from "vitest";
import { lastFrameLasts } from "../src/pipeline/reencode.ts";

describe("lastFrameLasts", () => {
  test("the packet from half a millisecond before the last frame's time lasts the duration asked", () => {
    expect(lastFrameLasts(1.5, 1.57)).toEqual([
      ...["-bf", "0", "-video_track_timescale", "90000"],
      "-bsf:v",
      "setts=pts=PTS:dts=DTS:duration='if(gte(PTS\\,134955)\\,141300\\,DURATION)'",
    ]);
  });

  test("a first frame at 0 and a duration below a tick", () => {
    expect(lastFrameLasts(0, 1e-7).at(-1)).toBe(
      "setts=pts=PTS:dts=DTS:duration='if(gte(PTS\\,0)\\,1\\,DURATION)'",
    );
  });
});
