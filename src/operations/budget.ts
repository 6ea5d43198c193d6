import { ApiError } from "../errors/api-error";

/**
 * Runs `work` within a time budget. Past it, the signal aborts (cancelling the engine call and with it the job)
 * and the call rejects with PROCESSING_TIMEOUT, whatever the work is doing.
 */
export async function withBudget<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timeout = new ApiError("PROCESSING_TIMEOUT");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(timeout);
      reject(timeout);
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}
