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

export function gateFor(env: Env, keyId: string) {
  return env.KEY_GATE.get(env.KEY_GATE.idFromName(keyId));
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
