import { checkUrl } from "@p6/contract/address-policy";
import type { Config } from "../config/config";
import { type EngineResolveRequest, type MediaEngine, readEngineError } from "../engine";
import { ApiError, type FieldError } from "../errors/api-error";
import { engineFor } from "../operations/engine";
import { checkWebhookUrl, resolveWebhookTarget } from "../webhooks/url";

/**
 * Where a URL the Worker was given would lead, by the source rules of decisions.md §11. Sources are resolved by
 * the engine that will fetch them (POST /v1/resolve): the same lookup and address policy its fetcher uses,
 * the whole answer refused when any address is private or reserved. Webhooks, which the Worker sends itself,
 * are resolved by the Worker over DNS over HTTPS (src/webhooks/url.ts, src/fetch/doh.ts).
 */

/** A field of a request that names a URL: sources are resolved by the engine, the webhook by the Worker. */
export type TargetField = EngineResolveRequest["field"] | "webhook";

export type TargetVerdict =
  | { kind: "allowed" }
  /** The URL or an address its name resolves to is refused: `reason` names the field. */
  | { kind: "refused"; reason: string }
  /** The name does not resolve now. */
  | { kind: "unresolved"; reason: string }
  /** The engine could not be asked. */
  | { kind: "unchecked"; reason: string };

/** The address rule on the URL alone (form, IP literals, local-only names): no network, so checked first. */
export function literalVerdict(url: string, field: TargetField, allowPrivate: boolean): TargetVerdict {
  const check = checkUrl(url, { allowPrivate });
  return check.ok ? { kind: "allowed" } : { kind: "refused", reason: `${field} ${check.reason}` };
}

export type Targets = {
  /** Absent when the source is an upload (source_upload_id): the Worker serves that one itself. */
  sourceUrl?: string | undefined;
  /** params.watermark_url of a watermark operation. */
  watermarkUrl?: string | undefined;
  webhookUrl?: string | null | undefined;
};

function named(targets: Targets): [TargetField, string][] {
  const list: [TargetField, string][] = [];
  if (targets.sourceUrl) list.push(["source_url", targets.sourceUrl]);
  if (targets.watermarkUrl) list.push(["params.watermark_url", targets.watermarkUrl]);
  if (targets.webhookUrl) list.push(["webhook", targets.webhookUrl]);
  return list;
}

function literalOf(field: TargetField, url: string, allowPrivate: boolean): TargetVerdict {
  if (field !== "webhook") return literalVerdict(url, field, allowPrivate);
  const webhook = checkWebhookUrl(url, allowPrivate);
  return webhook === null ? { kind: "allowed" } : { kind: "refused", reason: webhook };
}

/** The 400 naming each refused field (`forbidden_url`), or nothing when no verdict refuses. */
function refuse(fields: TargetField[], verdicts: TargetVerdict[]): void {
  const errors: FieldError[] = [];
  verdicts.forEach((verdict, i) => {
    if (verdict.kind === "refused")
      errors.push({ code: "forbidden_url", field: fields[i]!, message: verdict.reason });
  });
  if (errors.length > 0)
    throw new ApiError("VALIDATION_INVALID_ARGUMENT", errors.map((e) => e.message).join(" "), { errors });
}

/**
 * The URLs a request will fetch or notify, checked by their literal form alone (decisions.md §11 and "Order of
 * answers"): no network, no engine, so every route answers them with its other validation, before credits and
 * before capacity. 400 naming each refused field (`source_url`, `params.watermark_url`, `webhook`).
 */
export function checkLiteralTargets(allowPrivate: boolean, targets: Targets): void {
  const list = named(targets);
  refuse(
    list.map(([field]) => field),
    list.map(([field, url]) => literalOf(field, url, allowPrivate)),
  );
}

/**
 * The literal check, then names resolved with every address checked (POST /v1/tasks, before anything is
 * reserved): sources and logos by the engine that will fetch them (POST /v1/resolve), the webhook by the Worker
 * over DNS over HTTPS (resolveWebhookTarget), as every delivery attempt is. A name that does not resolve now,
 * or a resolver that cannot be asked, refuses nothing: the engine checks sources again when it fetches them,
 * and every webhook attempt is checked again.
 */
export async function checkTargets(
  resolvers: { engine: MediaEngine | null; dohUrl: string },
  allowPrivate: boolean,
  targets: Targets,
) {
  const list = named(targets);
  const verdicts = await Promise.all(
    list.map(async ([field, url]) => {
      const literal = literalOf(field, url, allowPrivate);
      if (literal.kind !== "allowed") return literal;
      if (field === "webhook") return resolveWebhookTarget(url, { dohUrl: resolvers.dohUrl, allowPrivate });
      return resolvers.engine === null ? literal : resolveTarget(resolvers.engine, url, field);
    }),
  );
  refuse(
    list.map(([field]) => field),
    verdicts,
  );
}

/** Resolves a source URL's host through the engine and applies the address policy to every address. */
export async function resolveTarget(
  engine: MediaEngine,
  url: string,
  field: EngineResolveRequest["field"],
  signal?: AbortSignal,
): Promise<TargetVerdict> {
  let response: Response;
  try {
    response = await engine.resolve({ url, field }, signal);
  } catch {
    return { kind: "unchecked", reason: "the address check is unavailable" };
  }
  if (response.ok) {
    await response.body?.cancel();
    return { kind: "allowed" };
  }
  const error = await readEngineError(response);
  if (error.code === "VALIDATION_INVALID_ARGUMENT") return { kind: "refused", reason: error.message };
  if (error.code === "SOURCE_UNREACHABLE") return { kind: "unresolved", reason: error.message };
  return { kind: "unchecked", reason: "the address check is unavailable" };
}

/** The engine that resolves targets, or null when this deployment has none configured. */
export function targetResolver(env: Env, config: Config): MediaEngine | null {
  try {
    return engineFor(env, config);
  } catch {
    return null;
  }
}
