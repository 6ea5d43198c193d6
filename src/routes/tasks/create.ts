import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { HttpUrl } from "@p6/contract/params";
import { PipelineParamsSchema, pipelineCost } from "@p6/contract/pipeline";
import type { Config } from "../../config/config";
import { errorResponses, headers } from "../../errors/openapi";
import { checkTargets, targetResolver } from "../../fetch/targets";
import type { AppEnv } from "../../http/context";
import { PreferWaitHeaders, preferredWait } from "../../http/prefer";
import { fieldErrors, validationError } from "../../http/validation";
import { getOperation, OPERATION_TYPES } from "../../operations";
import { checkTextMark } from "../../operations/text-mark";
import { createTask } from "../../tasks/create";
import { checkPipeline, PIPELINE_TYPE, queuedSteps } from "../../tasks/pipeline";
import type { TaskMessage } from "../../tasks/queue";
import { serializeTask } from "../../tasks/serialize";
import { taskWhenEnded } from "../../tasks/wait";
import { checkUploadSources, UPLOAD_SOURCE_PREFIX } from "../../uploads/source";
import { WEBHOOK_EVENTS } from "../../webhooks/events";
import { oneSource, sourceShape } from "../sources";
import { documentedTaskBody } from "./documented-body";
import { TaskSchema } from "./schema";

const CreateTaskBody = z
  .strictObject({
    type: z.enum([...OPERATION_TYPES, PIPELINE_TYPE]).openapi({
      description:
        "The operation: every type of the registry (image.watermark, video.trim, …), or pipeline: several of them on one source.",
      example: "video.trim",
    }),
    ...sourceShape,
    idempotency_key: z.string().min(1).max(64).optional().openapi({
      description:
        "At most 64 characters. A repeat with the same key returns the original task (200, Idempotent-Replayed: true).",
      example: "order-1234",
    }),
    params: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "The operation's parameters, exactly those of its synchronous route." }),
    webhook: HttpUrl.optional().openapi({
      description:
        "URL notified (signed) when the task ends. Checked at creation and again before every delivery attempt: a name that resolves to a private or local address is refused.",
      example: "https://example.com/hooks/p6",
    }),
    webhook_events_filter: z.array(z.enum(WEBHOOK_EVENTS)).nullable().optional().openapi({
      description:
        "Events to deliver; default (absent or null) completed and failed. started (when the task begins processing) and canceled only when named.",
    }),
  })
  .openapi("CreateTask", {
    example: {
      type: "video.trim",
      source_url: "https://example.com/in.mp4",
      params: { start: 5, duration: 10 },
    },
  });

const route = createRoute({
  method: "post",
  path: "/v1/tasks",
  operationId: "createTask",
  tags: ["Tasks"],
  summary: "Create a task",
  description:
    "Validates the type's params (a text mark with characters no font covers, or over the pixel budget at its font_size, is the 400 of the synchronous route, naming `params.text` or `params.font_size`); checks that `source_upload_id` and `params.watermark_upload_id` name complete uploads of the account (404 for an unknown or another account's, 410 expired, 409 incomplete, naming the field); checks `source_url`, `params.watermark_url` and `webhook` by the source rules (a URL whose host is or resolves to a loopback, private, link-local, metadata or unspecified address is refused with 400, `errors[].code` `forbidden_url` naming each field) before anything is reserved; reserves the type's cost in credits (402 when short; refunded if the task fails or is canceled) and queues the task. With `Prefer: wait=<seconds>` the answer (still 201, or 200 for a repeat) is held until the task ends or those seconds pass, and gives the task as it is then.",
  request: {
    headers: PreferWaitHeaders,
    // Exactly one of source_url or source_upload_id: refined here only, so the documented variants keep the shape.
    body: {
      required: true,
      content: { "application/json": { schema: CreateTaskBody.superRefine(oneSource) } },
    },
  },
  responses: {
    201: {
      description: "Created.",
      headers: headers("Location", "Preference-Applied"),
      content: { "application/json": { schema: TaskSchema } },
    },
    200: {
      description: "A repeated idempotency_key: the original task (Idempotent-Replayed: true).",
      headers: headers("Idempotent-Replayed", "Preference-Applied"),
      content: { "application/json": { schema: TaskSchema } },
    },
    ...errorResponses(400, 401, 402, 403, 404, 405, 409, 410, 413, 415, 429, 500),
  },
});

export function registerCreateTask(app: OpenAPIHono<AppEnv>) {
  // Validated in two steps (the body, then the type's params); documented as the oneOf they amount to.
  app.openAPIRegistry.registerPath({
    ...route,
    request: { headers: PreferWaitHeaders, ...documentedTaskBody(CreateTaskBody) },
  });
  app.openapi({ ...route, hide: true }, async (c) => {
    const body = c.req.valid("json");
    const config = c.get("config");
    const accountId = c.get("principal").accountId;
    const plan =
      body.type === PIPELINE_TYPE
        ? await pipelineTask(c.env, config, accountId, body.params)
        : await operationTask(c.env, body.type, body.params);
    await checkUploadSources(
      c.env,
      accountId,
      { sourceUploadId: body.source_upload_id, watermarkUploadId: plan.watermarkUploadId },
      Date.now(),
    );
    await checkTargets(
      { engine: targetResolver(c.env, config), dohUrl: config.dohUrl },
      config.allowPrivateSources,
      { sourceUrl: body.source_url, watermarkUrl: plan.watermarkUrl, webhookUrl: body.webhook },
    );
    const origin = new URL(c.req.url).origin;
    const wait = preferredWait(c.req.valid("header").prefer);
    const { task: stored, created } = await createTask(c.get("db"), {
      accountId,
      type: body.type,
      cost: plan.cost,
      ...(plan.steps ? { steps: plan.steps } : {}),
      // An upload is stored by reference and signed for the engine when the task runs (src/uploads/source.ts).
      sourceUrl: body.source_url ?? `${UPLOAD_SOURCE_PREFIX}${body.source_upload_id}`,
      params: body.params ?? {},
      webhookUrl: body.webhook ?? null,
      webhookEvents: body.webhook_events_filter ?? null,
      idempotencyKey: body.idempotency_key ?? null,
      requestId: c.get("requestId"),
      origin,
      retentionMs: config.outputTtlMs,
      now: Date.now(),
    });
    if (created) await c.env.TASK_QUEUE.send({ taskId: stored.id } satisfies TaskMessage);
    let task = stored;
    if (wait) {
      task = await taskWhenEnded(c.env, c.get("db"), stored, wait);
      c.header("Preference-Applied", `wait=${wait}`);
    }
    const view = await serializeTask(task, { origin, fileSigningSecret: config.fileSigningSecret });
    if (!created) {
      c.header("Idempotent-Replayed", "true");
      return c.json(view, 200);
    }
    c.header("Location", view.urls.get);
    return c.json(view, 201);
  });
}

/** The params of a task with its type's schema, errors named params.<field> (validation.ts). */
function parsedParams<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const parsed = schema.safeParse(params ?? {});
  if (!parsed.success) {
    throw validationError(
      fieldErrors(parsed.error, "json").map((e) => ({ ...e, field: `params.${e.field}` })),
    );
  }
  return parsed.data;
}

/**
 * An operation's task: its params valid, and what the run would refuse at once refused now, before the
 * credits are reserved (a text mark no font can draw, or over the pixel budget, is the same 400 as on the
 * synchronous route).
 */
async function operationTask(env: Env, type: string, given: unknown) {
  const operation = getOperation(type)!;
  const params = parsedParams(operation.params, given) as {
    watermark_url?: string;
    watermark_upload_id?: string;
  };
  await checkTextMark(env, params);
  return {
    cost: operation.cost,
    steps: undefined,
    watermarkUrl: params.watermark_url,
    watermarkUploadId: params.watermark_upload_id,
  };
}

/** A pipeline: its graph and each step's params valid, each step's marks and logos checked (src/tasks/pipeline.ts). */
async function pipelineTask(env: Env, config: Config, accountId: string, given: unknown) {
  const { steps } = parsedParams(PipelineParamsSchema, given);
  await checkPipeline(env, config, accountId, steps, Date.now());
  return {
    cost: pipelineCost(steps),
    steps: queuedSteps(steps),
    watermarkUrl: undefined,
    watermarkUploadId: undefined,
  };
}
