import { z } from "@hono/zod-openapi";
import { DEFAULT_DETAIL, ERROR_CODES, type ErrorCode } from "./codes";

export const FieldErrorSchema = z
  .object({
    code: z.string().openapi({ example: "invalid_type" }),
    field: z.string().openapi({ example: "source_url" }),
    message: z.string().openapi({ example: "Required" }),
  })
  .openapi("FieldError");

export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: "https://api.example.com/errors/validation" }),
    title: z.string().openapi({ example: "Validation Failed" }),
    status: z.number().int().openapi({ example: 400 }),
    code: z.string().openapi({ example: "VALIDATION_INVALID_ARGUMENT" }),
    detail: z.string().optional().openapi({ example: "The request has invalid or missing arguments." }),
    instance: z.string().optional().openapi({ example: "/v1/video/probe" }),
    request_id: z.string().optional().openapi({ example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" }),
    errors: z.array(FieldErrorSchema).optional(),
  })
  .openapi("Problem", { description: "RFC 9457 problem details (application/problem+json)." });

const STATUS_CODES: Record<number, ErrorCode[]> = {};
for (const [code, row] of Object.entries(ERROR_CODES) as [ErrorCode, (typeof ERROR_CODES)[ErrorCode]][]) {
  STATUS_CODES[row.status] = [...(STATUS_CODES[row.status] ?? []), code];
}

const HEADERS: Record<number, Record<string, { description: string; schema: { type: "string" } }>> = {
  401: { "WWW-Authenticate": { description: "Always `Bearer`.", schema: { type: "string" } } },
  503: {
    "Retry-After": {
      description:
        "Seconds to wait before retrying: the media engine is at capacity, starting or unreachable, or the account already uses its share of it.",
      schema: { type: "string" },
    },
  },
  405: { Allow: { description: "The methods the resource supports.", schema: { type: "string" } } },
  429: {
    "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "string" } },
    RateLimit: {
      description: 'Remaining quota: `"default";r=<remaining>;t=<seconds>`.',
      schema: { type: "string" },
    },
    "RateLimit-Policy": {
      description: 'The quota policy: `"default";q=60;w=60`.',
      schema: { type: "string" },
    },
  },
};

function example(code: ErrorCode) {
  const row = ERROR_CODES[code];
  if (code === "AUTH_INVALID_TOKEN") {
    return {
      type: "https://api.example.com/errors/unauthorized",
      title: row.title,
      status: row.status,
      code,
    };
  }
  return {
    type: `https://api.example.com/errors/${row.suffix}`,
    title: row.title,
    status: row.status,
    code,
    detail: DEFAULT_DETAIL[code],
    instance: "/v1/tasks",
    request_id: "01JD5Z8X4QK3M7R2T9V6W1Y0AB",
    ...(code === "VALIDATION_INVALID_ARGUMENT"
      ? { errors: [{ code: "invalid_type", field: "source_url", message: "Required" }] }
      : {}),
  };
}

/** The shared error responses of a route, so the OpenAPI document and the handlers never drift. */
export function errorResponses<const S extends readonly number[]>(...statuses: S) {
  const responses: Record<string, unknown> = {};
  for (const status of statuses) {
    const codes = STATUS_CODES[status] ?? [];
    responses[String(status)] = {
      description: codes.map((code) => `${code}: ${ERROR_CODES[code].title}`).join("; "),
      headers: HEADERS[status],
      content: {
        "application/problem+json": {
          schema: ProblemSchema,
          examples: Object.fromEntries(codes.map((code) => [code, { value: example(code) }])),
        },
      },
    };
  }
  return responses as { [K in S[number] as `${K}`]: { description: string; content: never } };
}
