/** bench:load's task tally (bench/lib/tally.ts): every task counted once, recorded or only listed. */
import { describe, expect, test } from "vitest";
import { type TaskState, tallyTasks } from "../../bench/lib/tally.ts";

const listed = (entries: [string, TaskState][]) => new Map(entries);

describe("tallyTasks", () => {
  test("a task the listing shows but whose 201 was not recorded is counted once, not as -1 not ended", () => {
    // The run that printed "398 succeeded, -1 not ended": 397 recorded, 398 listed, all succeeded.
    const recorded = Array.from({ length: 397 }, (_, i) => `t${i}`);
    const all = listed([...recorded, "t-late"].map((id) => [id, { status: "succeeded" }]));
    expect(tallyTasks(recorded, all)).toEqual({
      known: 398,
      recorded: 397,
      unrecorded: 1,
      succeeded: 398,
      notEnded: 0,
      failedByCause: {},
      capacityFailed: 0,
    });
  });

  test("recorded tasks not listed yet, or still running, are not ended", () => {
    const tally = tallyTasks(
      ["a", "b", "c"],
      listed([
        ["a", { status: "succeeded" }],
        ["b", { status: "queued" }],
      ]),
    );
    expect(tally).toMatchObject({ known: 3, succeeded: 1, notEnded: 2, unrecorded: 0 });
  });

  test("failures by cause; capacity failures are SERVICE_UNAVAILABLE and INTERNAL", () => {
    const tally = tallyTasks(
      ["a", "b", "c", "d"],
      listed([
        ["a", { status: "failed", code: "SERVICE_UNAVAILABLE" }],
        ["b", { status: "failed", code: "SOURCE_UNREACHABLE" }],
        ["c", { status: "failed", code: "INTERNAL" }],
        ["d", { status: "canceled" }],
      ]),
    );
    expect(tally.failedByCause).toEqual({
      "failed SERVICE_UNAVAILABLE": 1,
      "failed SOURCE_UNREACHABLE": 1,
      "failed INTERNAL": 1,
      canceled: 1,
    });
    expect(tally).toMatchObject({ capacityFailed: 2, succeeded: 0, notEnded: 0 });
  });

  test("an id recorded twice counts once", () => {
    expect(tallyTasks(["a", "a"], listed([["a", { status: "succeeded" }]]))).toMatchObject({
      known: 1,
      recorded: 1,
      succeeded: 1,
    });
  });
});
