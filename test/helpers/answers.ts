import { exports } from "cloudflare:workers";
import { expect, inject } from "vitest";
import type { AnswerBody, Documents, Exchange } from "../support/exchange";

/**
 * Every answer a test receives through the helpers (api.ts `call` and `send`) is recorded here and, when the
 * file ends, checked against the OpenAPI documents the Worker serves by the Node-side validator
 * (test/support/answers.ts): an undocumented status, a missing or misshapen header, a body its schema refuses
 * or a body where none is documented fails the file (test/helpers/answers-setup.ts). Recording reads a clone
 * of the answer, so the test reads its own copy untouched.
 */

const BASE = "http://api.test";
/** Long enough for any body the suite reads; a stream that never ends is reported, not waited on forever. */
const READ_LIMIT_MS = 20_000;

const pending: Promise<Exchange>[] = [];

const isJsonType = (mediaType: string) => mediaType === "application/json" || mediaType.endsWith("+json");

async function bodyOf(response: Response): Promise<AnswerBody> {
  if (response.body === null) return { kind: "none" };
  const mediaType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const reader = response.body.getReader();
  const timeout = setTimeout(() => void reader.cancel("not read in time").catch(() => {}), READ_LIMIT_MS);
  try {
    if (!isJsonType(mediaType)) {
      // Only whether there is a body matters: the first chunk says it, and the rest is left unread.
      let first = await reader.read();
      while (!first.done && first.value.byteLength === 0) first = await reader.read();
      void reader.cancel().catch(() => {});
      return first.done ? { kind: "none" } : { kind: "bytes" };
    }
    const chunks: Uint8Array[] = [];
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) chunks.push(chunk.value);
    const text = new TextDecoder().decode(await new Blob(chunks).arrayBuffer());
    if (text === "") return { kind: "none" };
    try {
      return { kind: "json", value: JSON.parse(text) };
    } catch {
      return { kind: "unparsable", text };
    }
  } finally {
    clearTimeout(timeout);
  }
}

/** Records the answer to `request` (a clone of it: the caller's copy is untouched) and returns the answer. */
export function record(request: Request, response: Response): Response {
  const test = expect.getState().currentTestName;
  pending.push(
    exchangeOf(request, response.clone()).then(
      (exchange) => ({ ...exchange, test }),
      (error) => ({
        ...summary(request, response),
        body: { kind: "unparsable", text: `unreadable: ${error}` },
        test,
      }),
    ),
  );
  return response;
}

/** The documents the Worker serves, fetched without being recorded. */
async function documents(): Promise<Documents> {
  const fetchJson = async (path: string, token?: string) => {
    const headers = token ? { Authorization: `Bearer ${token}` } : undefined;
    const response = await exports.default.fetch(new Request(`${BASE}${path}`, { headers }));
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    return response.json();
  };
  return {
    public: await fetchJson("/v1/openapi.json"),
    admin: await fetchJson("/admin/v1/openapi.json", "test-admin-token"),
  };
}

let documentsId: Promise<string> | undefined;

/** The validator's id of the served documents (sent once per workerd: they are the same for every file). */
function validatorDocuments(): Promise<string> {
  documentsId ??= (async () => {
    const response = await fetch(`${inject("answersUrl")}/documents`, {
      method: "POST",
      body: JSON.stringify(await documents()),
    });
    if (!response.ok) throw new Error(`answer validator: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { id: string }).id;
  })();
  documentsId.catch(() => {
    documentsId = undefined;
  });
  return documentsId;
}

/** What the validator finds wrong with these answers (one line each); `planted`: made up by a test. */
export async function checkAnswers(exchanges: Exchange[], options: { planted?: boolean } = {}) {
  const response = await fetch(`${inject("answersUrl")}/check`, {
    method: "POST",
    body: JSON.stringify({ id: await validatorDocuments(), exchanges, planted: options.planted === true }),
  });
  if (!response.ok) throw new Error(`answer validator: ${response.status} ${await response.text()}`);
  return (await response.json()) as { failures: string[]; checked: number; skipped: number };
}

/** The answers recorded since the last call, checked; the recording starts afresh. */
export async function checkRecordedAnswers() {
  const exchanges = await Promise.all(pending.splice(0));
  return checkAnswers(exchanges);
}

/** What the document says of a request body ([] when it accepts it): for tests that the rules agree. */
export async function documentedRequestErrors(method: string, path: string, body: unknown) {
  const response = await fetch(`${inject("answersUrl")}/check-request`, {
    method: "POST",
    body: JSON.stringify({
      id: await validatorDocuments(),
      method,
      path,
      mediaType: "application/json",
      body,
    }),
  });
  if (!response.ok) throw new Error(`answer validator: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { errors: string[] }).errors;
}

/**
 * The method the server answered: a POST to an upload URL carrying X-HTTP-Method-Override is the method it
 * names (tus core; src/app.ts), documented as that method.
 */
const methodOf = (request: Request) => {
  const override = request.headers.get("x-http-method-override");
  const path = new URL(request.url).pathname;
  const uploadUrl = path.startsWith("/v1/uploads/") || path.startsWith("/v1/direct-uploads/");
  return request.method === "POST" && override && uploadUrl ? override.toUpperCase() : request.method;
};

const summary = (request: Request, response: Response) => ({
  method: methodOf(request),
  path: new URL(request.url).pathname,
  status: response.status,
  headers: Object.fromEntries([...response.headers].map(([name, value]) => [name.toLowerCase(), value])),
});

/** An answer as the validator sees it (its body read), for tests that plant a drift in a real one. */
export async function exchangeOf(request: Request, response: Response): Promise<Exchange> {
  return { ...summary(request, response), body: await bodyOf(response) };
}
