import { describe, expect, inject, it } from "vitest";
import { OPERATIONS } from "../../../src/operations";
import { admin, call } from "../../helpers/api";

type Json = Record<string, unknown>;
type Response = { description: string; headers?: Record<string, { $ref?: string }>; content?: Json };
type Operation = {
  operationId?: string;
  responses: Record<string, Response>;
  security?: Json[];
  requestBody?: { content: Record<string, { schema: Json }> };
  parameters?: { name: string; in: string; schema: Json; example?: unknown }[];
};
type Doc = {
  openapi: string;
  security?: Json[];
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Json>; headers?: Json };
};

const METHODS = ["get", "put", "post", "delete", "head", "patch"];

function operations(doc: Doc) {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method]! })),
  );
}

const publicDoc = async () => (await (await call("/v1/openapi.json")).json()) as Doc;
const adminDoc = async () => (await (await admin("/admin/v1/openapi.json")).json()) as Doc;

/** Validated by @apidevtools/swagger-parser in Node, through the loopback inspector. */
async function expectValid(doc: Doc) {
  const response = await fetch(`${inject("inspectorUrl")}/openapi`, {
    method: "POST",
    body: JSON.stringify(doc),
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

type LintReport = {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; severity: string; location: { pointer: string }[] }[];
};

/** `redocly lint` (@redocly/cli, the project's redocly.yaml) in Node, through the loopback inspector. */
async function lint(doc: Doc) {
  const response = await fetch(`${inject("inspectorUrl")}/redocly`, {
    method: "POST",
    body: JSON.stringify(doc),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as LintReport;
}

const errorsOf = (report: LintReport) =>
  report.problems
    .filter((p) => p.severity === "error")
    .map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);

/** Every node of a JSON value, depth first. */
function* nodes(value: unknown): Generator<Json> {
  if (Array.isArray(value)) for (const item of value) yield* nodes(item);
  else if (typeof value === "object" && value !== null) {
    yield value as Json;
    for (const child of Object.values(value)) yield* nodes(child);
  }
}

/** The schema a $ref points at (one level), else the schema itself. */
const deref = (doc: Doc, schema: Json) =>
  typeof schema.$ref === "string" ? doc.components.schemas[schema.$ref.split("/").pop()!]! : schema;

describe("OpenAPI documents", () => {
  it("GET /v1/openapi.json is public, OpenAPI 3.1, and passes the validator", async () => {
    const response = await call("/v1/openapi.json");
    expect(response.status).toBe(200);
    const doc = (await response.json()) as Doc;
    expect(doc.openapi).toBe("3.1.0");
    await expectValid(doc);
  });

  it("redocly lint: 0 errors in the public and the admin document", async () => {
    for (const doc of [await publicDoc(), await adminDoc()]) {
      const report = await lint(doc);
      expect(errorsOf(report)).toEqual([]);
      expect(report.totals.errors).toBe(0);
    }
  });

  it("documents the bearer scheme, every route and every error response", async () => {
    const doc = await publicDoc();
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: "http", scheme: "bearer" });
    expect(Object.keys(doc.paths).every((p) => !p.startsWith("/admin"))).toBe(true);
    expect(Object.keys(doc.paths["/v1/tasks"]!.get!.responses).sort()).toEqual([
      "200",
      "400",
      "401",
      "403",
      "429",
      "500",
    ]);
    expect(Object.keys(doc.paths["/v1/tasks"]!.post!.responses).sort()).toEqual(
      ["200", "201", "400", "401", "402", "403", "409", "413", "415", "429", "500"].sort(),
    );
    expect(Object.keys(doc.paths["/v1/tasks/{id}/cancel"]!.post!.responses)).toEqual(
      expect.arrayContaining(["200", "401", "403", "404", "409", "429", "500"]),
    );
    for (const op of OPERATIONS) {
      const path = `/v1/${op.type.replace(".", "/")}`;
      expect(Object.keys(doc.paths[path]!.post!.responses).sort()).toEqual(
        [
          "200",
          "400",
          "401",
          "402",
          "403",
          "409",
          "413",
          "415",
          "422",
          "429",
          "500",
          "502",
          "503",
          "504",
        ].sort(),
      );
    }
    expect(doc.paths["/files/{file_id}/{name}"]!.get!.security).toEqual([]);
  });

  it("every operation has a unique camelCase operationId, stable across releases", async () => {
    const doc = await publicDoc();
    const ids = operations(doc).map(({ op }) => op.operationId);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    expect(new Set(ids).size).toBe(ids.length);
    const byRoute = Object.fromEntries(
      operations(doc).map(({ path, method, op }) => [`${method} ${path}`, op.operationId]),
    );
    expect(byRoute).toMatchObject({
      "post /v1/tasks": "createTask",
      "get /v1/tasks": "listTasks",
      "get /v1/tasks/{id}": "getTask",
      "post /v1/tasks/{id}/cancel": "cancelTask",
      "post /v1/image/watermark": "watermarkImage",
      "post /v1/video/watermark": "watermarkVideo",
      "post /v1/video/extract-cover": "extractCover",
      "post /v1/video/trim": "trimVideo",
      "post /v1/audio/trim": "trimAudio",
      "post /v1/video/extract-audio": "extractAudio",
      "post /v1/video/probe": "probeVideo",
      "get /files/{file_id}/{name}": "downloadFile",
    });
    const adminIds = operations(await adminDoc()).map(({ op }) => op.operationId);
    expect(adminIds.every((id) => typeof id === "string")).toBe(true);
    expect(new Set(adminIds).size).toBe(adminIds.length);
  });

  it("declares the headers each response carries", async () => {
    const doc = await publicDoc();
    const names = (response: Response) => Object.keys(response.headers ?? {});
    for (const { path, method, op } of operations(doc)) {
      const withKey = (op.security ?? doc.security)!.some((requirement) => "ApiKey" in requirement);
      for (const [status, response] of Object.entries(op.responses)) {
        const where = `${method} ${path} ${status}`;
        expect(names(response), where).toContain("X-Request-Id");
        if (withKey && status !== "401")
          expect(names(response), where).toEqual(expect.arrayContaining(["RateLimit", "RateLimit-Policy"]));
        if (status === "401") expect(names(response), where).toContain("WWW-Authenticate");
        if (status === "429" || status === "409") expect(names(response), where).toContain("Retry-After");
        if (status === "405") expect(names(response), where).toContain("Allow");
        if (status === "201") expect(names(response), where).toContain("Location");
      }
    }
    expect(names(doc.paths["/v1/tasks"]!.post!.responses["200"]!)).toContain("Idempotent-Replayed");
    for (const op of OPERATIONS) {
      const response = doc.paths[`/v1/${op.type.replace(".", "/")}`]!.post!.responses["200"]!;
      expect(names(response)).toEqual(expect.arrayContaining(["Idempotent-Replayed", "Server-Timing"]));
    }
    // Every reference resolves to a declared header.
    for (const node of nodes(doc.paths)) {
      if (typeof node.$ref === "string" && node.$ref.startsWith("#/components/headers/")) {
        expect(doc.components.headers).toHaveProperty([node.$ref.split("/").pop()!]);
      }
    }
  });

  it("carries no admin schema, path or security scheme; the admin document keeps them", async () => {
    const doc = await publicDoc();
    expect(Object.keys(doc.components.schemas).filter((name) => /^Admin/.test(name))).toEqual([]);
    expect(Object.keys(doc.components.securitySchemes)).toEqual(["ApiKey"]);
    expect(JSON.stringify(doc)).not.toMatch(/\/admin\/|AdminToken/);
    const adminDocument = await adminDoc();
    expect(Object.keys(adminDocument.components.schemas)).toEqual(
      expect.arrayContaining(["AdminAccount", "AdminKey"]),
    );
    expect(Object.keys(adminDocument.components.securitySchemes)).toEqual(["AdminToken"]);
    expect(adminDocument).not.toHaveProperty("webhooks");
  });

  it("request bodies describe defaults instead of declaring them, so optional stays optional", async () => {
    const doc = await publicDoc();
    for (const { path, op } of operations(doc)) {
      const schema = op.requestBody?.content["application/json"]?.schema;
      if (!schema) continue;
      const seen = new Set<string>();
      const walk = (node: unknown) => {
        for (const n of nodes(node)) {
          expect(n, path).not.toHaveProperty("default");
          const ref = n.$ref;
          if (typeof ref === "string" && ref.startsWith("#/components/schemas/") && !seen.has(ref)) {
            seen.add(ref);
            walk(doc.components.schemas[ref.split("/").pop()!]);
          }
        }
      };
      walk(schema);
    }
    // A probe needs only source_url; a watermark's position is optional and its default is written down.
    const probe = deref(
      doc,
      doc.paths["/v1/video/probe"]!.post!.requestBody!.content["application/json"]!.schema,
    );
    expect(probe.required).toEqual(["source_url"]);
    const watermark = deref(
      doc,
      doc.paths["/v1/image/watermark"]!.post!.requestBody!.content["application/json"]!.schema,
    );
    const params = deref(doc, (watermark.properties as Record<string, Json>).params!);
    expect(params.required ?? []).not.toContain("position");
    expect((params.properties as Record<string, Json>).position!.description).toMatch(
      /Default: `"bottom-right"`/,
    );
  });

  it("examples are valid and descriptions stand on their own", async () => {
    const doc = await publicDoc();
    const limit = doc.paths["/v1/tasks"]!.get!.parameters!.find((p) => p.name === "limit")!;
    expect(Number.isInteger(limit.schema.example)).toBe(true);
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/decisions\.md|interface\.md|§/);
    // Examples against their schemas: redocly's no-invalid-schema-examples and no-invalid-media-type-examples
    // are errors in redocly.yaml, so the lint test above fails on any invalid example.
    const report = await lint(doc);
    expect(report.problems.filter((p) => /example/.test(p.ruleId))).toEqual([]);
  });

  it("the admin document needs the admin token and validates too", async () => {
    expect((await call("/admin/v1/openapi.json")).status).toBe(401);
    const response = await admin("/admin/v1/openapi.json");
    expect(response.status).toBe(200);
    const doc = (await response.json()) as Doc;
    expect(Object.keys(doc.paths).every((p) => p.startsWith("/admin/v1/"))).toBe(true);
    await expectValid(doc);
  });

  it("/docs renders an HTML reference that lists the operations", async () => {
    const response = await call("/docs");
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain("/v1/tasks/{id}");
    expect(html).toContain("/v1/video/extract-audio");
  });
});
