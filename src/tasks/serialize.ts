import type { OperationType } from "@p6/contract/operations";
import type { TaskRow } from "../db/schema";
import { signFileUrl } from "../files/signing";

/** An output as stored on the task row; the URL is signed at read time. A pipeline's carry their `step`. */
export type StoredOutput = { kind: string; file_id: string; name: string; step?: string } & Record<
  string,
  unknown
>;

export const STEP_STATUSES = ["queued", "running", "succeeded", "failed", "canceled", "skipped"] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** A pipeline step as stored on the task row (tasks.steps), updated as the run goes (src/tasks/pipeline.ts). */
export type StoredStep = {
  name: string;
  type: OperationType;
  status: "queued" | "running" | "succeeded" | "failed";
  /** The operation's result fields (a file's, or a probe's data) once it succeeded. */
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
};

type Output = { kind: string; url: string; step?: string } & Record<string, unknown>;

export type StepView = Omit<StoredStep, "status"> & { status: StepStatus; outputs: Output[] };

export type TaskView = {
  id: string;
  status: TaskRow["status"];
  task_type: string;
  source: string;
  progress: number;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  expires_at: string;
  data_removed: boolean;
  error: { code: string; message: string; request_id: string } | null;
  outputs: Output[];
  steps: StepView[] | null;
  metrics: { total_time: number; queue_time?: number; processing_time?: number };
  urls: { get: string; cancel: string };
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const seconds = (ms: number) => Math.round(ms) / 1000;

export type SerializeContext = { origin: string; fileSigningSecret: string | undefined };

/**
 * A step's status as the task shows it: all queued while the task is; once the task has ended, a step that never started was `skipped`, and
 * one that was running when the task was canceled (or stopped by its watchdog) is `canceled` (or `failed`).
 */
function stepStatus(step: StoredStep, task: TaskRow["status"]): StepStatus {
  // Queued again (the engine had no capacity): its next run starts every step afresh.
  if (task === "queued") return "queued";
  if (task === "processing" || step.status === "succeeded" || step.status === "failed") return step.status;
  if (step.status === "queued") return "skipped";
  return task === "canceled" ? "canceled" : "failed";
}

/** The Task resource of interface.md, the same in API responses and webhook bodies. */
export async function serializeTask(row: TaskRow, ctx: SerializeContext): Promise<TaskView> {
  const stored = JSON.parse(row.outputs) as StoredOutput[];
  const outputs = row.dataRemoved
    ? []
    : await Promise.all(
        stored.map(async ({ file_id, name, ...rest }) => {
          if (!ctx.fileSigningSecret) throw new Error("FILE_SIGNING_SECRET is not configured");
          const url = await signFileUrl(ctx.origin, ctx.fileSigningSecret, file_id, name, row.expiresAt);
          return { ...rest, kind: rest.kind, url };
        }),
      );
  const steps =
    row.steps === null
      ? null
      : (JSON.parse(row.steps) as StoredStep[]).map(
          (step): StepView => ({
            ...step,
            status: stepStatus(step, row.status),
            outputs: outputs.filter((output) => output.step === step.name),
          }),
        );
  const metrics: TaskView["metrics"] = {
    total_time: row.completedAt === null ? 0 : seconds(row.completedAt - row.createdAt),
  };
  if (row.startedAt !== null) metrics.queue_time = seconds(row.startedAt - row.createdAt);
  if (row.startedAt !== null && row.completedAt !== null) {
    metrics.processing_time = seconds(row.completedAt - row.startedAt);
  }
  const base = `${ctx.origin}/v1/tasks/${row.id}`;
  return {
    id: row.id,
    status: row.status,
    task_type: row.type,
    source: row.source,
    progress: row.status === "succeeded" ? 1 : row.progress,
    created_at: iso(row.createdAt)!,
    started_at: iso(row.startedAt),
    completed_at: iso(row.completedAt),
    expires_at: iso(row.expiresAt)!,
    data_removed: row.dataRemoved,
    error:
      row.status === "failed" && row.errorCode
        ? {
            code: row.errorCode,
            message: row.errorMessage ?? "",
            request_id: row.errorRequestId ?? row.requestId,
          }
        : null,
    outputs,
    steps,
    metrics,
    urls: { get: base, cancel: `${base}/cancel` },
  };
}
