/**
 * bench:load's task tally. The bench knows a task two ways: the 201 answers it recorded, and the tasks its
 * accounts list at the end. They can differ: a creation whose answer the load generator did not record (its
 * client timed out, or the answer came after the run stopped) still created a task, which the listing shows.
 * Counting the listing's ended tasks against the recorded ones printed "398 succeeded, -1 not ended" for 397
 * recorded; every task is therefore counted once, over both sources.
 */
export type TaskState = { status: string; code?: string };

export interface TaskTally {
  /** Tasks known either way (each once). */
  known: number;
  /** Creations whose 201 the bench recorded. */
  recorded: number;
  /** Tasks the listing showed but whose creation answer the bench did not record. */
  unrecorded: number;
  succeeded: number;
  /** Known tasks not (yet) in a final state, or not listed at all. */
  notEnded: number;
  /** Ended tasks other than succeeded, by "status CODE". */
  failedByCause: Record<string, number>;
  /** Tasks that ended for capacity (SERVICE_UNAVAILABLE or INTERNAL): the bench's goal is none. */
  capacityFailed: number;
}

export const FINAL_STATES: ReadonlySet<string> = new Set(["succeeded", "failed", "canceled"]);

/** Tallies `recorded` task ids (201 answers) and `listed` tasks (id → latest state) without double counting. */
export function tallyTasks(recorded: readonly string[], listed: ReadonlyMap<string, TaskState>): TaskTally {
  const ids = new Set([...recorded, ...listed.keys()]);
  const recordedSet = new Set(recorded);
  const tally: TaskTally = {
    known: ids.size,
    recorded: recordedSet.size,
    unrecorded: 0,
    succeeded: 0,
    notEnded: 0,
    failedByCause: {},
    capacityFailed: 0,
  };
  for (const id of ids) {
    if (!recordedSet.has(id)) tally.unrecorded++;
    const state = listed.get(id);
    if (state === undefined || !FINAL_STATES.has(state.status)) {
      tally.notEnded++;
      continue;
    }
    if (state.status === "succeeded") {
      tally.succeeded++;
      continue;
    }
    const cause = `${state.status} ${state.code ?? ""}`.trim();
    tally.failedByCause[cause] = (tally.failedByCause[cause] ?? 0) + 1;
    if (state.code === "SERVICE_UNAVAILABLE" || state.code === "INTERNAL") tally.capacityFailed++;
  }
  return tally;
}
