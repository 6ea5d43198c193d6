import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../../src/errors/codes";
import { ERROR_HELP } from "../../../src/errors/help";
import { call, newAccount } from "../../helpers/api";
import { cspDirectives, textOf } from "../../helpers/html";

const plain = (text: string) => text.replace(/`/g, "");

describe.each(Object.entries(ERROR_CODES))("the type page of %s", (code, row) => {
  it(`/errors/${row.suffix} explains the error, its causes and what to do`, async () => {
    const response = await call(`/errors/${row.suffix}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(cspDirectives(response.headers.get("content-security-policy"))["default-src"]).toEqual(["'none'"]);
    const text = textOf(await response.text());
    const help = ERROR_HELP[code as keyof typeof ERROR_CODES];
    expect(text).toContain(`${row.status} ${row.title}`);
    expect(text).toContain(code);
    for (const sentence of [help.meaning, ...help.causes, ...help.actions])
      expect(text).toContain(plain(sentence));
  });
});

describe("error type URIs", () => {
  it("the type of a real problem response resolves to its page", async () => {
    const { key } = await newAccount();
    const problem = (await (await call("/v1/tasks", { method: "POST", key, json: {} })).json()) as {
      type: string;
    };
    expect(problem.type).toBe("http://api.test/errors/validation");
    const page = await call(new URL(problem.type).pathname);
    expect(page.status).toBe(200);
    expect(textOf(await page.text())).toContain("400 Validation Failed");
  });

  it("/errors lists every code", async () => {
    const response = await call("/errors");
    expect(response.status).toBe(200);
    const html = await response.text();
    for (const row of Object.values(ERROR_CODES)) expect(html).toContain(`href="/errors/${row.suffix}"`);
  });

  it.each(["nope", "VALIDATION", "validation.html"])("an unknown suffix %s is a 404 page", async (suffix) => {
    const response = await call(`/errors/${suffix}`);
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  });
});
