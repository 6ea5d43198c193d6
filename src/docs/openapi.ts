/**
 * The parts of an OpenAPI 3.1 document the reference reads, typed loosely on purpose: the renderer shows
 * whatever the document holds, so unknown keywords pass through untouched.
 */
export type Schema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  description?: string;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  discriminator?: { propertyName: string; mapping?: Record<string, string> };
  title?: string;
};

export type Parameter = {
  name: string;
  in: "query" | "header" | "path" | "cookie";
  required?: boolean;
  description?: string;
  schema?: Schema;
  example?: unknown;
};

export type Header = { description?: string; required?: boolean; schema?: Schema };

export type MediaType = {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
};

export type Response = {
  description?: string;
  headers?: Record<string, Header | { $ref: string }>;
  content?: Record<string, MediaType>;
};

export type Operation = {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { required?: boolean; description?: string; content?: Record<string, MediaType> };
  responses?: Record<string, Response | { $ref: string }>;
  security?: Record<string, string[]>[];
  deprecated?: boolean;
};

export type PathItem = Partial<Record<(typeof METHODS)[number], Operation>> & {
  parameters?: (Parameter | { $ref: string })[];
};

export type Document = {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: { url: string }[];
  security?: Record<string, string[]>[];
  tags?: { name: string; description?: string }[];
  paths?: Record<string, PathItem | undefined>;
  webhooks?: Record<string, PathItem | undefined>;
  components?: {
    schemas?: Record<string, Schema>;
    parameters?: Record<string, Parameter>;
    headers?: Record<string, Header>;
    responses?: Record<string, Response>;
    securitySchemes?: Record<
      string,
      { type: string; scheme?: string; bearerFormat?: string; description?: string }
    >;
  };
};

export const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** Follows a local `#/components/...` reference (one level; callers loop for chains). */
export function resolveRef<T>(doc: Document, value: T | { $ref: string }): T {
  if (!value || typeof value !== "object" || !("$ref" in value) || typeof value.$ref !== "string") {
    return value as T;
  }
  let node: unknown = doc;
  for (const part of value.$ref.replace(/^#\//, "").split("/")) {
    node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return (node ?? {}) as T;
}
