/** One request of a code sample: parameter values and body already chosen (src/docs/code-samples.ts). */
export type RequestExample = {
  method: string;
  path: string;
  pathParams: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body?: unknown;
  /** A file sent as the raw body in place of JSON (a tus PATCH's bytes), with its content type. */
  file?: { name: string; contentType: string };
  authenticated: boolean;
};

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

const headerName = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, dash: string, ch: string) => dash + ch.toUpperCase());

/** A curl command for one request, the key from $P6_API_KEY. */
export function curlExample(baseUrl: string, request: RequestExample): string {
  let path = request.path;
  for (const [name, value] of Object.entries(request.pathParams))
    path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
  const query = new URLSearchParams(
    Object.entries(request.query).map(([name, value]) => [name, String(value)]),
  );
  const url = `${baseUrl}${path}${query.size > 0 ? `?${query}` : ""}`;
  // HEAD as `-I`: with `-X HEAD` curl waits for the body the answer's Content-Length announces, and hangs.
  const method =
    request.method === "get" ? "" : request.method === "head" ? "-I " : `-X ${request.method.toUpperCase()} `;
  const lines = [`curl ${method}${shellQuote(url)}`];
  if (request.authenticated) lines.push(`-H "Authorization: Bearer $P6_API_KEY"`);
  for (const [name, value] of Object.entries(request.headers))
    lines.push(`-H ${shellQuote(`${headerName(name)}: ${value}`)}`);
  if (request.file !== undefined) {
    lines.push(
      `-H ${shellQuote(`Content-Type: ${request.file.contentType}`)}`,
      `--data-binary @${request.file.name}`,
    );
  } else if (request.body !== undefined) {
    lines.push(`-H 'Content-Type: application/json'`, `-d ${shellQuote(JSON.stringify(request.body))}`);
  }
  return lines.join(" \\\n  ");
}
