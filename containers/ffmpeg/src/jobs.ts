/** Jobs alive in this engine, by the client-chosen job_id: state, progress and abort. */
import { EngineError, type JobStatus } from "./protocol.ts";

export interface LiveJob {
  id: string;
  state: JobStatus["state"];
  progress: number;
  controller: AbortController;
}

export class JobRegistry {
  private readonly jobs = new Map<string, LiveJob>();

  /** Registers a job; refuses an id that is already live. */
  create(id: string): LiveJob {
    if (this.jobs.has(id)) {
      throw new EngineError("VALIDATION_INVALID_ARGUMENT", "a job with this job_id is already running", {
        field: "job_id",
      });
    }
    const job: LiveJob = { id, state: "queued", progress: 0, controller: new AbortController() };
    this.jobs.set(id, job);
    return job;
  }

  get(id: string): LiveJob | undefined {
    return this.jobs.get(id);
  }

  delete(job: LiveJob): void {
    if (this.jobs.get(job.id) === job) this.jobs.delete(job.id);
  }

  status(id: string): JobStatus | null {
    const job = this.jobs.get(id);
    return job === undefined ? null : { state: job.state, progress: Math.round(job.progress * 1000) / 1000 };
  }

  /** Aborts a job (kills its processes; its request ends and cleans up). */
  abort(id: string, reason: EngineError): boolean {
    const job = this.jobs.get(id);
    if (job === undefined) return false;
    job.controller.abort(reason);
    return true;
  }

  /** Aborts the job with PROCESSING_TIMEOUT once its budget has passed; clear the timer when it ends. */
  timeout(job: LiveJob, timeoutMs: number): NodeJS.Timeout {
    return setTimeout(
      () =>
        job.controller.abort(
          new EngineError(
            "PROCESSING_TIMEOUT",
            `processing exceeded the time budget of ${Math.round(timeoutMs / 100) / 10} s`,
          ),
        ),
      timeoutMs,
    );
  }

  abortAll(reason: EngineError): void {
    for (const job of this.jobs.values()) job.controller.abort(reason);
  }

  get size(): number {
    return this.jobs.size;
  }
}
