/**
 * npm run admin -- <command>: the operator CLI over the admin API (decisions.md §13).
 * Reaches ADMIN_URL (default http://127.0.0.1:$PORT, the address npm run dev listens on: PORT, else 8787) with
 * ADMIN_TOKEN (default: from .dev.vars).
 */
import { parseArgs } from "node:util";
import { readDevVars } from "./lib/dev-vars.ts";

const USAGE = `usage: npm run admin -- <command>

  accounts create --name <name> [--credits <n>]
  accounts list [--limit <n>] [--cursor <c>]
  accounts show <account_id>
  keys create <account_id> [--name <name>] [--scopes read,write] [--expires-in-days <1-365>] [--rate-limit <per minute>]
  keys list <account_id>
  keys revoke <key_id>
  credits grant <account_id> <amount> --reason <text>
  ledger <account_id> [--limit <n>] [--cursor <c>]
  webhook-secret show <account_id>
  webhook-secret rotate <account_id>

environment: ADMIN_URL (default http://127.0.0.1:$PORT, PORT default 8787, as npm run dev),
             ADMIN_TOKEN (default: .dev.vars)`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: "string" },
    credits: { type: "string" },
    scopes: { type: "string" },
    "expires-in-days": { type: "string" },
    "rate-limit": { type: "string" },
    reason: { type: "string" },
    limit: { type: "string" },
    cursor: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});

const baseUrl = (process.env.ADMIN_URL ?? `http://127.0.0.1:${process.env.PORT || 8787}`).replace(/\/+$/, "");
const token = process.env.ADMIN_TOKEN ?? readDevVars().ADMIN_TOKEN;

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const int = (value: string | undefined, flag: string) => {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) fail(`${flag} must be an integer`);
  return Number(value);
};

const page = () => {
  const query = new URLSearchParams();
  if (values.limit) query.set("limit", values.limit);
  if (values.cursor) query.set("cursor", values.cursor);
  const text = query.toString();
  return text ? `?${text}` : "";
};

function route(): { method: "GET" | "POST"; path: string; body?: unknown } {
  const [group, action, a, b] = positionals;
  const need = (value: string | undefined, what: string) => value ?? fail(`missing ${what}\n\n${USAGE}`);
  switch (`${group} ${group === "ledger" ? "" : action}`.trim()) {
    case "accounts create":
      return {
        method: "POST",
        path: "/admin/v1/accounts",
        body: { name: need(values.name, "--name"), credits: int(values.credits, "--credits") },
      };
    case "accounts list":
      return { method: "GET", path: `/admin/v1/accounts${page()}` };
    case "accounts show":
      return { method: "GET", path: `/admin/v1/accounts/${need(a, "account_id")}` };
    case "keys create":
      return {
        method: "POST",
        path: `/admin/v1/accounts/${need(a, "account_id")}/keys`,
        body: {
          name: values.name,
          scopes: values.scopes?.split(",").map((s) => s.trim()),
          expires_in_days: int(values["expires-in-days"], "--expires-in-days"),
          rate_limit_per_minute: int(values["rate-limit"], "--rate-limit"),
        },
      };
    case "keys list":
      return { method: "GET", path: `/admin/v1/accounts/${need(a, "account_id")}/keys` };
    case "keys revoke":
      return { method: "POST", path: `/admin/v1/keys/${need(a, "key_id")}/revoke` };
    case "credits grant":
      return {
        method: "POST",
        path: `/admin/v1/accounts/${need(a, "account_id")}/credits`,
        body: { amount: int(need(b, "amount"), "amount"), reason: need(values.reason, "--reason") },
      };
    case "ledger":
      return { method: "GET", path: `/admin/v1/accounts/${need(action, "account_id")}/ledger${page()}` };
    case "webhook-secret show":
      return { method: "GET", path: `/admin/v1/accounts/${need(a, "account_id")}/webhook-secret` };
    case "webhook-secret rotate":
      return { method: "POST", path: `/admin/v1/accounts/${need(a, "account_id")}/webhook-secret/rotate` };
    default:
      return fail(USAGE);
  }
}

if (values.help || positionals.length === 0) {
  console.log(USAGE);
  process.exit(0);
}
const request = route();
if (!token) fail("ADMIN_TOKEN is not set and .dev.vars has none (run npm run dev once).");
let response: Response;
try {
  response = await fetch(`${baseUrl}${request.path}`, {
    method: request.method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(request.body ? { "Content-Type": "application/json" } : {}),
    },
    body: request.body ? JSON.stringify(request.body) : undefined,
  });
} catch (error) {
  fail(`cannot reach ${baseUrl}: ${(error as Error).message} (is npm run dev running?)`);
}
const text = await response.text();
let output = text;
try {
  output = JSON.stringify(JSON.parse(text), null, 2);
} catch {
  // not JSON: print as is
}
(response.ok ? console.log : console.error)(output);
process.exit(response.ok ? 0 : 1);
