import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { ApiError } from "../../src/errors/api-error";
import { ERROR_CODES, type ErrorCode } from "../../src/errors/codes";
import { BASE, call, newAccount, problem } from "../helpers/api";

const ctx = () => ({ waitUntil() {}, passThroughOnException() {}, props: {} }) as unknown as ExecutionContext;

/** An app with extra routes that throw, to prove the central handler. */
function appWith(register: (app: ReturnType<typeof createApp>) => void) {
  const app = createApp();
  register(app);
  return app;
}

describe("the error table", () => {
  it.each(Object.keys(ERROR_CODES) as ErrorCode[])("%s → its status, title, type suffix", async (code) => {
    const app = appWith((a) =>
      a.get("/boom", () => {
        throw new ApiError(code);
      }),
    );
    const response = await app.fetch(new Request(`${BASE}/boom`), env, ctx());
    const row = ERROR_CODES[code];
    expect(response.status).toBe(row.status);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      type: `${BASE}/errors/${row.suffix}`,
      title: row.title,
      status: row.status,
      code,
    });
    if (code !== "AUTH_INVALID_TOKEN") {
      expect(body.instance).toBe("/boom");
      expect(body.request_id).toBe(response.headers.get("x-request-id"));
      expect(typeof body.detail).toBe("string");
    }
  });

  it("ERROR_TYPE_BASE overrides the origin-derived type base", async () => {
    const response = await createApp().fetch(
      new Request(`${BASE}/nope`),
      { ...env, ERROR_TYPE_BASE: "https://errors.example.com/p6/" },
      ctx(),
    );
    expect(((await response.json()) as { type: string }).type).toBe(
      "https://errors.example.com/p6/not-found",
    );
  });

  it("an unexpected exception → 500 INTERNAL with nothing internal leaked", async () => {
    const app = appWith((a) =>
      a.get("/crash", () => {
        throw new TypeError("db password is hunter2 at /srv/app.ts:12");
      }),
    );
    const response = await app.fetch(new Request(`${BASE}/crash`), env, ctx());
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toMatch(/hunter2|srv|TypeError/);
    expect(JSON.parse(text)).toMatchObject({ code: "INTERNAL", status: 500 });
  });
});

describe("routing and bodies", () => {
  it("unknown route → 404 problem", async () => {
    const { key } = await newAccount();
    const response = await call("/v1/nothing-here", { key });
    expect(response.status).toBe(404);
    expect(await problem(response)).toMatchObject({
      code: "RESOURCE_NOT_FOUND",
      instance: "/v1/nothing-here",
    });
  });

  it("unknown route outside /v1 → 404 problem without a key", async () => {
    const response = await call("/nothing");
    expect(response.status).toBe(404);
    expect((await problem(response)).code).toBe("RESOURCE_NOT_FOUND");
  });

  it("wrong method → 405 problem with Allow", async () => {
    const { key } = await newAccount();
    const response = await call("/v1/tasks/01JD5Z8X4QK3M7R2T9V6W1Y0AB", { key, method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
    expect((await problem(response)).code).toBe("METHOD_NOT_ALLOWED");
  });

  it("malformed JSON → 400", async () => {
    const { key } = await newAccount();
    const response = await call("/v1/tasks", {
      key,
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{not json",
    });
    expect(response.status).toBe(400);
    const body = await problem(response);
    expect(body.code).toBe("VALIDATION_INVALID_ARGUMENT");
    expect(body.errors).toEqual([
      { code: "invalid_json", field: "body", message: "The request body is not valid JSON." },
    ]);
  });

  it("a POST body that is not application/json → 415", async () => {
    const { key } = await newAccount();
    const response = await call("/v1/tasks", {
      key,
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: "hello",
    });
    expect(response.status).toBe(415);
    expect((await problem(response)).code).toBe("CONTENT_TYPE_UNSUPPORTED");
  });

  it("a body over 1 MiB → 413 from Content-Length, before reading it", async () => {
    const { key } = await newAccount();
    const response = await call("/v1/tasks", {
      key,
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Length": String(5 * 1024 * 1024) },
      body: new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(1024)) }),
    });
    expect(response.status).toBe(413);
    expect((await problem(response)).code).toBe("REQUEST_BODY_TOO_LARGE");
  });

  it("a chunked body over 1 MiB → 413 while streaming, without buffering it all", async () => {
    const { key } = await newAccount();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 64 * 1024 * 1024) return controller.close();
        sent += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(32));
      },
    });
    const response = await call("/v1/tasks", {
      key,
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
    });
    expect(response.status).toBe(413);
    expect(sent).toBeLessThan(8 * 1024 * 1024);
  });

  it("every response carries X-Request-Id, including public ones", async () => {
    for (const path of ["/", "/healthz", "/v1/openapi.json", "/docs"]) {
      const response = await call(path);
      expect(response.status).toBe(200);
      expect(response.headers.get("x-request-id")).toMatch(/^[0-9A-Z]{26}$/);
    }
  });
});
