import { type Document, resolveRef, type Schema } from "./openapi.ts";

const MAX_DEPTH = 8;

function merged(doc: Document, schema: Schema): Schema {
  if (!schema.allOf) return schema;
  const out: Schema = { ...schema, allOf: undefined, properties: { ...schema.properties } };
  const required = [...(schema.required ?? [])];
  for (const part of schema.allOf.map((each) => merged(doc, resolveRef<Schema>(doc, each)))) {
    Object.assign(out, { ...part, ...out });
    Object.assign(out.properties!, part.properties);
    required.push(...(part.required ?? []));
  }
  return { ...out, required };
}

const PLACEHOLDER: Record<string, unknown> = {
  string: "string",
  integer: 0,
  number: 0,
  boolean: true,
  array: [],
  object: {},
  null: null,
};

/**
 * An example value: the schema's own example, else one built from its required properties (and constant ones,
 * such as a union's discriminator) and defaults.
 */
export function exampleOf(doc: Document, input: Schema, depth = 0): unknown {
  const schema = merged(doc, resolveRef<Schema>(doc, input));
  const own = schema.example ?? schema.examples?.[0] ?? schema.const ?? schema.enum?.[0];
  if (own !== undefined) return own;
  if (depth > MAX_DEPTH) return null;
  const first = (schema.oneOf ?? schema.anyOf)?.[0];
  if (first) return exampleOf(doc, first, depth + 1);
  if (schema.properties) {
    const required = new Set(schema.required ?? []);
    return Object.fromEntries(
      Object.entries(schema.properties)
        .filter(
          ([name, property]) => required.has(name) || resolveRef<Schema>(doc, property).const !== undefined,
        )
        .map(([name, property]) => [name, exampleOf(doc, property, depth + 1)]),
    );
  }
  if (schema.default !== undefined) return schema.default;
  if (schema.type === "string" && schema.format === "uri") return "https://example.com/in.mp4";
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === "array" && schema.items) return [exampleOf(doc, schema.items, depth + 1)];
  return type ? PLACEHOLDER[type] : null;
}
