import { ApiError } from "../errors/api-error";
import type { RateDecision } from "../ratelimit/window";
import { hashSecret, type ParsedToken } from "./token";

export type Scope = "read" | "write";

export type AuthenticatedKey = {
  keyId: string;
  accountId: string;
  scopes: ReadonlySet<Scope>;
  rate: RateDecision;
};

/**
 * Gate ids by key id, kept per isolate: idFromName hashes the name (SHA-256) on every call, and every
 * authenticated request names its key's gate. An id is a pure function of the name, so a kept one is exact; a
 * stub is bound to its request and is made anew each time. Bounded so a flood of key ids cannot grow it.
 */
const gateIds = new WeakMap<DurableObjectNamespace, Map<string, DurableObjectId>>();
const GATE_IDS_MAX = 10_000;

export function gateFor(env: Env, keyId: string) {
  let ids = gateIds.get(env.KEY_GATE);
  if (ids === undefined) {
    ids = new Map();
    gateIds.set(env.KEY_GATE, ids);
  }
  let id = ids.get(keyId);
  if (id === undefined) {
    id = env.KEY_GATE.idFromName(keyId);
    if (ids.size >= GATE_IDS_MAX) ids.delete(ids.keys().next().value!);
    ids.set(keyId, id);
  }
  return env.KEY_GATE.get(id);
}

/**
 * Checks a well-formed token and counts the request against the key's limit, in one call to the key's
 * gate. Every failure — unknown key_id, wrong secret, revoked, expired — throws the same AUTH_INVALID_TOKEN.
 */
export async function authenticateKey(
  env: Env,
  token: ParsedToken,
  defaultLimit: number,
): Promise<AuthenticatedKey> {
  const result = await gateFor(env, token.keyId).authorize(
    token.keyId,
    await hashSecret(token.secret),
    defaultLimit,
  );
  if (!result.ok) throw new ApiError("AUTH_INVALID_TOKEN");
  return {
    keyId: token.keyId,
    accountId: result.accountId,
    scopes: parseScopes(result.scopes),
    rate: result.rate,
  };
}

export function parseScopes(text: string): ReadonlySet<Scope> {
  return new Set(text.split(",").filter((s): s is Scope => s === "read" || s === "write"));
}
