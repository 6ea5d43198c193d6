/**
 * A pipeline run as one job (docs/operations.md "Pipelines"): its steps in order, in one slot, the task's
 * source fetched once and shared by every step that reads it, each later step reading an earlier one's output
 * from this job's directory (intermediates never leave the engine's disk). Each step's file stays in its own
 * directory after it has run, for the client to GET (routes/pipelines.ts); `emit` reports each step as it
 * starts, succeeds or fails. The steps' params and text marks were checked before the job took its slot.
 */
import { createReadStream } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import type http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { sniff } from "@p6/contract/sniff";
import { EngineError, type PipelineEvent, type PipelineRequest } from "../protocol.ts";
import { LIMITS } from "../security/limits.ts";
import { prepareJob } from "./index.ts";
import {
  imageInput,
  type JobContext,
  mediaInput,
  type Output,
  openInput,
  type PreparedJob,
  textMarkOf,
} from "./job.ts";
import { SourceDownload } from "./source.ts";
import { runOnInput } from "./speculate.ts";

type Step = PipelineRequest["steps"][number];
export type PreparedStep = Step & { job: PreparedJob };
export type FileOutput = Extract<Output, { kind: "file" }>;

/** Each step's job, its params validated and its text mark read: a refusal names the step's field. */
export function prepareSteps(steps: readonly Step[]): PreparedStep[] {
  return steps.map((step, i) => {
    try {
      return { ...step, job: prepareJob(step.type, step.params, { textMark: textMarkOf(step.text_mark) }) };
    } catch (err) {
      if (err instanceof EngineError && err.field !== undefined) {
        throw new EngineError(err.code, err.message, { field: `steps[${i}].${err.field}` });
      }
      throw err;
    }
  });
}

type Opened = Awaited<ReturnType<typeof openInput>>;

/**
 * An earlier step's output as a source: its file read through the same SourceDownload as a fetched source (a
 * copy in this step's directory, readable while it is written), so every operation reads it as it reads any
 * source. A file stream stands in for the HTTP response: no socket, no ranges.
 */
async function localSource(ctx: JobContext, file: string): Promise<Opened> {
  const { size } = await stat(file);
  const response = Object.assign(createReadStream(file), { headers: {}, statusCode: 200 });
  const source = new SourceDownload(
    {
      response: response as unknown as http.IncomingMessage,
      url: pathToFileURL(file),
      contentLength: size,
      redirects: 0,
      readTimeoutMs: 0,
    },
    path.join(ctx.dir, "source"),
    ctx.maxSourceBytes,
    // From disk to disk: nothing to hold back.
    Math.max(size, 1),
    null,
    Math.max(size, 1),
  );
  ctx.defer(() => source.destroy());
  return { source, sniffed: sniff(await source.read(0, LIMITS.sniffBytes)) };
}

/**
 * Runs the steps. Each file step's output goes into `files` by its name before its `succeeded` is emitted (so
 * it can be served at once); a step's failure is emitted, then thrown. `base` is the job's context: its
 * directory holds a directory per step, its `defer` what lives as long as the job (the shared source).
 */
export async function runSteps(
  base: JobContext,
  sourceUrl: string,
  steps: readonly PreparedStep[],
  files: Map<string, FileOutput>,
  emit: (event: PipelineEvent) => void,
): Promise<void> {
  let shared: Opened | undefined;
  for (const [i, step] of steps.entries()) {
    emit({ event: "started", step: step.name });
    const deferred: (() => void)[] = [];
    const ctx: JobContext = {
      ...base,
      dir: path.join(base.dir, `step-${i}`),
      setProgress: (f) => base.setProgress((i + Math.min(1, f)) / steps.length),
      defer: (fn) => deferred.push(fn),
    };
    let output: Output;
    try {
      await mkdir(ctx.dir);
      // The task's source is opened by the first step that reads it and kept for the others.
      if (step.use === undefined && shared === undefined) {
        shared = await openInput(base, sourceUrl, "source_url", base.maxSourceBytes, "source");
      }
      const opened = step.use === undefined ? shared! : await localSource(ctx, files.get(step.use)!.path);
      const { job } = step;
      output =
        job.kind === "image"
          ? await job.run(ctx, await imageInput(ctx, opened.source, opened.sniffed))
          : await runOnInput(ctx, await mediaInput(ctx, opened.source, opened.sniffed), job);
    } catch (err) {
      const reason = base.signal.aborted ? base.signal.reason : err;
      const failure =
        reason instanceof EngineError
          ? reason
          : new EngineError("INTERNAL", "internal engine error", { internal: String(err) });
      emit({ event: "failed", step: step.name, error: failure.toBody() });
      throw failure;
    } finally {
      for (const fn of deferred.splice(0)) fn();
    }
    base.setProgress((i + 1) / steps.length);
    if (output.kind === "file") {
      files.set(step.name, output);
      emit({
        event: "succeeded",
        step: step.name,
        file: { content_type: output.contentType, result: output.result },
      });
    } else {
      emit({ event: "succeeded", step: step.name, data: output.body as never });
    }
  }
  emit({ event: "done" });
}
