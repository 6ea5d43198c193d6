/**
 * Small validators for job params (decisions.md §4). Each failure is VALIDATION_INVALID_ARGUMENT naming the
 * field as "params.<key>"; unknown keys are refused, and so is `null` (an optional key is left out, as the
 * Worker's schemas require; test/operations/params-drift.test.ts holds the two sides together).
 */
import { invalid } from "../protocol.ts";

export type RawParams = Record<string, unknown>;

const field = (key: string) => `params.${key}`;

/** The value of `key`, undefined when absent; null is refused. */
function paramValue(params: RawParams, key: string): unknown {
  const value = params[key];
  if (value === null) throw invalid(field(key), `${key} must not be null (leave it out instead)`);
  return value;
}

/** Refuses anything that is not a plain object, and every key not in `allowed`. */
export function readParams(raw: unknown, allowed: readonly string[]): RawParams {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw)) throw invalid("params", "params must be an object");
  const params = raw as RawParams;
  for (const key of Object.keys(params)) {
    if (!allowed.includes(key)) throw invalid(field(key), `unknown parameter "${key}"`);
  }
  return params;
}

interface NumberRule {
  min?: number;
  max?: number;
  /** min is exclusive */
  above?: number;
  integer?: boolean;
}

export function optNumber(params: RawParams, key: string, rule: NumberRule = {}): number | undefined {
  const value = paramValue(params, key);
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw invalid(field(key), `${key} must be a number`);
  }
  if (rule.integer === true && !Number.isInteger(value)) {
    throw invalid(field(key), `${key} must be an integer`);
  }
  if (rule.above !== undefined && value <= rule.above) {
    throw invalid(field(key), `${key} must be greater than ${rule.above}`);
  }
  if (rule.min !== undefined && value < rule.min) {
    throw invalid(field(key), `${key} must be at least ${rule.min}`);
  }
  if (rule.max !== undefined && value > rule.max) {
    throw invalid(field(key), `${key} must be at most ${rule.max}`);
  }
  return value;
}

export function reqNumber(params: RawParams, key: string, rule: NumberRule = {}): number {
  const value = optNumber(params, key, rule);
  if (value === undefined) throw invalid(field(key), `${key} is required`);
  return value;
}

export function optEnum<T extends string>(
  params: RawParams,
  key: string,
  values: readonly T[],
): T | undefined {
  const value = paramValue(params, key);
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !(values as readonly string[]).includes(value)) {
    throw invalid(field(key), `${key} must be one of: ${values.join(", ")}`);
  }
  return value as T;
}

export function optString(params: RawParams, key: string): string | undefined {
  const value = paramValue(params, key);
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw invalid(field(key), `${key} must be a string`);
  return value;
}

/** Refuses `key` when present: it does not apply with the other params given. */
export function forbid(params: RawParams, key: string, why: string): void {
  if (params[key] !== undefined) throw invalid(field(key), `${key} ${why}`);
}

/** The longest time any param may name: a week, as the Worker's `Seconds` (src/operations/schemas.ts). */
const MAX_SECONDS = 86_400 * 7;

/** A time in seconds, 0 up to a week (or just above 0 with `positive`). */
export const SECONDS = { min: 0, max: MAX_SECONDS } as const;
const POSITIVE_SECONDS = { above: 0, max: MAX_SECONDS } as const;

export interface Window {
  start: number;
  /** Requested end; may lie past the media's end. */
  end: number;
}

/** `start` (required, ≥ 0) and exactly one of `end` (> start) or `duration` (> 0). */
export function readWindow(params: RawParams): Window {
  const start = reqNumber(params, "start", SECONDS);
  const end = optNumber(params, "end", SECONDS);
  const duration = optNumber(params, "duration", POSITIVE_SECONDS);
  if (end !== undefined && duration !== undefined) {
    throw invalid(field("duration"), "give either end or duration, not both");
  }
  if (end === undefined && duration === undefined) throw invalid(field("end"), "end or duration is required");
  if (end !== undefined && end <= start) throw invalid(field("end"), "end must be greater than start");
  return { start, end: end ?? start + (duration ?? 0) };
}

/** Formats seconds for ffmpeg's time options (microsecond precision, no exponent). */
export const sec = (s: number): string => (Math.round(s * 1e6) / 1e6).toFixed(6);

/** Rounds seconds for results. */
export const roundSec = (s: number): number => Math.round(s * 1000) / 1000;

/** A member of an object param: a #RRGGBB[AA] colour, or a number within bounds. */
type MemberRule = "color" | (NumberRule & { optional?: boolean });

/**
 * An optional object param whose members follow `rules` (all required unless marked optional; unknown
 * members refused), as the Worker's strict zod objects; failures name "params.<key>.<member>".
 */
export function optObject(
  params: RawParams,
  key: string,
  rules: Record<string, MemberRule>,
): RawParams | undefined {
  const value = paramValue(params, key);
  if (value === undefined) return undefined;
  if (typeof value !== "object" || Array.isArray(value))
    throw invalid(field(key), `${key} must be an object`);
  const object = value as RawParams;
  for (const member of Object.keys(object)) {
    if (!(member in rules)) throw invalid(field(`${key}.${member}`), `unknown member "${member}" of ${key}`);
  }
  for (const [member, rule] of Object.entries(rules)) {
    const name = `${key}.${member}`;
    if (rule === "color") {
      const color = optString({ [name]: object[member] }, name);
      if (color === undefined || !/^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/.test(color))
        throw invalid(field(name), `${name} must be #RRGGBB or #RRGGBBAA`);
      continue;
    }
    const n = optNumber({ [name]: object[member] }, name, rule);
    if (n === undefined && rule.optional !== true) throw invalid(field(name), `${name} is required`);
  }
  return object;
}
