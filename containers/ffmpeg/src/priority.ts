/**
 * CPU priority of a job's processes. Tasks (low-priority jobs, pool.ts) run their ffmpeg and ffprobe at a
 * higher nice value than synchronous calls, so that when the cores are saturated by task encodes a synchronous
 * call's processes (and the Worker beside the engine) get the CPU first. The nice value follows the job through
 * its async calls (AsyncLocalStorage), so the pipeline needs no extra argument: ffmpeg.ts lowers every process
 * it starts for a job, and every warm process when a job adopts it (warm processes start at the engine's own
 * priority, since the job that takes them is not known yet; a raised nice value cannot be lowered again
 * without privileges).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import os from "node:os";

const niceness = new AsyncLocalStorage<number>();

/** Runs `fn` so that the processes its job starts run `nice` steps below the engine's priority (0: unchanged). */
export function withNiceness<T>(nice: number, fn: () => T): T {
  return nice > 0 ? niceness.run(nice, fn) : fn();
}

/** The nice increment of the job running now (0 outside any job or for a synchronous one). */
export function currentNiceness(): number {
  return niceness.getStore() ?? 0;
}

/**
 * Lowers the CPU priority of process `pid` by the current job's increment (capped at 19). Best effort: a
 * process that already exited, or a system that refuses, leaves it as it was.
 */
export function lowerPriority(pid: number | undefined): void {
  const nice = currentNiceness();
  if (nice <= 0 || pid === undefined) return;
  try {
    os.setPriority(pid, Math.min(19, os.getPriority(pid) + nice));
  } catch {
    // ESRCH (already gone) or EACCES: the process keeps its priority.
  }
}
