import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { Documents, Exchange } from "./exchange.ts";

/**
 * The answer validator: every answer the Worker test suite receives, checked against the OpenAPI documents the
 * Worker serves (issue 41: a drift between the document and the server fails `npm test`). It runs in Node
 * because workerd cannot run Ajv's generated code (no eval); test/helpers/answers.ts records the answers and
 * sends them here, once per test file.
 *
 * The schemas are checked by Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1), maintained and already the
 * project's. The mapping of an HTTP answer onto its operation, status, headers and media type is ours, on
 * purpose: the maintained OpenAPI response validators check `application/json` bodies only (openapi-backend
 * skips application/problem+json, every error this API sends) or target OpenAPI 3.0 (openapi-response-validator,
 * whose Ajv setup knows neither boolean schemas nor the 2020-12 keywords this document uses for its one-of
 * rules), and none says that a HEAD answer declared without content must have none.
 *
 * What an answer must do:
 * - its status is one the operation documents (exact, `4XX`, or `default`);
 * - every header the response declares `required` is present, and every declared header present has its
 *   schema's shape (integers as decimal strings);
 * - a response declared without content has no body; one with content has a Content-Type it declares, and a
 *   JSON body (application/json, application/problem+json) that its schema accepts.
 * Answers to paths neither document has (the console, the dashboard, /docs) are not the API's: skipped.
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A JSON pointer segment (RFC 6901). */
const toPointer = (part: string) => part.replace(/~/g, "~0").replace(/\//g, "~1");
const fromPointer = (part: string) => part.replace(/~1/g, "/").replace(/~0/g, "~");
const isJsonType = (mediaType: string) => mediaType === "application/json" || mediaType.endsWith("+json");

type Template = { path: string; pattern: RegExp; literals: number };

/** One published document, compiled: its path templates and Ajv with the document added as one schema. */
class CompiledDocument {
  readonly templates: Template[];
  private readonly validators = new Map<string, ValidateFunction>();

  readonly doc: Json;
  private readonly ajv: Ajv2020;
  private readonly id: string;

  constructor(doc: Json, ajv: Ajv2020, id: string) {
    this.doc = doc;
    this.ajv = ajv;
    this.id = id;
    ajv.addSchema(doc, id);
    this.templates = Object.keys(isObject(doc.paths) ? doc.paths : {}).map((path) => ({
      path,
      pattern: new RegExp(
        `^${path
          .split(/(\{[^}]+\})/)
          .map((part) => (part.startsWith("{") ? "[^/]+" : part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")))
          .join("")}$`,
      ),
      literals: path.replace(/\{[^}]+\}/g, "").length,
    }));
  }

  /** The template a concrete path matches: the most specific (`/v1/uploads/direct` before `/v1/uploads/{id}`). */
  template(path: string) {
    return this.templates.filter((t) => t.pattern.test(path)).sort((a, b) => b.literals - a.literals)[0]
      ?.path;
  }

  /** The node at a pointer, following one `$ref` at the end. */
  at(parts: string[]): unknown {
    let node: unknown = this.doc;
    for (const part of parts) node = isObject(node) ? node[part] : undefined;
    if (isObject(node) && typeof node.$ref === "string" && node.$ref.startsWith("#/")) {
      return this.at(node.$ref.slice(2).split("/").map(fromPointer));
    }
    return node;
  }

  /** Ajv's validator for the schema at the pointer (compiled once). */
  validator(parts: string[]) {
    const pointer = `${this.id}#/${parts.map(toPointer).join("/")}`;
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: pointer });
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}

function errorsOf(validate: ValidateFunction) {
  return (validate.errors ?? [])
    .slice(0, 6)
    .map((e) => `${e.instancePath || "(root)"} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`)
    .join("; ");
}

/** A header value as its schema types it: integers and numbers from their decimal strings. */
function headerValue(schema: unknown, value: string): unknown {
  const type = isObject(schema) ? schema.type : undefined;
  if ((type === "integer" || type === "number") && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return value;
}

class AnswerChecker {
  private readonly documents = new Map<string, { public: CompiledDocument; admin: CompiledDocument }>();
  private readonly ajv: Ajv2020;

  constructor() {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    // OpenAPI's own formats: a binary body is never a JSON value; int32/int64 are ajv-formats' already.
    this.ajv.addFormat("binary", true);
  }

  /** Adds the documents (once per content) and returns their id. */
  add(documents: Documents): string {
    const id = createHash("sha256").update(JSON.stringify(documents)).digest("hex").slice(0, 16);
    if (!this.documents.has(id)) {
      this.documents.set(id, {
        public: new CompiledDocument(documents.public as Json, this.ajv, `public-${id}`),
        admin: new CompiledDocument(documents.admin as Json, this.ajv, `admin-${id}`),
      });
    }
    return id;
  }

  has(id: string) {
    return this.documents.has(id);
  }

  /** What is wrong with the answer, or [] when the document describes it; null when no document has its path. */
  check(id: string, exchange: Exchange): string[] | null {
    const pair = this.documents.get(id);
    if (!pair) throw new Error(`unknown documents ${id}`);
    const document = exchange.path.startsWith("/admin/") ? pair.admin : pair.public;
    const path = document.template(exchange.path);
    if (!path) return null;
    const method = exchange.method.toLowerCase();
    const operation = document.at(["paths", path, method]);
    if (!isObject(operation)) {
      // A method the path does not have: the server's 405 (with Allow), or the 401 of a request without a key,
      // which authentication answers before any route is chosen (a CORS preflight to a path with a key).
      return exchange.status === 405 || exchange.status === 401
        ? []
        : [`${method.toUpperCase()} ${path} is not in the document`];
    }
    const responses = isObject(operation.responses) ? operation.responses : {};
    const key = [String(exchange.status), `${String(exchange.status)[0]}XX`, "default"].find(
      (k) => k in responses,
    );
    if (!key) return [`status ${exchange.status} is not documented for ${method.toUpperCase()} ${path}`];
    const base = ["paths", path, method, "responses", key];
    const response = document.at(base);
    if (!isObject(response)) return [`response ${key} is not an object`];
    return [
      ...this.checkHeaders(document, base, response, exchange),
      ...this.checkBody(document, base, response, exchange),
    ];
  }

  private checkHeaders(document: CompiledDocument, base: string[], response: Json, exchange: Exchange) {
    const problems: string[] = [];
    const declared = isObject(response.headers) ? response.headers : {};
    for (const name of Object.keys(declared)) {
      // OpenAPI: a Content-Type response header declaration is ignored (the media types say it).
      if (name.toLowerCase() === "content-type") continue;
      const header = document.at([...base, "headers", name]);
      if (!isObject(header)) continue;
      const value = exchange.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      if (!isObject(header.schema) && typeof header.schema !== "boolean") continue;
      // The schema's pointer: inside the response, or inside the component a $ref names.
      const ref = isObject(declared[name]) ? (declared[name] as Json).$ref : undefined;
      const parts =
        typeof ref === "string"
          ? [...ref.slice(2).split("/").map(fromPointer), "schema"]
          : [...base, "headers", name, "schema"];
      const validate = document.validator(parts);
      if (!validate(headerValue(header.schema, value)))
        problems.push(`header ${name}: ${JSON.stringify(value)} ${errorsOf(validate)}`);
    }
    return problems;
  }

  private checkBody(document: CompiledDocument, base: string[], response: Json, exchange: Exchange) {
    const content = isObject(response.content) ? response.content : undefined;
    if (!content) {
      return exchange.body.kind === "none"
        ? []
        : ["a body, where the document declares none (a generated client types it as absent)"];
    }
    const contentType = (exchange.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (exchange.body.kind === "none") {
      // A declared body that did not come: only a file may be empty (a JSON document never is).
      return isJsonType(contentType) || contentType === ""
        ? [`no body, where the document declares ${Object.keys(content).join(", ")}`]
        : [];
    }
    const [type] = contentType.split("/");
    const mediaType = [contentType, `${type}/*`, "*/*"].find((k) => k in content);
    if (!mediaType)
      return [
        `Content-Type ${contentType || "(none)"} is not documented (the document has ${Object.keys(content).join(", ")})`,
      ];
    if (!isJsonType(contentType)) return [];
    if (exchange.body.kind === "unparsable")
      return [`a ${contentType} body that is not JSON: ${exchange.body.text.slice(0, 200)}`];
    if (exchange.body.kind !== "json") return [];
    const schema = document.at([...base, "content", mediaType, "schema"]);
    if (schema === undefined) return [];
    const validate = document.validator([...base, "content", mediaType, "schema"]);
    if (validate(exchange.body.value)) return [];
    return [`${mediaType} body does not match the document: ${errorsOf(validate)}`];
  }

  /** A request body against the operation's requestBody schema: [] when the document accepts it. */
  checkRequest(id: string, request: { method: string; path: string; mediaType: string; body: unknown }) {
    const pair = this.documents.get(id);
    if (!pair) throw new Error(`unknown documents ${id}`);
    const document = request.path.startsWith("/admin/") ? pair.admin : pair.public;
    const path = document.template(request.path);
    if (!path) return [`${request.path} is not in the document`];
    const parts = ["paths", path, request.method.toLowerCase(), "requestBody", "content", request.mediaType];
    if (!isObject(document.at(parts))) return [`no ${request.mediaType} body documented`];
    const validate = document.validator([...parts, "schema"]);
    return validate(request.body) ? [] : [errorsOf(validate)];
  }
}

/** One line of the report: the test, the request and what is wrong. */
const line = (exchange: Exchange, problem: string) =>
  `${exchange.test ? `${exchange.test}: ` : ""}${exchange.method} ${exchange.path} → ${exchange.status}: ${problem}`;

/**
 * The validator as a loopback service for the workerd tests:
 * - POST /documents {public, admin} → {id}: compiles the documents (once per content);
 * - POST /check {id, exchanges, planted?} → {failures, checked, skipped}: the answers a test file received (or,
 *   `planted`, answers a test made up, left out of the run's report);
 * - POST /check-request {id, method, path, mediaType, body} → {errors}: what the document says of a request body.
 * With P6_ANSWERS_REPORT set, every failure of the run is written there as JSON when the service closes.
 */
export async function startAnswerValidator() {
  const checker = new AnswerChecker();
  const all: string[] = [];
  let checked = 0;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    try {
      const input = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json;
      if (req.url === "/documents") return send(200, { id: checker.add(input as Documents) });
      const id = String(input.id);
      if (!checker.has(id)) return send(409, { error: `unknown documents ${id}: POST /documents first` });
      if (req.url === "/check") {
        const failures: string[] = [];
        let skipped = 0;
        for (const exchange of input.exchanges as Exchange[]) {
          const problems = checker.check(id, exchange);
          if (problems === null) skipped++;
          else failures.push(...problems.map((problem) => line(exchange, problem)));
        }
        // Answers a test made up to see the validator fail (`planted`) are not the suite's.
        if (input.planted !== true) {
          checked += (input.exchanges as Exchange[]).length - skipped;
          all.push(...failures);
        }
        return send(200, { failures, checked: (input.exchanges as Exchange[]).length - skipped, skipped });
      }
      if (req.url === "/check-request")
        return send(200, {
          errors: checker.checkRequest(id, input as Parameters<AnswerChecker["checkRequest"]>[1]),
        });
      send(404, { error: "no such endpoint" });
    } catch (error) {
      send(500, { error: String((error as Error).stack ?? error) });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        const report = process.env.P6_ANSWERS_REPORT;
        if (report) writeFileSync(report, JSON.stringify({ checked, failures: all }, null, 1));
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
