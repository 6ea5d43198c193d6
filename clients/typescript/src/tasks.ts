import type { P6Client } from "./client.ts";
import type { components } from "./generated/api.js";

export type Task = components["schemas"]["Task"];
export type Problem = components["schemas"]["Problem"];

const TERMINAL = new Set<string>(["succeeded", "failed", "canceled"]);

/** An error answer of the API, with its RFC 9457 body. */
export class P6ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;

  constructor(status: number, problem: Problem) {
    super(`${status} ${problem.code}: ${problem.detail ?? problem.title}`);
    this.name = "P6ApiError";
    this.status = status;
    this.problem = problem;
  }
}

export type WaitOptions = {
  /** Give up after this long (default 15 minutes, the service's task budget). */
  timeoutMs?: number;
  /** First pause between polls (default 500 ms), growing 1.5× up to maxIntervalMs (default 5 s). */
  intervalMs?: number;
  maxIntervalMs?: number;
  signal?: AbortSignal;
};

/** Polls a task with backoff until it is succeeded, failed or canceled, and returns it. */
export async function waitForTask(client: P6Client, id: string, options: WaitOptions = {}): Promise<Task> {
  const { timeoutMs = 15 * 60_000, maxIntervalMs = 5_000, signal } = options;
  const deadline = Date.now() + timeoutMs;
  let interval = options.intervalMs ?? 500;
  for (;;) {
    const { data, error, response } = await client.GET("/v1/tasks/{id}", {
      params: { path: { id } },
      signal,
    });
    if (error) throw new P6ApiError(response.status, error);
    if (TERMINAL.has(data.status)) return data;
    if (Date.now() + interval > deadline)
      throw new Error(`task ${id} still ${data.status} after ${timeoutMs} ms`);
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
