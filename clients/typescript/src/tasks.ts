import type { P6Client } from "./client.ts";
import type { components } from "./generated/api.js";

export type Task = components["schemas"]["Task"];
/** A pipeline task's step (Task.steps): its status, result and outputs. */
export type TaskStep = components["schemas"]["TaskStep"];
/** An output of a task (Task.outputs), with its `step` in a pipeline. */
export type TaskOutput = components["schemas"]["TaskOutput"];
/** The body of POST /v1/tasks for a pipeline. */
export type CreatePipelineTask = components["schemas"]["CreatePipelineTask"];
export type Problem = components["schemas"]["Problem"];

const TERMINAL = new Set<string>(["succeeded", "failed", "canceled"]);

/** An error answer of the API, with its RFC 9457 body. */
export class P6ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;

  constructor(status: number, problem: Problem, options?: ErrorOptions) {
    super(`${status} ${problem.code}: ${problem.detail ?? problem.title}`, options);
    this.name = "P6ApiError";
    this.status = status;
    this.problem = problem;
  }
}

export type WaitOptions = {
  /** Give up after this long (default 15 minutes, the service's task budget). */
  timeoutMs?: number;
  /**
   * Seconds each request asks the service to hold its answer until the task ends (`Prefer: wait`, 1 to 60,
   * default 60): the task comes back as soon as it has ended, as early as its webhook.
   */
  waitSeconds?: number;
  /**
   * Only when a server does not honour Prefer (no Preference-Applied in its answer): first pause between polls
   * (default 500 ms), growing 1.5× up to maxIntervalMs (default 5 s).
   */
  intervalMs?: number;
  maxIntervalMs?: number;
  signal?: AbortSignal;
};

/**
 * Waits until a task is succeeded, failed or canceled, and returns it. Each GET carries `Prefer: wait=<s>`:
 * the service answers the moment the task ends (pushed by the task's runner), or after those seconds with the
 * task as it is, and the client asks again at once. Against a server that does not honour it, polls with backoff.
 */
export async function waitForTask(client: P6Client, id: string, options: WaitOptions = {}): Promise<Task> {
  const { timeoutMs = 15 * 60_000, maxIntervalMs = 5_000, signal } = options;
  const waitSeconds = Math.min(60, Math.max(1, Math.floor(options.waitSeconds ?? 60)));
  const deadline = Date.now() + timeoutMs;
  let interval = options.intervalMs ?? 500;
  for (;;) {
    const wait = Math.min(waitSeconds, Math.max(1, Math.ceil((deadline - Date.now()) / 1000)));
    const { data, error, response } = await client.GET("/v1/tasks/{id}", {
      params: { path: { id }, header: { Prefer: `wait=${wait}` } },
      signal,
    });
    if (error) throw new P6ApiError(response.status, error);
    if (TERMINAL.has(data.status)) return data;
    const held = response.headers.has("Preference-Applied");
    if (Date.now() + (held ? 0 : interval) >= deadline)
      throw new Error(`task ${id} still ${data.status} after ${timeoutMs} ms`);
    if (held) continue;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, interval);
      signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
    interval = Math.min(interval * 1.5, maxIntervalMs);
  }
}
