/** bench:load's isolate profile summary (bench/lib/isolate-profile.ts): busy share and largest entry points. */
import { describe, expect, test } from "vitest";
import { summarizeProfile } from "../../bench/lib/isolate-profile.ts";

const frame = (functionName: string, url = "", lineNumber = -1) => ({ functionName, url, lineNumber });

describe("summarizeProfile", () => {
  test("busy is every sample but (idle); entry points count their callees, merged by name", () => {
    const profile = {
      nodes: [
        { id: 1, callFrame: frame("(root)"), children: [2, 3, 5, 6] },
        { id: 2, callFrame: frame("(idle)") },
        { id: 3, callFrame: frame("run", "file:///x/index.js", 10), children: [4] },
        { id: 4, callFrame: frame("decode", "file:///x/index.js", 20) },
        { id: 5, callFrame: frame("(garbage collector)") },
        // A second continuation of the same function: merged with node 3.
        { id: 6, callFrame: frame("run", "file:///x/index.js", 10) },
      ],
      // 10 samples of 1 ms: 4 idle, 1 in run itself, 3 in decode under run, 1 in run again, 1 in GC.
      samples: [2, 2, 2, 2, 3, 4, 4, 4, 6, 5],
      timeDeltas: Array(10).fill(1000),
    };
    const summary = summarizeProfile(profile);
    expect(summary.busyShare).toBeCloseTo(0.6);
    expect(summary.seconds).toBeCloseTo(0.01);
    expect(summary.top).toEqual([
      { name: "run index.js:10", share: 0.5 },
      { name: "(garbage collector)", share: 0.1 },
    ]);
  });

  test("an empty profile is not busy", () => {
    const summary = summarizeProfile({
      nodes: [{ id: 1, callFrame: frame("(root)") }],
      samples: [],
      timeDeltas: [],
    });
    expect(summary).toEqual({ busyShare: 0, seconds: 0, top: [] });
  });
});
