/** Every dashboard URL, built in one place so views and handlers never disagree. */
export const BASE = "/dashboard";

export const paths = {
  login: `${BASE}/login`,
  logout: `${BASE}/logout`,
  accounts: `${BASE}/accounts`,
  account: (id: string) => `${BASE}/accounts/${id}`,
  credits: (id: string) => `${BASE}/accounts/${id}/credits`,
  keys: (id: string) => `${BASE}/accounts/${id}/keys`,
  revokeKey: (id: string, keyId: string) => `${BASE}/accounts/${id}/keys/${keyId}/revoke`,
  webhookSecret: (id: string) => `${BASE}/accounts/${id}/webhook-secret`,
  revealSecret: (id: string) => `${BASE}/accounts/${id}/webhook-secret/reveal`,
  rotateSecret: (id: string) => `${BASE}/accounts/${id}/webhook-secret/rotate`,
  tasks: (id: string) => `${BASE}/accounts/${id}/tasks`,
  task: (id: string, taskId: string) => `${BASE}/accounts/${id}/tasks/${taskId}`,
};

/** Where to go after signing in: only a dashboard path of this origin, never an open redirect. */
export function safeNext(next: string | undefined) {
  if (!next || !/^\/dashboard(\/[\w\-./?=&%]*)?$/.test(next) || next.includes("//")) return paths.accounts;
  return next;
}
