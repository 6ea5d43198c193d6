/**
 * POST /v1/resolve: the address policy for a task's sources and logo, checked at the task's creation before
 * the engine fetches them (the Worker resolves webhook names itself). A test resolver stands in for DNS, as in fetcher.test.ts; the
 * Worker's own client (src/engine) makes the calls.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { HttpMediaEngine, readEngineError, urlTarget } from "../../../src/engine/http-engine.ts";
import { REFUSED_NAMES, TEST_DNS, tableResolver } from "./support/dns.ts";
import { SECRET, startTestEngine, type TestEngine } from "./support/engine.ts";

const resolve = tableResolver();

let production: TestEngine;
let development: TestEngine;
const client = (engine: TestEngine) =>
  new HttpMediaEngine({ targets: [urlTarget(engine.url)], secret: SECRET });

beforeAll(async () => {
  production = await startTestEngine({ allowPrivateSources: false }, { fetchPolicy: { resolve } });
  development = await startTestEngine({ allowPrivateSources: true }, { fetchPolicy: { resolve } });
});
afterAll(async () => {
  await production.close();
  await development.close();
});

describe("ALLOW_PRIVATE_SOURCES=false", () => {
  test("a public name: 200 with every address", async () => {
    const res = await client(production).resolve({ url: "https://public.test/in.mp4", field: "source_url" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ addresses: TEST_DNS["public.test"]!.map((a) => a.address) });
  });

  test.each(REFUSED_NAMES)("%s: 400 naming the field", async (name) => {
    for (const field of ["source_url", "params.watermark_url"] as const) {
      const res = await client(production).resolve({ url: `https://${name}:8443/x`, field });
      const error = await readEngineError(res);
      expect(error).toMatchObject({
        status: 400,
        code: "VALIDATION_INVALID_ARGUMENT",
        field,
        message: `${field} resolves to a private or reserved address`,
      });
    }
  });

  test.each(["http://127.0.0.1/", "http://[::1]/", "http://169.254.169.254/latest", "http://localhost/"])(
    "the literal %s: 400 without a lookup",
    async (url) => {
      const error = await readEngineError(await client(production).resolve({ url, field: "source_url" }));
      expect(error).toMatchObject({ status: 400, field: "source_url" });
      expect(error.message).toMatch(/^source_url points to a private or reserved address$/);
    },
  );

  test("a name that does not resolve: 502", async () => {
    const res = await client(production).resolve({ url: "https://nowhere.test/", field: "source_url" });
    expect(await readEngineError(res)).toMatchObject({
      status: 502,
      code: "SOURCE_UNREACHABLE",
      message: "DNS lookup of the source_url host failed",
    });
  });

  test("bad requests: unknown field (webhooks are resolved by the Worker), no URL, no secret", async () => {
    const post = (body: unknown, auth = true) =>
      fetch(`${production.url}/v1/resolve`, {
        method: "POST",
        headers: auth ? { authorization: `Bearer ${SECRET}` } : {},
        body: JSON.stringify(body),
      });
    expect(await readEngineError(await post({ url: "https://public.test/", field: "x" }))).toMatchObject({
      status: 400,
      field: "field",
    });
    expect(
      await readEngineError(await post({ url: "https://public.test/", field: "webhook" })),
    ).toMatchObject({
      status: 400,
      field: "field",
    });
    expect(await readEngineError(await post({ field: "source_url" }))).toMatchObject({
      status: 400,
      field: "source_url",
    });
    expect((await post({ url: "https://public.test/", field: "source_url" }, false)).status).toBe(401);
  });
});

describe("ALLOW_PRIVATE_SOURCES=true opens loopback only", () => {
  test.each(["loopback.test", "loopback6.test", "mapped.test", "rebind.test"])(
    "%s: allowed",
    async (name) => {
      const res = await client(development).resolve({ url: `http://${name}/`, field: "source_url" });
      expect(res.status).toBe(200);
    },
  );

  test.each(REFUSED_NAMES.filter((name) => !/^(loopback|mapped|rebind)/.test(name)))(
    "%s: still refused",
    async (name) => {
      const res = await client(development).resolve({ url: `http://${name}/`, field: "source_url" });
      expect(res.status).toBe(400);
    },
  );
});
