import { describe, expect, inject, it } from "vitest";
import { OPERATIONS } from "../../../src/operations";
import { admin, call, newAccount, problem } from "../../helpers/api";

type Json = Record<string, unknown>;
type Response = { description: string; headers?: Record<string, { $ref?: string }>; content?: Json };
type Operation = {
  operationId?: string;
  responses: Record<string, Response>;
  security?: Json[];
  requestBody?: { content: Record<string, { schema: Json }> };
  parameters?: { name: string; in: string; required?: boolean; schema: Json; example?: unknown }[];
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
    const statuses = (path: string, method: string) =>
      Object.keys(doc.paths[path]![method]!.responses).sort();
    expect(statuses("/v1/tasks", "get")).toEqual(["200", "400", "401", "403", "405", "429", "500"]);
    // 404 / 410 / 409: a source_upload_id or watermark_upload_id that is unknown, expired or incomplete.
    expect(statuses("/v1/tasks", "post")).toEqual(
      [
        "200",
        "201",
        "400",
        "401",
        "402",
        "403",
        "404",
        "405",
        "409",
        "410",
        "413",
        "415",
        "429",
        "500",
      ].sort(),
    );
    // No 400: any id that is not a task of the account is a 404, and a Prefer header is never refused.
    expect(statuses("/v1/tasks/{id}", "get")).toEqual(["200", "401", "403", "404", "405", "429", "500"]);
    expect(statuses("/v1/tasks/{id}/cancel", "post")).toEqual(
      ["200", "400", "401", "403", "404", "405", "409", "413", "415", "429", "500"].sort(),
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
          "404",
          "405",
          "409",
          "410",
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

  it("/files: GET and HEAD, the real content types, 206, 304 and 416", async () => {
    const doc = await publicDoc();
    const item = doc.paths["/files/{file_id}/{name}"]!;
    for (const method of ["get", "head"]) {
      expect(item[method]!.security).toEqual([]);
      expect(Object.keys(item[method]!.responses).sort()).toEqual(
        ["200", "206", "304", "400", "403", "404", "405", "416", "500"].sort(),
      );
      expect(Object.keys(item[method]!.responses["206"]!.headers!)).toContain("Content-Range");
      expect(Object.keys(item[method]!.responses["416"]!.headers!)).toContain("Content-Range");
    }
    const types = Object.keys(item.get!.responses["200"]!.content!);
    expect(types).toEqual(
      expect.arrayContaining([
        "image/jpeg",
        "image/png",
        "image/webp",
        "video/mp4",
        "audio/mpeg",
        "application/json",
      ]),
    );
    expect(types).not.toContain("application/octet-stream");
    expect(Object.keys(item.get!.responses["206"]!.content!)).toEqual(types);
    expect(item.head!.responses["200"]!.content).toBeUndefined();
    expect(item.get!.parameters!.map((p) => `${p.in} ${p.name}`)).toEqual(
      expect.arrayContaining(["header Range", "header If-Range", "header If-None-Match"]),
    );
  });

  it("uploads: tus headers required where tus requires them, HEAD answers without a body, direct URLs need no key", async () => {
    const doc = await publicDoc();
    const params = (path: string, method: string) =>
      Object.fromEntries(
        (doc.paths[path]![method]!.parameters ?? []).map((p) => [`${p.in}:${p.name}`, p.required === true]),
      );
    expect(params("/v1/uploads", "post")).toMatchObject({
      "header:Tus-Resumable": true,
      "header:Upload-Length": true,
      "header:Upload-Metadata": false,
    });
    expect(params("/v1/uploads/{id}", "patch")).toMatchObject({
      "header:Tus-Resumable": true,
      "header:Upload-Offset": true,
      "header:Upload-Checksum": false,
    });
    // Every HEAD answer, errors included, has no body: a generated client must not type one.
    for (const path of ["/v1/uploads/{id}", "/v1/direct-uploads/{token}/upload", "/files/{file_id}/{name}"]) {
      const head = doc.paths[path]!.head!;
      expect(Object.keys(head.responses)).toContain("404");
      for (const [status, response] of Object.entries(head.responses))
        expect(response.content, `HEAD ${path} ${status}`).toBeUndefined();
    }
    expect(
      operations(doc)
        .filter(({ method }) => method === "head")
        .map(({ path }) => path)
        .sort(),
    ).toEqual(["/files/{file_id}/{name}", "/v1/direct-uploads/{token}/upload", "/v1/uploads/{id}"]);
    for (const [path, method] of [
      ["/v1/direct-uploads/{token}", "post"],
      ["/v1/direct-uploads/{token}", "options"],
      ["/v1/direct-uploads/{token}/upload", "patch"],
      ["/v1/direct-uploads/{token}/upload", "head"],
      ["/v1/direct-uploads/{token}/upload", "options"],
    ] as const)
      expect(doc.paths[path]![method]!.security, `${method} ${path}`).toEqual([]);
    expect(doc.paths["/v1/uploads/direct"]!.post!.security).toBeUndefined();
    expect(Object.keys(doc.paths["/v1/uploads/{id}/content"]!.get!.responses).sort()).toEqual(
      ["200", "206", "304", "401", "403", "404", "405", "409", "410", "416", "429", "500"].sort(),
    );
    expect(doc.paths["/v1/uploads"]!.get!.operationId).toBe("listUploads");
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

  it("names request headers as the HTTP specifications spell them (Idempotency-Key, Prefer, If-None-Match)", async () => {
    const doc = await publicDoc();
    const spelled = new Set(
      operations(doc).flatMap(({ op }) =>
        (op.parameters ?? []).filter((p) => p.in === "header").map((p) => p.name),
      ),
    );
    // RFC 9110 (Range, If-Range, If-None-Match), RFC 7240 (Prefer), draft-ietf-httpapi-idempotency-key-header,
    // tus 1.0.0 (Tus-Resumable, Upload-*).
    expect([...spelled].sort()).toEqual([
      "Idempotency-Key",
      "If-None-Match",
      "If-Range",
      "Prefer",
      "Range",
      "Tus-Resumable",
      "Upload-Checksum",
      "Upload-Length",
      "Upload-Metadata",
      "Upload-Offset",
      "X-Debug-Timing",
    ]);
  });

  it("POST /v1/tasks: a oneOf over every task type, discriminated by type, each with its own params", async () => {
    const doc = await publicDoc();
    const body = deref(doc, doc.paths["/v1/tasks"]!.post!.requestBody!.content["application/json"]!.schema);
    const discriminator = body.discriminator as { propertyName: string; mapping: Record<string, string> };
    expect(discriminator.propertyName).toBe("type");
    expect(Object.keys(discriminator.mapping).sort()).toEqual(
      [...OPERATIONS.map((op) => op.type), "pipeline"].sort(),
    );
    const variants = (body.oneOf as Json[]).map((ref) => ref.$ref);
    expect(variants.sort()).toEqual(Object.values(discriminator.mapping).sort());
    for (const type of [...OPERATIONS.map((op) => op.type), "pipeline"]) {
      const variant = deref(doc, { $ref: discriminator.mapping[type] });
      const properties = variant.properties as Record<string, Json>;
      expect(properties.type).toMatchObject({ enum: [type] });
      // Exactly one of source_url or source_upload_id (the route refuses both or neither with 400).
      expect(variant.required).toEqual(expect.arrayContaining(["type"]));
      expect(variant.required).not.toContain("source_url");
      expect(Object.keys(properties)).toEqual(expect.arrayContaining(["source_url", "source_upload_id"]));
      expect(variant.additionalProperties).toBe(false);
      const params = deref(doc, properties.params!);
      expect(params.type).toBe("object");
      expect(params.additionalProperties).toBe(false);
    }
  });

  it("the documented task variants accept and refuse what POST /v1/tasks does", async () => {
    const doc = await publicDoc();
    const { key } = await newAccount({ credits: 0 });
    const body = deref(doc, doc.paths["/v1/tasks"]!.post!.requestBody!.content["application/json"]!.schema);
    const mapping = (body.discriminator as { mapping: Record<string, string> }).mapping;
    const create = (json: unknown) => call("/v1/tasks", { method: "POST", key, json });
    const pipeline = {
      type: "pipeline",
      example: { steps: [{ name: "clip", type: "video.trim", params: { start: 0, end: 1 } }] },
    };
    for (const op of [...OPERATIONS.map((o) => ({ type: o.type, example: o.example.params })), pipeline]) {
      const variant = deref(doc, { $ref: mapping[op.type] });
      const source_url = "https://example.com/in.mp4";
      // Valid for the document → past validation, stopped by the empty balance (402): nothing is created.
      expect((await create({ type: op.type, source_url, params: op.example })).status, op.type).toBe(402);
      const paramsRequired = (variant.required as string[]).includes("params");
      const bare = await create({ type: op.type, source_url });
      expect(bare.status, `${op.type} without params`).toBe(paramsRequired ? 400 : 402);
      if (paramsRequired) expect((await problem(bare)).errors?.[0]?.field).toMatch(/^params\./);
      const unknown = await create({
        type: op.type,
        source_url,
        params: { ...(op.example as object), nope: 1 },
      });
      expect(unknown.status).toBe(400);
      expect((await problem(unknown)).errors?.map((e) => e.field)).toContain("params.nope");
    }
  });

  it("webhooks: started, completed, failed and canceled deliveries with their signed headers and the Task body; upload.completed with the Upload", async () => {
    const doc = await publicDoc();
    expect(Object.keys(doc.webhooks ?? {}).sort()).toEqual([
      "taskCanceled",
      "taskCompleted",
      "taskFailed",
      "taskStarted",
      "uploadCompleted",
    ]);
    for (const [name, item] of Object.entries(doc.webhooks!)) {
      const delivery = item.post!;
      expect(delivery.operationId).toBe(name);
      const headersIn = Object.fromEntries(
        delivery.parameters!.filter((p) => p.in === "header").map((p) => [p.name, p]),
      );
      expect(Object.keys(headersIn).sort()).toEqual(
        ["X-Webhook-Event", "webhook-id", "webhook-signature", "webhook-timestamp"].sort(),
      );
      expect(delivery.requestBody!.content["application/json"]!.schema).toEqual({
        $ref: `#/components/schemas/${name === "uploadCompleted" ? "Upload" : "Task"}`,
      });
      const text = (delivery as unknown as { description: string }).description;
      expect(text).toMatch(/whsec_/);
      expect(text).toMatch(/HMAC-SHA256/);
      expect(text).toMatch(/5 minutes/);
      expect(text).toMatch(/standardwebhooks/);
      // The signature example matches its own pattern.
      const signature = headersIn["webhook-signature"]!;
      expect(signature.schema.example).toMatch(new RegExp(signature.schema.pattern as string));
    }
  });

  it("the worked signature example in the webhook description is right", async () => {
    const doc = await publicDoc();
    const text = (doc.webhooks!.taskCompleted!.post as unknown as { description: string }).description;
    const [, secret, id, timestamp, body, signature] =
      /secret `(whsec_[^`]+)`, webhook-id `([^`]+)`,\s+webhook-timestamp `(\d+)` and body `([^`]+)` give\s+`v1,([^`]+)`/.exec(
        text,
      )!;
    const key = await crypto.subtle.importKey(
      "raw",
      Uint8Array.from(atob(secret!.slice("whsec_".length)), (c) => c.charCodeAt(0)),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = new Uint8Array(
      await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`)),
    );
    expect(btoa(String.fromCharCode(...mac))).toBe(signature);
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
    // A probe needs only its source (source_url or source_upload_id, one of them: neither is required alone);
    // a watermark's position is optional and its default is written down.
    const probe = deref(
      doc,
      doc.paths["/v1/video/probe"]!.post!.requestBody!.content["application/json"]!.schema,
    );
    expect(probe.required).toBeUndefined();
    expect(Object.keys(probe.properties as object)).toEqual(["source_url", "source_upload_id", "params"]);
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
    // The range and its clamp in words on every list, and no minimum/maximum that would call 0 or 500
    // refused: the server clamps them (interface.md).
    for (const path of ["/v1/tasks", "/v1/uploads"]) {
      const param = doc.paths[path]!.get!.parameters!.find((p) => p.name === "limit")!;
      const schema = param.schema;
      expect(schema).toMatchObject({ type: "integer" });
      expect(JSON.stringify(param)).toMatch(/outside 1\.\.100 are clamped/);
      expect(schema).not.toHaveProperty("minimum");
      expect(schema).not.toHaveProperty("maximum");
    }
    const signature = doc.paths["/files/{file_id}/{name}"]!.get!.parameters!.find(
      (p) => p.name === "signature",
    )!;
    expect(signature.schema.example).toMatch(new RegExp(signature.schema.pattern as string));
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

  it("/docs/openapi.json, the document /docs renders, is valid and lists every operation", async () => {
    const html = await (await call("/docs")).text();
    expect(html).toContain('"url":"/docs/openapi.json"');
    const response = await call("/docs/openapi.json");
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const doc = (await response.json()) as Doc;
    await expectValid(doc);
    expect(Object.keys(doc.paths)).toEqual(Object.keys((await publicDoc()).paths));
    expect(doc.paths["/v1/tasks/{id}"]).toBeDefined();
    expect(doc.paths["/v1/video/extract-audio"]).toBeDefined();
  });
});
