/**
 * "Exactly one of these fields" as the OpenAPI document states it. The rule itself stays a superRefine
 * (mark.ts `oneMark`, trim.ts `trimWindow`, the Worker's `oneSource`), so a refused request is a 400 naming the
 * field at fault; a zod union would refuse it as one `invalid_union` issue with no field. This is the same rule
 * for readers and client generators: a `oneOf` whose branches exclude each other, each requiring its own
 * field and forbidding the others with the `false` schema (JSON Schema 2020-12, as OpenAPI 3.1 uses it).
 * openapi-typescript types each branch `{ a: unknown; b?: never }` and intersects the union with the object's
 * properties, so a generated client refuses both fields and neither at compile time.
 */

type OneOfBranch = {
  /** What the branch is, as a reader picks it ("Logo by URL"). */
  title: string;
  /** The field this branch requires (and every other branch forbids). */
  field: string;
  /** More fields the server refuses next to this one (a text mark's font next to a logo). */
  forbids?: readonly string[];
};

/** A JSON Schema: an object, or `true` / `false` (anything / nothing). */
type JsonSchema = boolean | { [keyword: string]: unknown };

/** OpenAPI metadata (`.openapi({...exactlyOneOf(...)})`) adding the `oneOf` of mutually exclusive branches. */
export function exactlyOneOf(branches: readonly OneOfBranch[]): { oneOf: never[] } {
  const fields = branches.map((branch) => branch.field);
  const oneOf = branches.map(({ title, field, forbids = [] }) => {
    const forbidden = [...fields.filter((other) => other !== field), ...forbids];
    const properties: Record<string, JsonSchema> = { [field]: true };
    for (const name of forbidden) properties[name] = false;
    return { title, required: [field], properties };
  });
  // zod-to-openapi types schemas as objects; the boolean schemas are valid OpenAPI 3.1 all the same.
  return { oneOf: oneOf as never[] };
}
