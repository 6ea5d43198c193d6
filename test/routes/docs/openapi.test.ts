import { describe, expect, inject, it } from "vitest";
import { OPERATIONS } from "../../../src/operations";
import { admin, call } from "../../helpers/api";

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>>;
  components: { securitySchemes: Record<string, unknown> };
};

/** Validated by @apidevtools/swagger-parser in Node, through the loopback inspector. */
async function expectValid(doc: Doc) {
  const response = await fetch(`${inject("inspectorUrl")}/openapi`, {
    method: "POST",
    body: JSON.stringify(doc),
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

describe("OpenAPI documents", () => {
  it("GET /v1/openapi.json is public, OpenAPI 3.1, and passes the validator", async () => {
    const response = await call("/v1/openapi.json");
    expect(response.status).toBe(200);
    const doc = (await response.json()) as Doc;
    expect(doc.openapi).toBe("3.1.0");
    await expectValid(doc);
  });

  it("documents the bearer scheme, every route and every error response", async () => {
    const doc = (await (await call("/v1/openapi.json")).json()) as Doc;
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
