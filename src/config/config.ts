import { z } from "zod";

const flag = z
  .enum(["true", "false", "1", "0", ""])
  .optional()
  .transform((v) => v === "true" || v === "1");
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
/** Comma-separated whole seconds; blank means the default. */
const secondsList = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((v) =>
      (v === undefined || v.trim() === "" ? fallback : v)
        .split(",")
        .map((s) => (s.trim() === "" ? Number.NaN : Number(s))),
    );

/** Cloudflare's public resolver, which answers the JSON form of DNS over HTTPS. */
export const DEFAULT_DOH_URL = "https://cloudflare-dns.com/dns-query";

/** Everything the Worker reads from its environment, parsed once per isolate (see `getConfig`). */
const ConfigSchema = z.object({
  ADMIN_TOKEN: optionalString,
  ERROR_TYPE_BASE: optionalString.pipe(z.url().optional()),
  ALLOW_PRIVATE_SOURCES: flag,
  SYNC_TIMEOUT_SECONDS: positiveInt(30),
  OUTPUT_TTL_SECONDS: positiveInt(86_400),
  DEFAULT_RATE_LIMIT_PER_MINUTE: positiveInt(60),
  FILE_SIGNING_SECRET: optionalString,
  ENGINE_SECRET: optionalString,
  ENGINE_URL: optionalString,
  // DNS over HTTPS (JSON form) for webhook names: Cloudflare's resolver unless set.
  DOH_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  // How a webhook reaches its receiver (docs/decisions.md "Webhooks"): the checked address over a socket, or
  // fetch() through Cloudflare's egress (set by npm run deploy). Anything but "platform" is "pinned".
  WEBHOOK_EGRESS: z.enum(["pinned", "platform", ""]).optional(),
  // The origin every link in a mail is built from (npm run deploy sets it; npm run dev: its own URL).
  PUBLIC_ORIGIN: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  // Cloudflare Turnstile instead of the proof of work on sign-in (docs/console.md "Throttles"): both or neither.
  TURNSTILE_SITE_KEY: optionalString,
  TURNSTILE_SECRET_KEY: optionalString,
  TASK_PROCESSING_BUDGET_SECONDS: positiveInt(900),
  SIGNUP_CREDITS: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  SIGNUPS_PER_ADDRESS_PER_HOUR: positiveInt(5),
  // Where console mail goes: Cloudflare Email Service (the EMAIL send_email binding) or the local mailbox.
  MAIL_TRANSPORT: z.enum(["cloudflare", "mailbox", ""]).optional(),
  MAIL_FROM: optionalString.pipe(z.email().optional()),
  TASK_MAX_QUEUE_WAIT_SECONDS: positiveInt(3600),
  UPLOAD_MAX_BYTES: positiveInt(5 * 1024 ** 3),
  UPLOAD_EXPIRY_SECONDS: positiveInt(86_400),
  UPLOAD_RETENTION_SECONDS: positiveInt(7 * 86_400),
  UPLOAD_QUOTA_INCOMPLETE: positiveInt(20),
  UPLOAD_QUOTA_BYTES: positiveInt(50 * 1024 ** 3),
  UPLOAD_DIRECT_EXPIRY_SECONDS: positiveInt(3600),
  ENGINE_INSTANCES: positiveInt(3),
  ENGINE_SLOTS: positiveInt(2),
  ENGINE_ACCOUNT_MAX_SLOTS: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .or(z.literal("").transform(() => undefined)),
  // One wait per webhook attempt, at most 12 h (the Queues delay limit); decisions.md §12.
  WEBHOOK_RETRY_DELAYS_SECONDS: secondsList("0,10,60,600,3600").pipe(
    z.array(z.number().int().min(0).max(43_200)).length(5),
  ),
});

export type Config = {
  adminToken: string | undefined;
  /** Fixed base for problem `type` URIs; when unset it is derived from the request origin. */
  errorTypeBase: string | undefined;
  allowPrivateSources: boolean;
  syncTimeoutMs: number;
  outputTtlMs: number;
  defaultRateLimitPerMinute: number;
  fileSigningSecret: string | undefined;
  engineSecret: string | undefined;
  engineUrl: string | undefined;
  /** Where the Worker resolves webhook names (DNS over HTTPS, src/fetch/doh.ts). */
  dohUrl: string;
  /**
   * "pinned": a delivery connects to the very address its check resolved (cloudflare:sockets; local workerd,
   * npm run dev, the tests). "platform": fetch() through Cloudflare's egress, which refuses internal addresses
   * (production; docs/decisions.md "Webhooks" says why sockets cannot serve there).
   */
  webhookEgress: "pinned" | "platform";
  /** The origin of every link in a mail (verification, reset); never the request's Host. Unset: no mail. */
  publicOrigin: string | undefined;
  /** Cloudflare Turnstile keys: when both are set, sign-in challenges are Turnstile's instead of ALTCHA's. */
  turnstile: { siteKey: string; secretKey: string } | undefined;
  /** A task still processing after this is failed with PROCESSING_TIMEOUT (decisions.md §2: 15 min). */
  taskBudgetMs: number;
  /** A task that cannot get engine capacity waits (stays queued) at most this long, then fails SERVICE_UNAVAILABLE. */
  taskMaxQueueWaitMs: number;
  /**
   * Engine instances: the ENGINE_URL entries when set, else ENGINE_INSTANCES containers ("engine-0"…), which
   * should equal wrangler.toml's containers max_instances.
   */
  engineInstances: number;
  /**
   * Engine jobs one account may have in flight at once, sync and tasks together (src/capacity). Default: half
   * of every instance's ENGINE_SLOTS, at least 1, so one account cannot take the whole engine.
   */
  accountMaxSlots: number;
  /**
   * Seconds to wait before each of the 5 webhook attempts: [0] before the first (counted from the event),
   * [n] after the n-th failure. Default 0,10,60,600,3600: at once, +10 s, +1 min, +10 min, +1 h.
   */
  webhookRetryDelaysSeconds: readonly number[];
  /** Credits granted to an account created by console sign-up. */
  signupCredits: number;
  /** Console sign-ups one client address may make in an hour (src/users/throttle.ts). */
  signupsPerAddressPerHour: number;
  /** Tus uploads (src/uploads): the largest Upload-Length accepted (default 5 GiB). */
  uploadMaxBytes: number;
  /** An upload still incomplete this long after its creation expires; its R2 multipart upload is aborted. */
  uploadExpiryMs: number;
  /** A complete upload is kept this long after its last byte, then deleted (docs/decisions.md "Uploads"). */
  uploadRetentionMs: number;
  /**
   * Per-account upload quotas (src/uploads/quota.ts): incomplete uploads at once (pending direct upload URLs
   * included; default 20) and bytes stored, complete plus declared incomplete (default 50 GiB).
   */
  uploadQuota: { maxIncomplete: number; maxStoredBytes: number };
  /** A direct upload URL (POST /v1/uploads/direct) can create its upload this long (default 1 h). */
  uploadDirectExpiryMs: number;
  /**
   * Console mail (verification and reset links, src/mail): "cloudflare" sends through the EMAIL binding
   * (Cloudflare Email Service) from `mailFrom`; "mailbox" (npm run dev, tests) keeps it in the local mailbox
   * at /dev/mailbox instead.
   */
  mailTransport: "cloudflare" | "mailbox";
  mailFrom: string;
};

const cache = new WeakMap<object, Config>();

export function getConfig(env: Env): Config {
  const hit = cache.get(env);
  if (hit) return hit;
  const raw = ConfigSchema.parse(env);
  const engineInstances = raw.ENGINE_URL ? engineUrls(raw.ENGINE_URL).length : raw.ENGINE_INSTANCES;
  const config: Config = {
    adminToken: raw.ADMIN_TOKEN,
    errorTypeBase: raw.ERROR_TYPE_BASE?.replace(/\/+$/, ""),
    allowPrivateSources: raw.ALLOW_PRIVATE_SOURCES,
    syncTimeoutMs: raw.SYNC_TIMEOUT_SECONDS * 1000,
    outputTtlMs: raw.OUTPUT_TTL_SECONDS * 1000,
    defaultRateLimitPerMinute: raw.DEFAULT_RATE_LIMIT_PER_MINUTE,
    fileSigningSecret: raw.FILE_SIGNING_SECRET,
    engineSecret: raw.ENGINE_SECRET,
    engineUrl: raw.ENGINE_URL,
    dohUrl: raw.DOH_URL ?? DEFAULT_DOH_URL,
    webhookEgress: raw.WEBHOOK_EGRESS === "platform" ? "platform" : "pinned",
    publicOrigin: raw.PUBLIC_ORIGIN === undefined ? undefined : new URL(raw.PUBLIC_ORIGIN).origin,
    turnstile:
      raw.TURNSTILE_SITE_KEY && raw.TURNSTILE_SECRET_KEY
        ? { siteKey: raw.TURNSTILE_SITE_KEY, secretKey: raw.TURNSTILE_SECRET_KEY }
        : undefined,
    taskBudgetMs: raw.TASK_PROCESSING_BUDGET_SECONDS * 1000,
    taskMaxQueueWaitMs: raw.TASK_MAX_QUEUE_WAIT_SECONDS * 1000,
    engineInstances,
    accountMaxSlots:
      raw.ENGINE_ACCOUNT_MAX_SLOTS ?? Math.max(1, Math.floor((engineInstances * raw.ENGINE_SLOTS) / 2)),
    webhookRetryDelaysSeconds: raw.WEBHOOK_RETRY_DELAYS_SECONDS,
    signupCredits: raw.SIGNUP_CREDITS,
    signupsPerAddressPerHour: raw.SIGNUPS_PER_ADDRESS_PER_HOUR,
    uploadMaxBytes: raw.UPLOAD_MAX_BYTES,
    uploadExpiryMs: raw.UPLOAD_EXPIRY_SECONDS * 1000,
    uploadRetentionMs: raw.UPLOAD_RETENTION_SECONDS * 1000,
    uploadQuota: { maxIncomplete: raw.UPLOAD_QUOTA_INCOMPLETE, maxStoredBytes: raw.UPLOAD_QUOTA_BYTES },
    uploadDirectExpiryMs: raw.UPLOAD_DIRECT_EXPIRY_SECONDS * 1000,
    mailTransport: raw.MAIL_TRANSPORT === "mailbox" ? "mailbox" : "cloudflare",
    mailFrom: raw.MAIL_FROM ?? "noreply@example.com",
  };
  cache.set(env, config);
  return config;
}

/** ENGINE_URL may list several engine processes, comma-separated. */
export function engineUrls(value: string): string[] {
  return value
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u !== "");
}
