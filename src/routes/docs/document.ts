import { headers } from "../../errors/openapi";
import { canonicalHeaderName } from "../../http/validation";

/**
 * Passes over the generated OpenAPI document (plain JSON) for what holds across routes rather than in one
 * route definition: headers that middleware adds to every response, request defaults written for generated
 * clients, and each published document carrying only the components it uses.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

function* operations(doc: Json, parts: ("paths" | "webhooks")[] = ["paths", "webhooks"]): Generator<Json> {
  for (const container of parts.map((part) => doc[part])) {
    if (!isObject(container)) continue;
    for (const item of Object.values(container)) {
      if (!isObject(item)) continue;
      for (const method of METHODS) if (isObject(item[method])) yield item[method];
    }
  }
}

/**
 * X-Request-Id on every response (the first middleware sets it); RateLimit and RateLimit-Policy on every
 * response of an API-key operation except 401, where no key was recognised (the key's gate sets them before
 * anything else can answer); Cache-Control: no-store on every API and admin API answer. Webhook deliveries are requests we send, not responses: left alone.
 */
export function declareCommonHeaders(document: object) {
  const doc = document as Json;
  const paths = isObject(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    // src/http/security-headers.ts: every answer under /v1/ and /admin/v1/ but the public document.
    const noStore = /^\/(admin\/)?v1\//.test(path) && path !== "/v1/openapi.json";
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation) || !isObject(operation.responses)) continue;
      const security = (operation.security ?? doc.security) as Json[] | undefined;
      const withKey = security?.some((requirement) => "ApiKey" in requirement) ?? false;
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!isObject(response)) continue;
        const common = {
          ...(withKey && status !== "401"
            ? headers("X-Request-Id", "RateLimit", "RateLimit-Policy")
            : headers("X-Request-Id")),
          ...(noStore ? headers("Cache-Control") : {}),
        };
        response.headers = { ...common, ...(isObject(response.headers) ? response.headers : {}) };
      }
    }
  }
}

/**
 * Moves `default` out of the schemas that request bodies use, into their descriptions. A JSON Schema default
 * is what the service assumes when the field is absent, but client generators (openapi-typescript's
 * defaultNonNullable, on by default) type a component property that has a default as always present, which
 * would force every optional parameter into every call. Response schemas keep theirs.
 */
export function describeRequestDefaults(document: object) {
  const doc = document as Json;
  const schemas = isObject(doc.components) && isObject(doc.components.schemas) ? doc.components.schemas : {};
  const seen = new Set<unknown>();
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isObject(node) || seen.has(node)) return;
    seen.add(node);
    if (typeof node.$ref === "string" && node.$ref.startsWith("#/components/schemas/")) {
      visit(schemas[node.$ref.slice("#/components/schemas/".length)]);
    }
    // A required property's default is never used (a zod prefault whose value fails validation): not described.
    if (Array.isArray(node.required) && isObject(node.properties)) {
      for (const name of node.required) {
        const property = node.properties[name];
        if (isObject(property)) delete property.default;
      }
    }
    if ("default" in node && ("type" in node || "$ref" in node || "properties" in node || "enum" in node)) {
      const description = typeof node.description === "string" ? node.description : "";
      if (!/default/i.test(description)) {
        const said = `Default: \`${JSON.stringify(node.default)}\`.`;
        node.description = description ? `${description} ${said}` : said;
      }
      delete node.default;
    }
    for (const [key, value] of Object.entries(node))
      if (key !== "example" && key !== "examples") visit(value);
  };
  // Webhook bodies are what the service sends (a Task), like a response: they keep theirs.
  for (const operation of operations(doc, ["paths"])) {
    const body = operation.requestBody;
    if (isObject(body)) visit(body.content);
  }
}

/** The `#/components/<kind>/<name>` references reachable from the given roots, following components. */
function reachable(doc: Json, roots: unknown[]) {
  const components = isObject(doc.components) ? doc.components : {};
  const found = new Set<string>();
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isObject(node)) return;
    const ref = node.$ref;
    if (typeof ref === "string" && ref.startsWith("#/components/") && !found.has(ref)) {
      found.add(ref);
      const [, , kind, name] = ref.split("/");
      const group = components[kind!];
      if (isObject(group)) visit(group[name!]);
    }
    for (const value of Object.values(node)) visit(value);
  };
  roots.forEach(visit);
  return found;
}

/** Keeps the components the document's paths, webhooks and security requirements use; drops the rest. */
export function pruneComponents<D extends object>(document: D): D {
  const doc = document as Json;
  const used = reachable(doc, [doc.paths, doc.webhooks]);
  const schemes = new Set<string>();
  for (const requirement of (doc.security as Json[] | undefined) ?? [])
    for (const name of Object.keys(requirement)) schemes.add(name);
  for (const operation of operations(doc)) {
    for (const requirement of (operation.security as Json[] | undefined) ?? []) {
      for (const name of Object.keys(requirement)) schemes.add(name);
    }
  }
  const components = isObject(doc.components) ? doc.components : {};
  const kept: Json = {};
  for (const [kind, group] of Object.entries(components)) {
    if (!isObject(group)) continue;
    const names = Object.keys(group).filter((name) =>
      kind === "securitySchemes" ? schemes.has(name) : used.has(`#/components/${kind}/${name}`),
    );
    if (names.length > 0) kept[kind] = Object.fromEntries(names.map((name) => [name, group[name]]));
  }
  return { ...doc, components: kept } as D;
}

/**
 * Request header parameters under their canonical names (Idempotency-Key, Prefer, If-None-Match). The route
 * schemas name them in lower case because Hono validates headers by their lower-case names; a generated client
 * types the name the document gives, and the spelling every doc and example uses is the canonical one.
 */
export function canonicalHeaderParameters(document: object) {
  for (const operation of operations(document as Json, ["paths"])) {
    if (!Array.isArray(operation.parameters)) continue;
    for (const parameter of operation.parameters) {
      if (isObject(parameter) && parameter.in === "header" && typeof parameter.name === "string") {
        parameter.name = canonicalHeaderName(parameter.name);
      }
    }
  }
}
