/**
 * holdLastFrame's limits (reencode.ts): nothing to hold for one frame, nothing past 1800 repeated frames, and
 * the filters for the video's end and for a window's end. Their effect on real files: watermark-timing.test.ts.
 */
import { describe, expect, test } from "vitest";
import { holdLastFrame } from "../src/pipeline/reencode.ts";
import type { VideoEnd } from "../src/pipeline/source-timing.ts";

const at30 = (last: number, end: number, next: number | null = null): VideoEnd => ({
  last,
  end,
  first: 0,
  graphRate: 30,
  next,
});

describe("holdLastFrame", () => {
  test("nothing to hold: unknown end or rate, a last frame of one frame, or more than 1800 frames", () => {
    expect(holdLastFrame(null)).toEqual([]);
    expect(holdLastFrame({ ...at30(1, 2), graphRate: 0 })).toEqual([]);
    expect(holdLastFrame(at30(1, 1 + 1 / 30))).toEqual([]);
    expect(holdLastFrame(at30(1, 1 + 1.4 / 30))).toEqual([]);
    expect(holdLastFrame(at30(1, 1 + 1800 / 30))).not.toEqual([]);
    expect(holdLastFrame(at30(1, 1 + 1801 / 30))).toEqual([]);
  });

  test("to the video's end: clones stepped a frame apart from the last frame, the one on its time dropped", () => {
    expect(holdLastFrame(at30(1.5, 3), 0.5)).toEqual([
      "tpad=stop_mode=clone:stop_duration=1.500000",
      "setpts='if(gt(T,1.000100),PREV_OUTPTS+1/(30*TB),PTS)'",
      "select='lt(t,0.999900)+not(eq(pts,prev_pts))'",
    ]);
  });

  test("to a window's end: the input ends there, and no clone reaches it", () => {
    const filters = holdLastFrame(at30(1.5, 2.5, 3), 0.5);
    expect(filters[0]).toBe("trim=end=2.000000");
    expect(filters.slice(1, 4)).toEqual(holdLastFrame(at30(1.5, 2.5), 0.5));
    expect(filters[4]).toBe(`trim=end=${(2 - 0.5 / 30).toFixed(6)}`);
  });
});
