import type http from "node:http";
import type { Pool } from "../pool.ts";

/**
 * X-Engine-Load, the pool's state as of the answer: the Worker prefers the instance with free slots
 * (src/engine/load.ts). Set on the Node response, so it joins the headers of whatever answers (a route's
 * Response or a file streamed on the response itself); a route that frees its slot sets it again.
 */
export function stampLoad(pool: Pool, res: http.ServerResponse): void {
  if (res.headersSent) return;
  const { busy, total, queued } = pool.stats();
  res.setHeader("x-engine-load", `busy=${busy};slots=${total};queued=${queued}`);
}
