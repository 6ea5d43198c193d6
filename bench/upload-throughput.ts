import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startGroup, stopGroup, waitForHttp } from "../scripts/lib/processes.ts";
import type { Service } from "./lib/service.ts";
import { BENCH_PORT, STATE_TEMPLATE, sized } from "./lib/smoke.ts";

const MiB = 1024 * 1024;
/** Bytes per request on both paths: a tus PATCH and a direct put each carry one 50 MiB chunk. */
const CHUNK = sized(50, 1) * MiB;
const TOTAL = sized(200, 2) * MiB;
const RUNS = sized(3, 1);

function payload() {
  const bytes = new Uint8Array(TOTAL);
  // Incompressible but cheap: crypto.getRandomValues fills at most 64 KiB a call.
  for (let at = 0; at < TOTAL; at += 65_536) crypto.getRandomValues(bytes.subarray(at, at + 65_536));
  return bytes;
}

async function ok(response: Response, what: string) {
  if (!response.ok) throw new Error(`${what}: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
  return response;
}

/** One tus upload of `bytes` through the API (POST, then 50 MiB PATCHes); milliseconds. */
async function viaUploads(service: Service, key: string, bytes: Uint8Array) {
  const started = performance.now();
  const created = await ok(
    await fetch(`${service.base}/v1/uploads`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${key}`,
        "Tus-Resumable": "1.0.0",
        "Upload-Length": String(bytes.byteLength),
      },
    }),
    "POST /v1/uploads",
  );
  const location = created.headers.get("location")!;
  for (let at = 0; at < bytes.byteLength; at += CHUNK) {
    await ok(
      await fetch(location, {
        method: "PATCH",
        headers: {
          Authorization: `Bearer ${key}`,
          "Tus-Resumable": "1.0.0",
          "Content-Type": "application/offset+octet-stream",
          "Upload-Offset": String(at),
        },
        body: bytes.subarray(at, Math.min(at + CHUNK, bytes.byteLength)),
      }),
      "PATCH",
    );
  }
  const elapsed = performance.now() - started;
  const view = (await (await fetch(location, { headers: { Authorization: `Bearer ${key}` } })).json()) as {
    state: string;
  };
  if (view.state !== "complete") throw new Error(`the upload ended ${view.state}`);
  return elapsed;
}

/** The same bytes, the same chunks, each put straight into local R2 by a bare Worker; milliseconds. */
async function direct(base: string, bytes: Uint8Array, run: number) {
  const started = performance.now();
  for (let at = 0, part = 0; at < bytes.byteLength; at += CHUNK, part++) {
    await ok(
      await fetch(`${base}/direct/run-${run}-part-${part}`, {
        method: "PUT",
        body: bytes.subarray(at, Math.min(at + CHUNK, bytes.byteLength)),
      }),
      "PUT /direct",
    );
  }
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * upload-throughput: 200 MiB through the tus upload path (POST /v1/uploads, PATCHes of 50 MiB: the Worker, the
 * upload's Durable Object, 8 MiB R2 multipart parts, completion) against the same bytes in the same chunks
 * put straight into local R2 by a bare Worker under wrangler dev — both measured in this run, alternating,
 * median of 3. The ratio is throughput(upload) / throughput(direct); the goal is ≥ 0.7.
 */
export async function uploadThroughput(service: Service, key: string, port = BENCH_PORT + 3) {
  const root = path.resolve(import.meta.dirname, "..");
  const state = mkdtempSync(path.join(os.tmpdir(), "p6-bench-upload-"));
  const child = startGroup(
    "upload-bench",
    path.join(root, "node_modules/.bin/wrangler"),
    [
      "dev",
      "--config",
      "bench/upload/wrangler.toml",
      "--port",
      String(port),
      "--ip",
      "127.0.0.1",
      "--persist-to",
      state,
    ],
    { cwd: root, env: { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" }, quiet: true },
  );
  const base = `http://127.0.0.1:${port}`;
  try {
    // A service start on a loaded machine (two test suites at once: over 120 s once).
    await waitForHttp(`${base}/noop`, 300_000);
    const bytes = payload();
    // One untimed round of each first: the isolates, the Durable Object class and R2's files warm.
    await direct(base, bytes.subarray(0, CHUNK), -1);
    await viaUploads(service, key, bytes.subarray(0, CHUNK));
    const uploads: number[] = [];
    const directs: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      directs.push(await direct(base, bytes, run));
      uploads.push(await viaUploads(service, key, bytes));
    }
    const mibps = (ms: number) => TOTAL / MiB / (ms / 1000);
    const up = median(uploads);
    const dir = median(directs);
    console.log(
      `upload-throughput (${TOTAL / MiB} MiB in ${CHUNK / MiB} MiB requests, median of ${RUNS}): tus upload ${mibps(up).toFixed(0)} MiB/s ` +
        `(${(up / 1000).toFixed(2)} s), direct R2 put ${mibps(dir).toFixed(0)} MiB/s (${(dir / 1000).toFixed(2)} s), ` +
        `ratio ${(dir / up).toFixed(2)}× (goal ≥ 0.7×)`,
    );
  } finally {
    stopGroup(child);
    rmSync(state, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { startService, unlimitedKey } = await import("./lib/service.ts");
  const service = await startService({
    port: BENCH_PORT,
    enginePort: BENCH_PORT + 1,
    inspectorPort: BENCH_PORT + 4,
    stateTemplate: STATE_TEMPLATE,
    readyTimeoutMs: 900_000,
  });
  try {
    await uploadThroughput(service, await unlimitedKey(service));
  } finally {
    await service.stop();
  }
}
