import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { checkAnswers, exchangeOf } from "../../helpers/answers";
import { BASE, newAccount } from "../../helpers/api";
import type { Exchange } from "../../support/exchange";

/**
 * The answer validator itself (test/support/answers.ts): every answer the worker tests receive is checked against
 * the OpenAPI documents when its file ends. Here, real answers pass, and the same answers with one drift planted
 * each are reported, each with the line a failing file would print.
 */

async function answer(path: string, init: RequestInit = {}) {
  const request = new Request(`${BASE}${path}`, init);
  // Not through `call`: these answers are the material of the test, not answers of the suite.
  return exchangeOf(request, await exports.default.fetch(request));
}

const withoutHeader = (exchange: Exchange, name: string) => ({
  ...exchange,
  headers: Object.fromEntries(Object.entries(exchange.headers).filter(([n]) => n !== name)),
});

describe("the answer validator catches a planted drift", () => {
  it("real answers pass: a 200 with its body, a HEAD 404 without one, a 401", async () => {
    const { key } = await newAccount({ credits: 3 });
    const auth = { Authorization: `Bearer ${key}` };
    const account = await answer("/v1/account", { headers: auth });
    const head = await answer("/v1/uploads/01JD5Z8X4QK3M7R2T9V6W1Y0AB", {
      method: "HEAD",
      headers: { ...auth, "Tus-Resumable": "1.0.0" },
    });
    const unauthorized = await answer("/v1/tasks");
    expect([account.status, head.status, unauthorized.status]).toEqual([200, 404, 401]);
    expect(head.body).toEqual({ kind: "none" });
    expect(await checkAnswers([account, head, unauthorized], { planted: true })).toMatchObject({
      failures: [],
      checked: 3,
    });
  });

  it("each drift is reported: status, field type, required header, header shape, media type, a body on HEAD", async () => {
    const { key } = await newAccount({ credits: 3 });
    const auth = { Authorization: `Bearer ${key}` };
    const account = await answer("/v1/account", { headers: auth });
    const head = await answer("/v1/uploads/01JD5Z8X4QK3M7R2T9V6W1Y0AB", {
      method: "HEAD",
      headers: { ...auth, "Tus-Resumable": "1.0.0" },
    });
    const body = account.body.kind === "json" ? (account.body.value as Record<string, unknown>) : {};
    const problem = {
      type: "http://api.test/errors/not-found",
      title: "Not Found",
      status: 404,
      code: "RESOURCE_NOT_FOUND",
    };
    const planted: [string, Exchange, RegExp][] = [
      [
        "an undocumented status",
        { ...account, status: 418 },
        /status 418 is not documented for GET \/v1\/account/,
      ],
      [
        "a field of the wrong type",
        { ...account, body: { kind: "json", value: { ...body, balance: "3" } } },
        /application\/json body does not match the document: \/balance must be integer/,
      ],
      [
        "a required field missing",
        { ...account, body: { kind: "json", value: { ...body, key: undefined } } },
        /must have required property 'key'/,
      ],
      [
        "a required header missing",
        withoutHeader(account, "x-request-id"),
        /required header X-Request-Id is missing/,
      ],
      [
        "a header of the wrong shape",
        { ...account, headers: { ...account.headers, "cache-control": "public" } },
        /header Cache-Control: "public" \(root\) must be equal to one of the allowed values {"allowedValues":\["no-store"\]}/,
      ],
      [
        "an undocumented media type",
        { ...account, headers: { ...account.headers, "content-type": "text/plain" } },
        /Content-Type text\/plain is not documented \(the document has application\/json\)/,
      ],
      [
        "a problem body on a HEAD answer",
        {
          ...head,
          headers: { ...head.headers, "content-type": "application/problem+json" },
          body: { kind: "json", value: problem },
        },
        /HEAD \/v1\/uploads\/01JD5Z8X4QK3M7R2T9V6W1Y0AB → 404: a body, where the document declares none/,
      ],
      [
        "a method the path does not have",
        { ...account, method: "PUT" },
        /PUT \/v1\/account is not in the document/,
      ],
    ];
    for (const [name, exchange, expected] of planted) {
      const { failures } = await checkAnswers([exchange], { planted: true });
      expect(failures, name).toHaveLength(1);
      expect(failures[0], name).toMatch(expected);
    }
  });
});
