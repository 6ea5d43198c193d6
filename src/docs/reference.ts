import { curlExample } from "./curl";
import {
  type Document,
  type Header,
  METHODS,
  type Operation,
  type Parameter,
  type PathItem,
  type Response,
  resolveRef,
} from "./openapi";
import { describeSchema, type SchemaView } from "./schema";

export type ParameterView = {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  schema: SchemaView;
};
export type HeaderView = { name: string; required: boolean; description?: string; type: string };
export type ContentView = { contentType: string; schema?: SchemaView };
export type ResponseView = {
  status: string;
  description?: string;
  headers: HeaderView[];
  content: ContentView[];
  /** Error codes named by the response's examples (problem+json responses). */
  errorCodes: string[];
  problem: boolean;
};
export type OperationView = {
  anchor: string;
  method: string;
  path: string;
  operationId?: string;
  summary?: string;
  description?: string;
  authenticated: boolean;
  parameters: ParameterView[];
  body?: { required: boolean; description?: string; content: ContentView[] };
  responses: ResponseView[];
  curl?: string;
};
export type TagView = { name: string; description?: string; operations: OperationView[] };
export type Reference = {
  title: string;
  version: string;
  description?: string;
  baseUrl: string;
  securitySchemes: { name: string; scheme: string; format?: string; description?: string }[];
  tags: TagView[];
  webhooks: OperationView[];
};

const anchorOf = (...parts: string[]) =>
  parts
    .join("-")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");

function contentViews(
  doc: Document,
  content: Record<string, { schema?: object }> | undefined,
): ContentView[] {
  return Object.entries(content ?? {}).map(([contentType, media]) => ({
    contentType,
    schema: media.schema ? describeSchema(doc, media.schema) : undefined,
  }));
}

function responseView(doc: Document, status: string, input: Response | { $ref: string }): ResponseView {
  const response = resolveRef<Response>(doc, input);
  const problem = Object.keys(response.content ?? {}).some((type) => type.includes("problem+json"));
  return {
    status,
    description: response.description,
    headers: Object.entries(response.headers ?? {}).map(([name, value]) => {
      const header = resolveRef<Header>(doc, value);
      return {
        name,
        required: header.required ?? false,
        description: header.description,
        type: header.schema ? describeSchema(doc, header.schema).type : "string",
      };
    }),
    content: contentViews(doc, response.content),
    errorCodes: Object.values(response.content ?? {}).flatMap((media) => Object.keys(media.examples ?? {})),
    problem,
  };
}

function operationView(
  doc: Document,
  baseUrl: string,
  path: string,
  method: string,
  item: PathItem,
  operation: Operation,
  webhook: boolean,
): OperationView {
  const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((value) =>
    resolveRef<Parameter>(doc, value),
  );
  const security = operation.security ?? doc.security ?? [];
  const authenticated = security.some((requirement) => Object.keys(requirement).length > 0);
  return {
    anchor: anchorOf(webhook ? "webhook" : "op", operation.operationId ?? `${method} ${path}`),
    method: method.toUpperCase(),
    path,
    operationId: operation.operationId,
    summary: operation.summary,
    description: operation.description,
    authenticated: !webhook && authenticated,
    parameters: parameters.map((parameter) => ({
      name: parameter.name,
      in: parameter.in,
      required: parameter.required ?? false,
      description: parameter.description,
      schema: describeSchema(doc, parameter.schema ?? {}),
    })),
    body: operation.requestBody && {
      required: operation.requestBody.required ?? false,
      description: operation.requestBody.description,
      content: contentViews(doc, operation.requestBody.content),
    },
    responses: Object.entries(operation.responses ?? {}).map(([status, response]) =>
      responseView(doc, status, response),
    ),
    curl: webhook
      ? undefined
      : curlExample(doc, { baseUrl, method, path, parameters, operation, authenticated }),
  };
}

function operationsOf(doc: Document, baseUrl: string, items: Document["paths"], webhook: boolean) {
  return Object.entries(items ?? {}).flatMap(([path, item]) =>
    item
      ? METHODS.flatMap((method) => {
          const operation = item[method];
          return operation
            ? [{ operation, view: operationView(doc, baseUrl, path, method, item, operation, webhook) }]
            : [];
        })
      : [],
  );
}

/** The reference page's model: every operation of the document grouped by tag, and every webhook. */
export function referenceModel(doc: Document): Reference {
  const baseUrl = doc.servers?.[0]?.url ?? "";
  const operations = operationsOf(doc, baseUrl, doc.paths, false);
  const tagNames = [
    ...new Set([
      ...(doc.tags ?? []).map((tag) => tag.name),
      ...operations.map(({ operation }) => operation.tags?.[0] ?? "Other"),
    ]),
  ];
  const tags = tagNames
    .map((name) => ({
      name,
      description: doc.tags?.find((tag) => tag.name === name)?.description,
      operations: operations
        .filter(({ operation }) => (operation.tags?.[0] ?? "Other") === name)
        .map(({ view }) => view),
    }))
    .filter((tag) => tag.operations.length > 0);
  return {
    title: doc.info.title,
    version: doc.info.version,
    description: doc.info.description,
    baseUrl,
    securitySchemes: Object.entries(doc.components?.securitySchemes ?? {}).map(([name, scheme]) => ({
      name,
      scheme: scheme.scheme ?? scheme.type,
      format: scheme.bearerFormat,
      description: scheme.description,
    })),
    tags,
    webhooks: operationsOf(doc, baseUrl, doc.webhooks, true).map(({ view }) => view),
  };
}
