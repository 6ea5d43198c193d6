import type { z } from "zod";
import { ApiError, type FieldError } from "../errors/api-error";

type Target = "json" | "query" | "param" | "header" | "form" | "cookie";

/**
 * A header name as HTTP specifications spell it: idempotency-key → Idempotency-Key, if-none-match →
 * If-None-Match. Hono hands header validators lower-case names; errors and the OpenAPI document use these.
 */
export function canonicalHeaderName(name: string): string {
  return name.replace(/(^|-)(\w)/g, (_m, dash: string, ch: string) => dash + ch.toUpperCase());
}

/** Field names as the client wrote them: body fields bare (source_url, params.start, params.steps[1].use), query too. */
function fieldName(target: Target, path: PropertyKey[]) {
  const name = path
    .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
    .join("")
    .replace(/^\./, "");
  if (target === "json" || target === "query" || target === "param") return name || "body";
  if (target === "header") return canonicalHeaderName(name);
  return name ? `${target}.${name}` : target;
}

export function fieldErrors(error: z.ZodError, target: Target): FieldError[] {
  return error.issues.flatMap((issue): FieldError[] => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        code: "unrecognized_key",
        field: fieldName(target, [...issue.path, key]),
        message: `Unknown field "${key}".`,
      }));
    }
    return [{ code: issue.code, field: fieldName(target, issue.path), message: issue.message }];
  });
}

export function validationError(errors: FieldError[]) {
  const fields = [...new Set(errors.map((e) => e.field))].join(", ");
  return new ApiError("VALIDATION_INVALID_ARGUMENT", `Invalid or missing arguments: ${fields}.`, { errors });
}

/** The OpenAPIHono defaultHook: every zod failure becomes the documented 400 with errors[]. */
export const validationHook = (
  result: { success: true } | { success: false; error: z.ZodError; target: Target },
): undefined => {
  if (!result.success) throw validationError(fieldErrors(result.error, result.target));
};
