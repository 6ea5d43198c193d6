import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { slotsFor } from "../../src/capacity/slots";
import { newAccount, problem } from "../helpers/api";
import { operateWith } from "../helpers/media";

/**
 * Order of answers (docs/decisions.md "Order of answers"): auth, rate limit, validation — URLs refused by their
 * literal form included — credits, then capacity. Issue 32: twelve synchronous calls with literal private,
 * loopback or metadata sources sent together by one account were answered 503 "already uses its share of the
 * media engine" instead of 400 naming source_url.
 */

/** Refused whatever ALLOW_PRIVATE_SOURCES says (it opens loopback only): twelve spellings, none loopback. */
const NEVER_ALLOWED = [
  "http://10.0.0.1/a.mp4", // private
  "http://169.254.169.254/latest/meta-data/", // metadata (link-local)
  "http://0xA9FEA9FE/latest/meta-data/", // metadata in hex
  "http://2852039166/latest/meta-data/", // metadata as one decimal number
  "http://0251.0376.0251.0376/latest/meta-data/", // metadata in octal
  "http://[::ffff:169.254.169.254]/latest/meta-data/", // metadata IPv4-mapped
  "http://[::ffff:a9fe:a9fe]/", // metadata IPv4-mapped, hex groups
  "http://[::ffff:10.0.0.1]/a.mp4", // private IPv4-mapped
  "http://0.0.0.0/a.mp4", // unspecified
  "http://0300.0250.1.1/a.mp4", // 192.168.1.1 in octal
  "http://[fd00::1]/a.mp4", // unique local
  "http://[fe80::1]/a.mp4", // link-local
];

/** Loopback in every spelling: refused where ALLOW_PRIVATE_SOURCES is false (production). */
const LOOPBACK = [
  "http://127.0.0.1/a.mp4",
  "http://127.1/a.mp4",
  "http://2130706433/a.mp4",
  "http://0x7f000001/a.mp4",
  "http://[::1]/a.mp4",
  "http://[::ffff:127.0.0.1]/a.mp4",
  "http://localhost/a.mp4",
];

/** A one-slot share the account already uses (a job of its own in flight), so capacity would answer 503. */
async function shareInUse(accountId: string) {
  const grant = await slotsFor(env, accountId).acquire(`held-${crypto.randomUUID()}`, 1, 60_000);
  expect(grant.granted).toBe(true);
}

async function expectForbiddenSource(response: Response, url: string) {
  const text = await response.clone().text();
  expect(response.status, `${url}: ${text}`).toBe(400);
  const body = await problem(response);
  expect(body.code).toBe("VALIDATION_INVALID_ARGUMENT");
  expect(body.errors).toEqual([expect.objectContaining({ code: "forbidden_url", field: "source_url" })]);
}

describe("URLs refused by their literal form are answered before credits and capacity", () => {
  it("12 literal-SSRF synchronous calls at once from one account whose share is in use: 12 × 400 source_url", async () => {
    expect(NEVER_ALLOWED).toHaveLength(12);
    const { key, accountId } = await newAccount({ credits: 100 });
    await shareInUse(accountId);
    const responses = await Promise.all(
      NEVER_ALLOWED.map((url) =>
        operateWith({ ENGINE_ACCOUNT_MAX_SLOTS: "1" }, "/v1/video/probe", key, { source_url: url }),
      ),
    );
    for (const [i, response] of responses.entries()) await expectForbiddenSource(response, NEVER_ALLOWED[i]!);
  });

  it("loopback in every spelling, where private sources are closed, at once: 400 source_url", async () => {
    const { key, accountId } = await newAccount({ credits: 100 });
    await shareInUse(accountId);
    const responses = await Promise.all(
      LOOPBACK.map((url) =>
        operateWith(
          { ENGINE_ACCOUNT_MAX_SLOTS: "1", ALLOW_PRIVATE_SOURCES: "false" },
          "/v1/video/probe",
          key,
          {
            source_url: url,
          },
        ),
      ),
    );
    for (const [i, response] of responses.entries()) await expectForbiddenSource(response, LOOPBACK[i]!);
  });

  it("validation before credits: a literal metadata source with no credits is 400, not 402", async () => {
    const { key } = await newAccount({ credits: 0 });
    const url = "http://0xA9FEA9FE/latest/meta-data/";
    await expectForbiddenSource(await operateWith({}, "/v1/video/probe", key, { source_url: url }), url);
  });

  it("a literal metadata watermark_url is 400 naming params.watermark_url before capacity", async () => {
    const { key, accountId } = await newAccount({ credits: 100 });
    await shareInUse(accountId);
    const response = await operateWith({ ENGINE_ACCOUNT_MAX_SLOTS: "1" }, "/v1/image/watermark", key, {
      source_url: "https://example.com/in.png",
      params: { watermark_url: "http://[::ffff:169.254.169.254]/logo.png" },
    });
    expect(response.status).toBe(400);
    const body = await problem(response);
    expect(body.errors).toEqual([
      expect.objectContaining({ code: "forbidden_url", field: "params.watermark_url" }),
    ]);
  });

  it("a request that could run still meets capacity: a public source over the share is 503", async () => {
    const { key, accountId } = await newAccount({ credits: 100 });
    await shareInUse(accountId);
    const response = await operateWith({ ENGINE_ACCOUNT_MAX_SLOTS: "1" }, "/v1/video/probe", key, {
      source_url: "https://example.com/in.mp4",
    });
    expect(response.status).toBe(503);
    expect((await problem(response)).code).toBe("SERVICE_UNAVAILABLE");
  });
});
