/**
 * POST /v1/resolve: the address policy for URLs the engine does not fetch itself (the Worker's webhooks, and
 * task sources checked at creation). A test resolver stands in for DNS, as in fetcher.test.ts; the
 * Worker's own client (src/engine) makes the calls.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { HttpMediaEngine, readEngineError, urlTarget } from "../../../src/engine/http-engine.ts";
import type { ResolvedAddress } from "../src/security/fetcher.ts";
import { SECRET, startTestEngine, type TestEngine } from "./support/engine.ts";

const DNS: Record<string, ResolvedAddress[]> = {
  "public.test": [
    { address: "93.184.216.34", family: 4 },
    { address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 },
  ],
  "loopback.test": [{ address: "127.0.0.1", family: 4 }],
  "loopback6.test": [{ address: "::1", family: 6 }],
  "internal.test": [{ address: "10.1.2.3", family: 4 }],
  "home.test": [{ address: "192.168.1.1", family: 4 }],
  "metadata.test": [{ address: "169.254.169.254", family: 4 }],
  "unspecified.test": [{ address: "0.0.0.0", family: 4 }],
  "mapped.test": [{ address: "::ffff:127.0.0.1", family: 6 }],
  "ula.test": [{ address: "fd00::1", family: 6 }],
  "mixed.test": [
    { address: "93.184.216.34", family: 4 },
    { address: "127.0.0.1", family: 4 },
  ],
};
const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
  const answer = DNS[hostname];
  if (answer === undefined) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  }
  return answer;
};

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

const REFUSED = Object.keys(DNS).filter((name) => name !== "public.test");

describe("ALLOW_PRIVATE_SOURCES=false", () => {
  test("a public name: 200 with every address", async () => {
    const res = await client(production).resolve({ url: "https://public.test/hook", field: "webhook" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ addresses: DNS["public.test"]!.map((a) => a.address) });
  });

  test.each(REFUSED)("%s: 400 naming the field", async (name) => {
    for (const field of ["webhook", "source_url", "params.watermark_url"] as const) {
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
      const error = await readEngineError(await client(production).resolve({ url, field: "webhook" }));
      expect(error).toMatchObject({ status: 400, field: "webhook" });
      expect(error.message).toMatch(/^webhook points to a private or reserved address$/);
    },
  );

  test("a name that does not resolve: 502", async () => {
    const res = await client(production).resolve({ url: "https://nowhere.test/", field: "webhook" });
    expect(await readEngineError(res)).toMatchObject({
      status: 502,
      code: "SOURCE_UNREACHABLE",
      message: "DNS lookup of the webhook host failed",
    });
  });

  test("bad requests: unknown field, no URL, no secret", async () => {
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
    expect(await readEngineError(await post({ field: "webhook" }))).toMatchObject({
      status: 400,
      field: "webhook",
    });
    expect((await post({ url: "https://public.test/", field: "webhook" }, false)).status).toBe(401);
  });
});

describe("ALLOW_PRIVATE_SOURCES=true opens loopback only", () => {
  test.each(["loopback.test", "loopback6.test", "mapped.test"])("%s: allowed", async (name) => {
    const res = await client(development).resolve({ url: `http://${name}/`, field: "webhook" });
    expect(res.status).toBe(200);
  });

  test.each(["internal.test", "home.test", "metadata.test", "unspecified.test", "ula.test"])(
    "%s: still refused",
    async (name) => {
      const res = await client(development).resolve({ url: `http://${name}/`, field: "webhook" });
      expect(res.status).toBe(400);
    },
  );
});
