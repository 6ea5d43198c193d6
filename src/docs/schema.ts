import { type Document, refName, resolveRef, type Schema } from "./openapi";

/** A schema as a reader sees it: a type label, the rules that constrain it, and its nested fields. */
export type SchemaView = {
  type: string;
  description?: string;
  facts: string[];
  fields: FieldView[];
  variants: VariantView[];
};
export type FieldView = SchemaView & { name: string; required: boolean };
export type VariantView = SchemaView & { label: string };

const MAX_DEPTH = 8;

const json = (value: unknown) => {
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
};

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

function facts(schema: Schema): string[] {
  const out: string[] = [];
  if (schema.enum) out.push(`one of: ${schema.enum.map((v) => json(v)).join(", ")}`);
  if (schema.const !== undefined) out.push(`always ${json(schema.const)}`);
  if (schema.minimum !== undefined) out.push(`≥ ${schema.minimum}`);
  if (schema.exclusiveMinimum !== undefined) out.push(`> ${schema.exclusiveMinimum}`);
  if (schema.maximum !== undefined) out.push(`≤ ${schema.maximum}`);
  if (schema.exclusiveMaximum !== undefined) out.push(`< ${schema.exclusiveMaximum}`);
  if (schema.minLength !== undefined) out.push(`length ≥ ${schema.minLength}`);
  if (schema.maxLength !== undefined) out.push(`length ≤ ${schema.maxLength}`);
  if (schema.minItems !== undefined) out.push(`items ≥ ${schema.minItems}`);
  if (schema.maxItems !== undefined) out.push(`items ≤ ${schema.maxItems}`);
  if (schema.pattern !== undefined) out.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) out.push(`default ${json(schema.default)}`);
  const example = schema.example ?? schema.examples?.[0];
  if (example !== undefined && (typeof example !== "object" || example === null)) {
    out.push(`example ${json(example)}`);
  }
  return out;
}

function typeLabel(schema: Schema, item?: SchemaView): string {
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const labels = types.map((type) => {
    if (type === "array") return `array of ${item?.type ?? "any"}`;
    if (type === "string" && schema.format) return `string (${schema.format})`;
    if (type === "integer" && schema.format) return `integer (${schema.format})`;
    return type;
  });
  if (labels.length > 0) return labels.join(" | ");
  if (schema.properties) return "object";
  if (schema.oneOf || schema.anyOf) return "one of";
  return "any";
}

/** The discriminator value of one variant, when the union has one. */
function variantLabel(doc: Document, union: Schema, variant: Schema, view: SchemaView, index: number) {
  const property = union.discriminator?.propertyName;
  const resolved = merged(doc, resolveRef<Schema>(doc, variant));
  const tag = property ? resolved.properties?.[property] : undefined;
  const tagValue = tag && (tag.const ?? tag.enum?.[0]);
  if (property && tagValue !== undefined) return `${property} = ${String(tagValue)}`;
  if (variant.$ref) return refName(variant.$ref);
  return resolved.title ?? `${view.type} (${index + 1})`;
}

/** Describes a schema, following references (a component already on the path is named, not expanded). */
export function describeSchema(doc: Document, input: Schema, path: string[] = []): SchemaView {
  if (input.$ref) {
    const name = refName(input.$ref);
    if (path.includes(name) || path.length >= MAX_DEPTH) {
      return { type: name, description: input.description, facts: [], fields: [], variants: [] };
    }
    const view = describeSchema(doc, resolveRef<Schema>(doc, input), [...path, name]);
    return { ...view, description: input.description ?? view.description };
  }
  const schema = merged(doc, input);
  const depthPath = [...path, ""];
  const item = schema.items ? describeSchema(doc, schema.items, depthPath) : undefined;
  const required = new Set(schema.required ?? []);
  const fields: FieldView[] =
    path.length >= MAX_DEPTH
      ? []
      : Object.entries(schema.properties ?? {}).map(([name, property]) => ({
          name,
          required: required.has(name),
          ...describeSchema(doc, property, depthPath),
        }));
  if (typeof schema.additionalProperties === "object" && Object.keys(schema.additionalProperties).length) {
    fields.push({
      name: "<any key>",
      required: false,
      ...describeSchema(doc, schema.additionalProperties, depthPath),
    });
  }
  const union = schema.oneOf ?? schema.anyOf ?? [];
  const variants = union.map((variant, index) => {
    const view = describeSchema(doc, variant, depthPath);
    return { ...view, label: variantLabel(doc, schema, variant, view, index) };
  });
  return {
    type: typeLabel(schema, item),
    description: schema.description,
    facts: facts(schema),
    fields: fields.length > 0 ? fields : (item?.fields ?? []),
    variants: variants.length > 0 ? variants : (item?.variants ?? []),
  };
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
