/**
 * A pipeline's steps (docs/operations.md "Pipelines"): several operations on one source, each step reading the
 * task's source or an earlier step's output. One set of rules for the Worker, which refuses a bad graph before
 * anything is reserved, and the engine, which runs it: unique names, `use` naming an earlier step (so no
 * forward reference and no cycle), the kind a step takes matching what its `use` gives, each step's params by
 * its operation's schema, 1 to MAX_PIPELINE_STEPS steps.
 */
import { z } from "../params/zod.ts";
import { type MediaKind, OPERATION_TYPES, OPERATIONS, type OperationType } from "./index.ts";

export const MAX_PIPELINE_STEPS = 10;

export const StepNameSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/,
    "Must be 1 to 64 letters, digits, _ or -, starting with a letter or digit.",
  );

/** A step as a caller writes it: its params are checked by its type's schema in `checkSteps`. */
export const stepShape = {
  name: StepNameSchema.openapi({
    description: "Unique within the pipeline; outputs carry it as `step`.",
    example: "clip",
  }),
  type: z.enum(OPERATION_TYPES).openapi({ description: "The operation.", example: "video.trim" }),
  use: StepNameSchema.optional().openapi({
    description: "An earlier step whose output this step reads; default the task's source.",
    example: "clip",
  }),
  params: z
    .record(z.string(), z.unknown())
    .optional()
    .openapi({ description: "The operation's params, exactly those of its synchronous route." }),
};

export interface StepLike {
  name: string;
  type: OperationType;
  use?: string | undefined;
  params?: Record<string, unknown> | undefined;
}

/** The cost of a pipeline: the sum of its steps' costs. */
export const pipelineCost = (steps: readonly Pick<StepLike, "type">[]): number =>
  steps.reduce((sum, step) => sum + OPERATIONS[step.type].cost, 0);

/**
 * The graph rules, as issues on `steps` (a superRefine of the array's parent: paths start with "steps").
 * Each problem names the step's field: steps[1].use, steps[2].params.time.
 */
export function checkSteps(steps: readonly StepLike[], ctx: z.RefinementCtx): void {
  const at = (i: number, ...rest: PropertyKey[]) => ["steps", i, ...rest];
  /** Kinds the task's source must be of for every step reading it so far. */
  let sourceKinds: readonly MediaKind[] | null = null;
  steps.forEach((step, i) => {
    const spec = OPERATIONS[step.type];
    const first = steps.findIndex((s) => s.name === step.name);
    if (first < i) {
      ctx.addIssue({
        code: "custom",
        path: at(i, "name"),
        message: `Step ${first} is already named ${step.name}.`,
      });
    }
    if (step.use === undefined) {
      const agreed: readonly MediaKind[] = (sourceKinds ?? spec.takes).filter((k) => spec.takes.includes(k));
      if (agreed.length === 0) {
        ctx.addIssue({
          code: "custom",
          path: at(i, "type"),
          message: `${step.type} takes ${spec.takes.join(" or ")}, but earlier steps read the task's source as ${sourceKinds?.join(" or ")}; use a step's output instead.`,
        });
      } else sourceKinds = agreed;
    } else {
      const used = steps.findIndex((s) => s.name === step.use);
      if (used < 0) {
        ctx.addIssue({ code: "custom", path: at(i, "use"), message: `No step is named ${step.use}.` });
      } else if (used >= i) {
        ctx.addIssue({
          code: "custom",
          path: at(i, "use"),
          message: `Step ${step.use} does not come before this one: a step can use only an earlier step's output.`,
        });
      } else {
        const gives = OPERATIONS[steps[used]!.type].gives;
        if (gives === "json" || !spec.takes.includes(gives)) {
          ctx.addIssue({
            code: "custom",
            path: at(i, "use"),
            message: `Step ${step.use} (${steps[used]!.type}) gives ${gives === "json" ? "JSON, no file" : gives}; ${step.type} takes ${spec.takes.join(" or ")}.`,
          });
        }
      }
    }
    const params = spec.params.safeParse(step.params ?? {});
    if (!params.success) {
      for (const issue of params.error.issues)
        ctx.addIssue({ ...issue, path: at(i, "params", ...issue.path) } as never);
    }
  });
}

/**
 * Public params of a pipeline task (POST /v1/tasks with type "pipeline"). The OpenAPI document shows them per
 * step type, each step with its operation's params schema (the Worker's src/routes/tasks/documented-body.ts).
 */
export const PipelineParamsSchema = z
  .strictObject({ steps: z.array(z.strictObject(stepShape)).min(1).max(MAX_PIPELINE_STEPS) })
  .superRefine((p, ctx) => checkSteps(p.steps, ctx));
export type PipelineParams = z.output<typeof PipelineParamsSchema>;
