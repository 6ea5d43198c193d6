import { checkUrl } from "../../containers/ffmpeg/src/security/address-policy";
import type { Config } from "../config/config";
import { type EngineResolveRequest, type MediaEngine, readEngineError } from "../engine";
import { engineFor } from "../operations/engine";

/**
 * Where a URL the Worker was given would lead, by the source rules of decisions.md §11. The Worker cannot
 * resolve names, so the engine does (POST /v1/resolve): it resolves the host with the same lookup and
 * address policy its fetcher uses and refuses the whole answer when any address is private or reserved.
 */

export type TargetField = EngineResolveRequest["field"];

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

/** Resolves the URL's host through the engine and applies the address policy to every address. */
export async function resolveTarget(
  engine: MediaEngine,
  url: string,
  field: TargetField,
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
