import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";

/**
 * The OpenAPI documents, validated with @apidevtools/swagger-parser (which needs Node, so this file runs in the
 * node project; the documents are built from the same route definitions as in the Worker).
 */
const env = { ADMIN_TOKEN: "t", FILE_SIGNING_SECRET: "s", ENGINE_SECRET: "e" } as unknown as Env;
const app = createApp();

async function fetchDoc(path: string, headers: Record<string, string> = {}) {
  const response = await app.request(`http://api.test${path}`, { headers }, env);
  expect(response.status).toBe(200);
  return (await response.json()) as Doc;
}

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  components: { securitySchemes: Record<string, unknown> };
};

describe("OpenAPI documents", () => {
  it("GET /v1/openapi.json is public, OpenAPI 3.1, and passes the validator", async () => {
    const doc = await fetchDoc("/v1/openapi.json");
    expect(doc.openapi).toBe("3.1.0");
    await SwaggerParser.validate(structuredClone(doc) as never);
  });

  it("documents the bearer scheme and every error response of each route", async () => {
    const doc = await fetchDoc("/v1/openapi.json");
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
    expect(Object.keys(doc.paths["/v1/tasks/{id}"]!.get!.responses)).toEqual(
      expect.arrayContaining(["401", "403", "404", "429", "500"]),
    );
  });

  it("the admin document needs the admin token and validates too", async () => {
    expect((await app.request("http://api.test/admin/v1/openapi.json", {}, env)).status).toBe(401);
    const doc = await fetchDoc("/admin/v1/openapi.json", { Authorization: "Bearer t" });
    expect(Object.keys(doc.paths).every((p) => p.startsWith("/admin/v1/"))).toBe(true);
    await SwaggerParser.validate(structuredClone(doc) as never);
  });

  it("/docs renders an HTML reference that lists the operations", async () => {
    const response = await app.request("http://api.test/docs", {}, env);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain("/v1/tasks/{id}");
    expect(html).toContain("/v1/openapi.json");
  });
});
