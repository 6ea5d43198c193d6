/**
 * The pool behind warm probes and warm commands (pipeline/warm-pool.ts), with `sleep` processes standing in
 * for ffprobe/ffmpeg: one per key, the least recently wanted making room, a process that exited is never
 * handed out and is started again only when it had lived long enough, nothing after close.
 */
import { spawn } from "node:child_process";
import { afterEach, describe, expect, test } from "vitest";
import { type Warm, WarmPool } from "../src/pipeline/warm-pool.ts";
import { processAlive, until } from "./support/engine.ts";

interface Sleeper extends Warm {
  key: string;
  dismissed: boolean;
}

const started: Sleeper[] = [];
const pools: WarmPool<Sleeper>[] = [];
const poolOf = (max: number, minLifetimeMs?: number) => {
  const pool = new WarmPool<Sleeper>(max, minLifetimeMs);
  pools.push(pool);
  return pool;
};
afterEach(() => {
  for (const pool of pools.splice(0)) pool.close();
  for (const s of started.splice(0)) s.child.kill("SIGKILL");
});

function sleeper(key: string): () => Sleeper {
  return () => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    const s: Sleeper = {
      key,
      child,
      exited: new Promise((resolve) => child.once("exit", () => resolve())),
      dismissed: false,
      dismiss: () => {
        s.dismissed = true;
        child.kill("SIGKILL");
      },
    };
    started.push(s);
    return s;
  };
}

describe("WarmPool", () => {
  test("one process per key; take hands it out once", () => {
    const pool = poolOf(2);
    pool.refill("a", sleeper("a"));
    pool.refill("a", sleeper("a"));
    expect(started).toHaveLength(1);
    const a = pool.take("a");
    expect(a?.key).toBe("a");
    expect(a?.dismissed).toBe(false);
    expect(pool.take("a")).toBeUndefined();
    expect(pool.take("b")).toBeUndefined();
    expect(pool.keys()).toEqual([]);
  });

  test("at most max wait, the least recently wanted making room", () => {
    const pool = poolOf(2);
    pool.refill("a", sleeper("a"));
    pool.refill("b", sleeper("b"));
    pool.refill("a", sleeper("a")); // wanted again: now the most recent
    pool.refill("c", sleeper("c"));
    expect(pool.keys()).toEqual(["a", "c"]);
    expect(started.find((s) => s.key === "b")?.dismissed).toBe(true);
    expect(pool.pids()).toEqual(pool.values().map((s) => s.child.pid));
  });

  test("max 0 starts nothing", () => {
    const pool = poolOf(0);
    pool.refill("a", sleeper("a"));
    expect(started).toEqual([]);
  });

  test("a process that exits while waiting is dropped, and started again once it had lived long enough", async () => {
    const restarting = poolOf(2, 0);
    restarting.refill("a", sleeper("a"));
    const first = started[0]!;
    first.child.kill("SIGKILL");
    await until("another process for a", () => restarting.values().some((s) => s !== first));
    expect(first.dismissed).toBe(true);

    const young = poolOf(2, 60_000);
    young.refill("b", sleeper("b"));
    const b = young.values()[0]!;
    b.child.kill("SIGKILL");
    await b.exited;
    await new Promise((r) => setTimeout(r, 50));
    expect(young.keys()).toEqual([]);
    expect(started.filter((s) => s.key === "b")).toHaveLength(1);
  });

  test("a process that has exited is not handed out", async () => {
    const pool = poolOf(1, 60_000);
    pool.refill("a", sleeper("a"));
    const a = started[0]!;
    a.child.kill("SIGKILL");
    await until("the exit to be seen", () => a.child.signalCode !== null);
    expect(pool.take("a")).toBeUndefined();
  });

  test("close stops every waiting process, and nothing starts afterwards", async () => {
    const pool = poolOf(3);
    pool.refill("a", sleeper("a"));
    pool.refill("b", sleeper("b"));
    const pids = pool.pids();
    pool.close();
    expect(pool.keys()).toEqual([]);
    await until("both to exit", () => pids.every((pid) => !processAlive(pid)));
    pool.refill("c", sleeper("c"));
    expect(started).toHaveLength(2);
  });
});
