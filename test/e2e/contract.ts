import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { Middleware } from "openapi-fetch";

/**
 * Checks responses against the OpenAPI document the service serves: the status is one the operation
 * declares, every required response header is present, every declared header that is present matches its
 * schema, the Content-Type is a declared one, and a JSON body validates against its schema (Ajv, JSON
 * Schema 2020-12, the dialect of OpenAPI 3.1). Failures are collected, not thrown, so a test can assert none.
 */

type Header = { required?: boolean; schema?: object; $ref?: string };
type ResponseObject = { headers?: Record<string, Header>; content?: Record<string, { schema?: object }> };
type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  webhooks?: Record<
    string,
    Record<string, { requestBody?: { content?: Record<string, { schema?: object }> } }>
  >;
};

const DOC_ID = "https://p6.test/openapi.json";
const pointer = (...parts: string[]) =>
  parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

export type ContractFailure = { request: string; status: number; problems: string[] };

export function contractChecker(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  const failures: ContractFailure[] = [];
  let checked = 0;

  const validate = (ref: string, value: unknown) => {
    const check = ajv.getSchema(`${DOC_ID}#/${ref}`);
    if (!check) return [`no schema at ${ref}`];
    return check(value)
      ? []
      : (check.errors ?? []).map(
          (e) => `${e.instancePath || "(body)"} ${e.message} ${JSON.stringify(e.params)}`,
        );
  };

  /** Checks one response of `method schemaPath`; reads a clone, so the caller's body is untouched. */
  async function checkResponse(method: string, schemaPath: string, response: Response) {
    checked++;
    const problems: string[] = [];
    const operation = doc.paths[schemaPath]?.[method.toLowerCase()];
    if (!operation) {
      problems.push(`${method} ${schemaPath} is not in the document`);
    } else {
      const status = String(response.status);
      const key =
        status in operation.responses
          ? status
          : `${status[0]}XX` in operation.responses
            ? `${status[0]}XX`
            : "default";
      const declared = operation.responses[key];
      const base = pointer("paths", schemaPath, method.toLowerCase(), "responses", key);
      if (!declared) {
        problems.push(`status ${status} is not declared`);
      } else {
        for (const [name, header] of Object.entries(declared.headers ?? {})) {
          const value = response.headers.get(name);
          if (value === null) {
            if (header.required) problems.push(`required header ${name} is missing`);
            continue;
          }
          if (header.schema) {
            problems.push(
              ...validate(`${base}/${pointer("headers", name, "schema")}`, value).map(
                (p) => `header ${name}: ${p}`,
              ),
            );
          }
        }
        const contentType = response.headers.get("content-type")?.split(";")[0]?.trim() ?? "";
        const text = await response.clone().text();
        const content = declared.content ?? {};
        if (Object.keys(content).length === 0) {
          if (text !== "") problems.push(`a body (${contentType}) where none is declared`);
        } else if (!(contentType in content) && !content["*/*"]) {
          problems.push(
            `content-type ${contentType || "(none)"} is not one of ${Object.keys(content).join(", ")}`,
          );
        } else if (/json/.test(contentType) && content[contentType]?.schema) {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            problems.push("the body is not JSON");
          }
          if (body !== undefined) {
            problems.push(...validate(`${base}/${pointer("content", contentType, "schema")}`, body));
          }
        }
      }
    }
    if (problems.length > 0) {
      failures.push({
        request: `${method} ${schemaPath} (${response.url})`,
        status: response.status,
        problems,
      });
    }
  }

  /** An openapi-fetch middleware that checks every response the client receives. */
  const middleware: Middleware = {
    async onResponse({ request, schemaPath, response }) {
      await checkResponse(request.method, schemaPath, response);
      return undefined;
    },
  };

  /** Validates a webhook body against the document's webhook of that event (when the document has one). */
  function checkWebhookBody(event: string, body: unknown) {
    const webhook = doc.webhooks?.[event]?.post;
    const content = webhook?.requestBody?.content?.["application/json"];
    if (!content?.schema) return false;
    const problems = validate(
      pointer("webhooks", event, "post", "requestBody", "content", "application/json", "schema"),
      body,
    );
    if (problems.length > 0) failures.push({ request: `webhook ${event}`, status: 0, problems });
    return true;
  }

  return { middleware, checkResponse, checkWebhookBody, failures, checked: () => checked };
}
