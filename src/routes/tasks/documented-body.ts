import { z } from "@hono/zod-openapi";
import { OPERATIONS, schemaNameOf } from "../../operations";

/**
 * POST /v1/tasks's body as the document shows it: a oneOf with one variant per task type of the registry,
 * discriminated by `type`, each with that type's own params schema. The route validates `common` (the body
 * with `type` as an enum and `params` as any object) and then the type's params, so that params errors are
 * named params.<field>; the variants accept exactly what those two steps accept (test/routes/docs checks it).
 */
export function documentedTaskBody(common: z.ZodObject) {
  const variants = OPERATIONS.map((operation) =>
    z
      .strictObject({
        type: z.literal(operation.type).openapi({ description: operation.summary }),
        ...common.omit({ type: true, params: true }).shape,
        // Absent params are validated as {}: optional exactly when {} is valid for the type.
        params: operation.params.safeParse({}).success ? operation.params.optional() : operation.params,
      })
      .openapi(`Create${schemaNameOf(operation.type)}Task`, {
        description: `A task of type ${operation.type} (${operation.cost} credit${operation.cost === 1 ? "" : "s"}); params as POST /v1/${operation.type.replace(".", "/")} takes them.`,
      }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]];
  const schema = z.discriminatedUnion("type", variants).openapi("CreateTask", {
    description: "A task of one of the operation types; `type` selects the variant and its params.",
    example: {
      type: "video.trim",
      source_url: "https://example.com/in.mp4",
      params: { start: 5, duration: 10 },
    },
  });
  return { body: { required: true, content: { "application/json": { schema } } } };
}
