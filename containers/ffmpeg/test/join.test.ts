/**
 * joinAll (pipeline/join.ts): a job's concurrent branches are all over before its failure is answered. With
 * Promise.all, a watermark aborted by its time budget answered 504 while one of its probes had not yet exited
 * (lifecycle.test.ts in CI: one live process after the answer).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, test } from "vitest";
import { joinAll } from "../src/pipeline/join.ts";

describe("joinAll", () => {
  test("a rejection is thrown only once every other branch has settled", async () => {
    const order: string[] = [];
    const slow = new Promise<number>((r) => setTimeout(r, 100, 2)).then((v) => {
      order.push("slow settled");
      return v;
    });
    await expect(joinAll([Promise.reject(new Error("first")), slow])).rejects.toThrow("first");
    order.push("joined");
    expect(order).toEqual(["slow settled", "joined"]);
  });

  test("a process in another branch has exited when the join rejects", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 300)"]);
    const exited = once(child, "close").then(() => child.exitCode);
    const failed = new Promise((_, reject) => setTimeout(reject, 10, new Error("aborted")));
    await expect(joinAll([failed, exited])).rejects.toThrow("aborted");
    expect(child.exitCode).toBe(0);
  });

  test("the first rejection in time wins; values keep their places", async () => {
    const late = new Promise((_, reject) => setTimeout(reject, 50, new Error("late")));
    const early = new Promise((_, reject) => setTimeout(reject, 5, new Error("early")));
    await expect(joinAll([late, early])).rejects.toThrow("early");
    const [a, b, c] = await joinAll([1, Promise.resolve("two"), null]);
    expect([a, b, c]).toEqual([1, "two", null]);
  });
});
