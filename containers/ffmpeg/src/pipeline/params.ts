/**
 * Job params (decisions.md §4), validated with the operation's schema from the registry (@p6/contract/operations): the very
 * schema the Worker validates requests with and documents, so what the Worker sends on the engine accepts and
 * what it refuses the engine refuses. Absent params (or null) are {}. A failure is VALIDATION_INVALID_ARGUMENT
 * naming the field as "params.<key>" (the first one wrong), before the job takes a slot.
 */
import { OPERATIONS, type OperationParams } from "@p6/contract/operations";
import { invalid, type JobType } from "../protocol.ts";

const field = (path: readonly PropertyKey[]) => ["params", ...path.map(String)].join(".");

export function parseParams<T extends JobType>(type: T, raw: unknown): OperationParams<T> {
  const parsed = OPERATIONS[type].params.safeParse(raw ?? {});
  if (parsed.success) return parsed.data as OperationParams<T>;
  const issue = parsed.error.issues[0]!;
  if (issue.code === "unrecognized_keys") {
    // The Worker's wording (src/http/validation.ts).
    const key = issue.keys[0]!;
    throw invalid(field([...issue.path, key]), `Unknown field "${key}".`);
  }
  throw invalid(field(issue.path), issue.message);
}

export interface Window {
  start: number;
  /** Requested end; may lie past the media's end. */
  end: number;
}

/** A trim's window: `end`, or `start` + `duration` (the schema lets exactly one through). */
export function windowOf(p: {
  start: number;
  end?: number | undefined;
  duration?: number | undefined;
}): Window {
  return { start: p.start, end: p.end ?? p.start + (p.duration ?? 0) };
}

/** Formats seconds for ffmpeg's time options (microsecond precision, no exponent). */
export const sec = (s: number): string => (Math.round(s * 1e6) / 1e6).toFixed(6);

/** Rounds seconds for results. */
export const roundSec = (s: number): number => Math.round(s * 1000) / 1000;
