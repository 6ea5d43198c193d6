import type { TaskRow } from "../db/schema";
import { signFileUrl } from "../files/signing";

/** An output as stored on the task row; the URL is signed at read time. */
export type StoredOutput = { kind: string; file_id: string; name: string } & Record<string, unknown>;

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
  outputs: Array<{ kind: string; url: string } & Record<string, unknown>>;
  metrics: { total_time: number; queue_time?: number; processing_time?: number };
  urls: { get: string; cancel: string };
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const seconds = (ms: number) => Math.round(ms) / 1000;

export type SerializeContext = { origin: string; fileSigningSecret: string | undefined };

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
    metrics,
    urls: { get: base, cancel: `${base}/cancel` },
  };
}
