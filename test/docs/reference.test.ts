import { describe, expect, it } from "vitest";
import type { Document } from "../../src/docs/openapi";
import { referenceModel } from "../../src/docs/reference";

/** What the reference makes of the parts of OpenAPI 3.1 the live document is growing into. */
const doc: Document = {
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  servers: [{ url: "https://api.example.com" }],
  security: [{ ApiKey: [] }],
  components: {
    schemas: {
      Task: {
        type: "object",
        properties: { id: { type: "string" }, next: { $ref: "#/components/schemas/Task" } },
        required: ["id"],
      },
      Trim: {
        type: "object",
        properties: { type: { type: "string", const: "video.trim" }, params: { type: "object" } },
      },
      Probe: {
        type: "object",
        properties: { type: { type: "string", enum: ["video.probe"] } },
      },
    },
    headers: { RequestId: { description: "The request id.", schema: { type: "string" } } },
  },
  paths: {
    "/v1/tasks": {
      post: {
        operationId: "createTask",
        tags: ["Tasks"],
        parameters: [{ name: "X-Debug", in: "header", schema: { type: "string" } }],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                oneOf: [{ $ref: "#/components/schemas/Trim" }, { $ref: "#/components/schemas/Probe" }],
                discriminator: { propertyName: "type" },
              },
            },
          },
        },
        responses: {
          "201": {
            description: "Created.",
            headers: { "X-Request-Id": { $ref: "#/components/headers/RequestId" } },
            content: { "application/json": { schema: { $ref: "#/components/schemas/Task" } } },
          },
        },
      },
    },
    "/files/{id}": {
      get: {
        security: [],
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", example: "f1" } }],
        responses: { "200": { description: "The file." } },
      },
    },
  },
  webhooks: {
    completed: {
      post: {
        operationId: "taskCompleted",
        parameters: [{ name: "webhook-id", in: "header", required: true, schema: { type: "string" } }],
        requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/Task" } } } },
        responses: { "200": { description: "Acknowledged." } },
      },
    },
  },
};

describe("referenceModel", () => {
  const model = referenceModel(doc);
  const create = model.tags.find((tag) => tag.name === "Tasks")!.operations[0]!;

  it("labels a discriminated union's variants by their discriminator value", () => {
    const body = create.body!.content[0]!.schema!;
    expect(body.variants.map((v) => v.label)).toEqual(["type = video.trim", "type = video.probe"]);
  });

  it("resolves header references and names a recursive schema instead of expanding it", () => {
    const created = create.responses[0]!;
    expect(created.headers).toEqual([
      { name: "X-Request-Id", required: false, description: "The request id.", type: "string" },
    ]);
    const next = created.content[0]!.schema!.fields.find((f) => f.name === "next")!;
    expect(next.type).toBe("Task");
    expect(next.fields).toEqual([]);
  });

  it("renders webhooks as operations without curl, and public operations without a key", () => {
    expect(model.webhooks).toHaveLength(1);
    expect(model.webhooks[0]).toMatchObject({
      method: "POST",
      path: "completed",
      operationId: "taskCompleted",
    });
    expect(model.webhooks[0]!.curl).toBeUndefined();
    const file = model.tags.find((tag) => tag.name === "Other")!.operations[0]!;
    expect(file.authenticated).toBe(false);
    expect(file.curl).toBe("curl 'https://api.example.com/files/f1'");
  });

  it("builds curl from the first union variant and the key from $P6_API_KEY", () => {
    expect(create.curl).toContain(`-H "Authorization: Bearer $P6_API_KEY"`);
    expect(create.curl).toContain(`-d '{"type":"video.trim"}'`);
    expect(create.anchor).toBe("op-createtask");
  });
});
