/**
 * The Worker's view of the media engine (containers/ffmpeg, protocol v1; routes in
 * containers/ffmpeg/README.md). The wire format is the engine's too: one definition as zod in
 * @p6/contract/wire (packages/contract), named here as the Worker's code reads it.
 */
import type { FetchRequest, JobRequest, JobType, PipelineRequest, ResolveRequest } from "@p6/contract/wire";

export type {
  ErrorBody as EngineErrorBody,
  FetchRequest as EngineFetchRequest,
  JobRequest as EngineJobRequest,
  JobType as EngineJobType,
  PipelineEvent as EnginePipelineEvent,
  PipelineRequest as EnginePipelineRequest,
  Priority,
  ResolveRequest as EngineResolveRequest,
} from "@p6/contract/wire";
export { ERROR_STATUS as ENGINE_ERROR_STATUS } from "@p6/contract/wire";

/**
 * The media engine as the Worker uses it, whichever way it is reached (ENGINE_URL in development and
 * tests, the Container binding in production).
 *
 * `run` and `fetchSource` resolve with the engine's raw Response: on 200 its body is the produced file
 * (stream it to R2, never buffer it) or, for video.probe, JSON; otherwise use `readEngineError`. Aborting
 * `signal` disconnects, which makes the engine kill the job.
 */
export interface MediaEngine {
  run(type: JobType, body: JobRequest, signal?: AbortSignal): Promise<Response>;
  /**
   * A pipeline as one job: on 200 the body is NDJSON, one EnginePipelineEvent a line (readPipelineEvents);
   * each step's file is then fetched with `pipelineFile` from the same instance.
   */
  runPipeline(body: PipelineRequest, signal?: AbortSignal): Promise<Response>;
  /** A file of a pipeline step (after its `succeeded` event), from the instance that runs the job. */
  pipelineFile(jobId: string, step: string, signal?: AbortSignal): Promise<Response>;
  fetchSource(body: FetchRequest, signal?: AbortSignal): Promise<Response>;
  /** Resolves a source URL's host and applies the engine's address policy (a task's sources, at creation). */
  resolve(body: ResolveRequest, signal?: AbortSignal): Promise<Response>;
  /** Progress of a live job (0..1), or null when the engine does not know it (finished or never seen). */
  progress(jobId: string): Promise<number | null>;
  /** Kills a live job; resolves quietly when it is already gone. */
  abort(jobId: string): Promise<void>;
}
