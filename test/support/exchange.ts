/**
 * One answer the Worker gave a test, as the workerd side records it (test/helpers/answers.ts) and the Node side
 * checks it against the OpenAPI documents (test/support/answers.ts). Plain data: it crosses a fetch as JSON.
 */
export type AnswerBody =
  /** No body at all (HEAD, 204, 304, or zero bytes). */
  | { kind: "none" }
  /** A JSON media type (application/json, application/problem+json, …), parsed. */
  | { kind: "json"; value: unknown }
  /** A JSON media type whose bytes did not parse. */
  | { kind: "unparsable"; text: string }
  /** Any other media type, not empty (only its type is checked). */
  | { kind: "bytes" };

export type Exchange = {
  method: string;
  /** The request's path, without the query. */
  path: string;
  status: number;
  /** Response headers, names in lower case. */
  headers: Record<string, string>;
  body: AnswerBody;
  /** The test that received it, for the report. */
  test?: string;
};

/** The published documents, as GET /v1/openapi.json and GET /admin/v1/openapi.json serve them. */
export type Documents = { public: unknown; admin: unknown };
