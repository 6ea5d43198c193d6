import { z } from "@hono/zod-openapi";
import { MAX_PIPELINE_STEPS, stepShape } from "@p6/contract/pipeline";
import { OPERATIONS, schemaNameOf } from "../../operations";
import type { Operation } from "../../operations/types";
import { PIPELINE_TYPE } from "../../tasks/pipeline";
import { sourceVariants } from "../sources";

/** The example pipeline: a clip, watermarked, its poster, its audio and its facts. */
export const PIPELINE_EXAMPLE = {
  type: PIPELINE_TYPE,
  source_url: "https://example.com/in.mp4",
  params: {
    steps: [
      { name: "clip", type: "video.trim", params: { start: 10, duration: 10 } },
      {
        name: "marked",
        type: "video.watermark",
        use: "clip",
        params: { watermark_url: "https://example.com/logo.png" },
      },
      { name: "poster", type: "video.extract-cover", use: "marked", params: { time: 1 } },
      { name: "audio", type: "video.extract-audio", use: "clip", params: { format: "mp3" } },
      { name: "info", type: "video.probe", use: "marked" },
    ],
  },
};

/** An operation's params where a body or a step names them: optional exactly when {} is valid for the type. */
const paramsOf = (operation: Operation) =>
  operation.params.safeParse({}).success ? operation.params.optional() : operation.params;

/**
 * A pipeline's params as the document shows them: each step a variant discriminated by `type`, with that
 * operation's own params (its one-of rules included). The Worker and the engine validate a step's params by
 * its type's schema (checkSteps in @p6/contract/pipeline), naming steps[i].params.<field>; this is the oneOf
 * that amounts to.
 */
function documentedPipelineParams() {
  const steps = OPERATIONS.map((operation) =>
    z
      .strictObject({
        ...stepShape,
        type: z.literal(operation.type).openapi({ description: operation.summary }),
        params: paramsOf(operation),
      })
      .openapi(`${schemaNameOf(operation.type)}Step`, {
        description: `A ${operation.type} step (${operation.cost} credit${operation.cost === 1 ? "" : "s"}); params as POST /v1/${operation.type.replace(".", "/")} takes them.`,
      }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]];
  return z
    .strictObject({
      steps: z
        .array(z.discriminatedUnion("type", steps).openapi("PipelineStep"))
        .min(1)
        .max(MAX_PIPELINE_STEPS)
        .openapi({ description: `1 to ${MAX_PIPELINE_STEPS} steps, run in order.` }),
    })
    .openapi("PipelineParams");
}

/**
 * POST /v1/tasks's body as the document shows it: a oneOf with one variant per task type of the registry and
 * one for pipelines, discriminated by `type`, each with that type's own params schema. The route validates `common` (the body
 * with `type` as an enum and `params` as any object) and then the type's params, so that params errors are
 * named params.<field>; the variants accept exactly what those two steps accept (test/routes/docs checks it).
 * Each variant states the one-of of its source (source_url or source_upload_id) as a oneOf too.
 */
export function documentedTaskBody(common: z.ZodObject) {
  const variants = OPERATIONS.map((operation) =>
    z
      .strictObject({
        type: z.literal(operation.type).openapi({ description: operation.summary }),
        ...common.omit({ type: true, params: true }).shape,
        // Absent params are validated as {}.
        params: paramsOf(operation),
      })
      .openapi(`Create${schemaNameOf(operation.type)}Task`, {
        ...sourceVariants,
        description: `A task of type ${operation.type} (${operation.cost} credit${operation.cost === 1 ? "" : "s"}); params as POST /v1/${operation.type.replace(".", "/")} takes them.`,
      }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]];
  const pipeline = z
    .strictObject({
      type: z.literal(PIPELINE_TYPE).openapi({ description: "Several operations on one source." }),
      ...common.omit({ type: true, params: true }).shape,
      params: documentedPipelineParams(),
    })
    .openapi("CreatePipelineTask", {
      ...sourceVariants,
      description: `A pipeline: 1 to ${MAX_PIPELINE_STEPS} steps, each any operation, reading the task's source or an earlier step's output (\`use\`), run as one job on one fetch of the source. Costs the sum of its steps' costs, reserved at creation; a task that fails or is canceled is charged only for the steps that succeeded.`,
      example: PIPELINE_EXAMPLE,
    });
  variants.push(pipeline);
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
