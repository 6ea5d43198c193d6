import type { Document, Operation, Parameter } from "./openapi";
import { exampleOf } from "./schema";

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

const headerName = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, dash: string, ch: string) => dash + ch.toUpperCase());

/** A curl command for one operation: required parameters, the body's example, and the key from $P6_API_KEY. */
export function curlExample(
  doc: Document,
  input: {
    baseUrl: string;
    method: string;
    path: string;
    parameters: Parameter[];
    operation: Operation;
    authenticated: boolean;
  },
): string {
  const value = (parameter: Parameter) =>
    String(parameter.example ?? (parameter.schema ? exampleOf(doc, parameter.schema) : parameter.name));
  let path = input.path;
  const query = new URLSearchParams();
  const headers: string[] = [];
  for (const parameter of input.parameters) {
    if (parameter.in === "path")
      path = path.replace(`{${parameter.name}}`, encodeURIComponent(value(parameter)));
    else if (!parameter.required) continue;
    else if (parameter.in === "query") query.set(parameter.name, value(parameter));
    else if (parameter.in === "header") headers.push(`${headerName(parameter.name)}: ${value(parameter)}`);
  }
  const url = `${input.baseUrl}${path}${query.size > 0 ? `?${query}` : ""}`;
  const lines = [
    `curl ${input.method === "get" ? "" : `-X ${input.method.toUpperCase()} `}${shellQuote(url)}`,
  ];
  if (input.authenticated) lines.push(`-H "Authorization: Bearer $P6_API_KEY"`);
  for (const header of headers) lines.push(`-H ${shellQuote(header)}`);
  const json = input.operation.requestBody?.content?.["application/json"];
  if (json) {
    const body =
      json.example ?? Object.values(json.examples ?? {})[0]?.value ?? exampleOf(doc, json.schema ?? {});
    lines.push(`-H 'Content-Type: application/json'`, `-d ${shellQuote(JSON.stringify(body))}`);
  }
  return lines.join(" \\\n  ");
}
