import type { z } from "@hono/zod-openapi";
import type { FieldErrors } from "./views/components";

type Form = Record<string, string | string[]>;

/** A single text field ("" when absent or sent twice). */
export function text(form: Form, name: string) {
  const value = form[name];
  return typeof value === "string" ? value : "";
}

/** A checkbox group: every checked value. */
export function list(form: Form, name: string) {
  const value = form[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** An optional whole number: empty → undefined; anything else is passed on for the schema to judge. */
export function optionalInt(form: Form, name: string): number | string | undefined {
  const value = text(form, name)
    .trim()
    .replace(/[,_\s]/g, "");
  if (value === "") return undefined;
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

/**
 * Validates a form against the admin API's own schema (one set of rules for both), reporting each invalid field
 * with the page's readable message for it rather than the schema's technical one.
 */
export function validate<S extends z.ZodType>(
  schema: S,
  input: unknown,
  messages: Record<string, string>,
): Validated<z.output<S>> {
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const field = String(issue.path[0] ?? "form");
    errors[field] ??= messages[field] ?? issue.message;
  }
  return { ok: false, errors };
}
