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

const text = (example: string) => ({ type: "string" as const, example });

/**
 * Every response header the service sends, defined once (components.headers) and referenced by the responses
 * that carry it: the error responses below, the routes for their own headers, and the document builder for
 * the headers middleware adds to every response (routes/docs/openapi.ts).
 */
export const RESPONSE_HEADERS = {
  "X-Request-Id": {
    description:
      "The request's ULID, sent on every response (the problem body's request_id too); quote it when asking for support.",
    required: true,
    schema: text("01JD5Z8X4QK3M7R2T9V6W1Y0AB"),
  },
  RateLimit: {
    description:
      'The key\'s remaining quota (IETF RateLimit header fields, structured form): `"default";r=<remaining requests>;t=<seconds until the window resets>`. Sent on every response to a request whose API key was recognised.',
    required: true,
    schema: text('"default";r=59;t=60'),
  },
  "RateLimit-Policy": {
    description:
      'The key\'s quota policy: `"default";q=<requests>;w=60` (requests per 60-second window; 60 unless the operator set another limit for the key).',
    required: true,
    schema: text('"default";q=60;w=60'),
  },
  "Retry-After": {
    description:
      "Seconds to wait before retrying. On 429 always; on 503 when the media engine is at capacity, starting or unreachable, or the account already uses its share of it; on 409 when the conflict is an Idempotency-Key whose first request is still in progress.",
    schema: { type: "integer" as const, minimum: 0, example: 1 },
  },
  "Cache-Control": {
    description:
      "Always `no-store` on the API's and the admin API's answers, errors included: no cache may keep an account's data or one client's answer for another.",
    required: true,
    schema: { type: "string" as const, enum: ["no-store"] },
  },
  "WWW-Authenticate": {
    description: "Always `Bearer`: the only accepted scheme.",
    required: true,
    schema: text("Bearer"),
  },
  Allow: {
    description: "The methods the path supports, comma-separated.",
    required: true,
    schema: text("GET, HEAD"),
  },
  Location: {
    description: "The new task's URL.",
    required: true,
    schema: text("https://api.example.com/v1/tasks/01JD5Z8X4QK3M7R2T9V6W1Y0AB"),
  },
  "Content-Range": {
    description:
      "On 206, the bytes sent and the file's size: `bytes <first>-<last>/<size>`; on 416, the size alone: `bytes */<size>`.",
    required: true,
    schema: text("bytes 0-1023/1048576"),
  },
  "Idempotent-Replayed": {
    description:
      "`true` when this response is the stored answer to an earlier request with the same idempotency key (nothing ran or was charged again); absent otherwise.",
    schema: { type: "string" as const, enum: ["true"] },
  },
  "Preference-Applied": {
    description:
      "`wait=<seconds>` when the request's `Prefer: wait` was honoured, with the seconds honoured (60 when more were asked): the task in the body has ended, or that many seconds passed first (RFC 7240). Absent when the request stated no wait to honour.",
    schema: text("wait=30"),
  },
  "Server-Timing": {
    description:
      "Only when the request sent X-Debug-Timing: durations in ms of auth, engine (the whole round trip to the media engine, its queue included), fetch, process, store and total.",
    schema: text(
      "auth;dur=2.1, engine;dur=165.4, fetch;dur=40.3, process;dur=120.8, store;dur=8.0, total;dur=181.2",
    ),
  },
};

export type ResponseHeader = keyof typeof RESPONSE_HEADERS;

/** References to shared response headers, for a response's `headers`. */
export function headers(...names: ResponseHeader[]) {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

/** A response with more shared headers: those a route adds to a status on its own (a replayed failure). */
export function withHeaders<R extends object>(response: R, ...names: ResponseHeader[]): R {
  const current = (response as { headers?: Record<string, unknown> }).headers;
  return { ...response, headers: { ...current, ...headers(...names) } };
}

const STATUS_CODES: Record<number, ErrorCode[]> = {};
for (const [code, row] of Object.entries(ERROR_CODES) as [ErrorCode, (typeof ERROR_CODES)[ErrorCode]][]) {
  STATUS_CODES[row.status] = [...(STATUS_CODES[row.status] ?? []), code];
}

/** Headers an error response carries because of its status (those of every response are added by the builder). */
const STATUS_HEADERS: Partial<Record<number, ResponseHeader[]>> = {
  401: ["WWW-Authenticate"],
  405: ["Allow"],
  409: ["Retry-After"],
  416: ["Content-Range"],
  429: ["Retry-After"],
  503: ["Retry-After"],
};

/** What each status means beyond its code's title, where the title alone does not say it. */
const STATUS_NOTES: Partial<Record<number, string>> = {
  405: "The path exists, but not with this method; Allow lists the methods it supports.",
  413: "The request body exceeds 1 MiB.",
  415: "The request body is not application/json (or, for an operation, the source's media type is unsupported).",
  416: "The Range header starts past the end of the file; Content-Range gives the file's size.",
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

/** A status's description and headers, shared by the error responses with a body and those without. */
function errorResponse(status: number) {
  const codes = STATUS_CODES[status] ?? [];
  const names = codes.map((code) => `${code}: ${ERROR_CODES[code].title}.`).join(" ");
  return {
    codes,
    description: [names, STATUS_NOTES[status]].filter(Boolean).join(" "),
    ...(STATUS_HEADERS[status] ? { headers: headers(...STATUS_HEADERS[status]) } : {}),
  };
}

/** The shared error responses of a route, so the OpenAPI document and the handlers never drift. */
export function errorResponses<const S extends readonly number[]>(...statuses: S) {
  const responses: Record<string, unknown> = {};
  for (const status of statuses) {
    const { codes, ...response } = errorResponse(status);
    responses[String(status)] = {
      ...response,
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

/**
 * The error responses of a HEAD operation: the same statuses, descriptions and headers, and no content. A HEAD
 * answer never has a body (RFC 9110 §9.3.2), so declaring the problem+json one would type a generated client's
 * `error` as a problem that is `undefined` at run time.
 */
export function headErrorResponses<const S extends readonly number[]>(...statuses: S) {
  const responses: Record<string, unknown> = {};
  for (const status of statuses) {
    const { codes: _, description, ...rest } = errorResponse(status);
    responses[String(status)] = { description: `${description} No body (HEAD).`, ...rest };
  }
  return responses as { [K in S[number] as `${K}`]: { description: string } };
}
