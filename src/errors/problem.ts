import type { ApiError } from "./api-error";
import { ERROR_CODES } from "./codes";

export const PROBLEM_JSON = "application/problem+json";

export type ProblemContext = { typeBase: string; instance: string; requestId: string };

/** The type URI base: ERROR_TYPE_BASE when configured, else `<request origin>/errors`. */
export function errorTypeBase(configured: string | undefined, requestUrl: string) {
  return configured ?? `${new URL(requestUrl).origin}/errors`;
}

/** RFC 9457 body of an ApiError. AUTH_INVALID_TOKEN has exactly four fields, as interface.md gives it. */
export function problemBody(error: ApiError, ctx: ProblemContext): Record<string, unknown> {
  const row = ERROR_CODES[error.code];
  const type = `${ctx.typeBase}/${row.suffix}`;
  if (error.code === "AUTH_INVALID_TOKEN") {
    return { type, title: row.title, status: row.status, code: error.code };
  }
  return {
    type,
    title: row.title,
    status: row.status,
    code: error.code,
    detail: error.detail,
    instance: ctx.instance,
    request_id: ctx.requestId,
    ...(error.errors ? { errors: error.errors } : {}),
  };
}
