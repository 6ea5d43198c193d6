/**
 * The one hardened HTTP client of the engine (decisions.md §11). Every connection goes to an address that
 * was checked: names are resolved by our own `lookup`, which refuses the whole answer when any address in
 * it is forbidden and hands Node the checked address to connect to, so there is no window for DNS
 * rebinding. IP literals are checked by checkUrl (Node does not call `lookup` for them). Redirects are
 * followed by hand, at most LIMITS.maxRedirects, each one checked again.
 */
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { type AddressPolicy, checkUrl, isForbiddenAddress } from "@p6/contract/address-policy";
import { EngineError, invalid } from "../protocol.ts";
import { describeBytes, LIMITS } from "./limits.ts";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export interface FetchPolicy extends AddressPolicy {
  connectTimeoutMs: number;
  readTimeoutMs: number;
  maxRedirects?: number;
  /** Minimum transfer rate once the source answered, averaged over `rateWindowMs` (absent or 0: none). */
  minBytesPerSecond?: number;
  rateWindowMs?: number;
  /** How far a download may run ahead of what ffmpeg has asked for (default LIMITS.downloadAheadBytes). */
  downloadAheadBytes?: number;
  /** The download's lead before readers have read more than it (default LIMITS.downloadLeadBytes). */
  downloadLeadBytes?: number;
  /** A reader this far beyond the download gets a ranged request of its own (default 8 MiB; source.ts). */
  rangeGapBytes?: number;
  /** Test hook: replaces DNS resolution. */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>;
  /**
   * Test hook: exact `url.host` values ("name:port") exempt from the address check, so a 127.0.0.1 fixture
   * server can stand in for a public host. Never read from the environment.
   */
  trustedHosts?: readonly string[];
}

export interface OpenedSource {
  response: http.IncomingMessage;
  /** The URL that answered, after redirects. */
  url: URL;
  /** From Content-Length when the upstream sent one. */
  contentLength: number | null;
  redirects: number;
  /** Idle timeout of the body's socket, restored after deliberate pauses. */
  readTimeoutMs: number;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = "p6-media-engine/1 (+source fetcher)";

class ForbiddenAddressError extends Error {
  readonly code = "EFORBIDDENADDRESS";
}
class FetchTimeoutError extends Error {
  readonly phase: "connect" | "read";
  constructor(phase: "connect" | "read") {
    super(`${phase} timeout`);
    this.phase = phase;
  }
}

async function systemResolve(hostname: string): Promise<ResolvedAddress[]> {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

function guardedLookup(policy: FetchPolicy, exempt: boolean): LookupFunction {
  const resolve = policy.resolve ?? systemResolve;
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (all) => {
        const family = typeof options.family === "number" ? options.family : 0;
        const usable = all.filter((a) => family === 0 || a.family === family);
        if (usable.length === 0) {
          const err = Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" });
          callback(err, "", 4);
          return;
        }
        // Refuse the whole answer if any address is forbidden: a mixed answer is a rebinding attempt.
        if (!exempt && all.some((a) => isForbiddenAddress(a.address, policy))) {
          callback(new ForbiddenAddressError(`${hostname} resolves to a forbidden address`), "", 4);
          return;
        }
        if (options.all) {
          (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, usable);
        } else {
          const first = usable[0]!;
          callback(null, first.address, first.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 4),
    );
  };
}

function errorCode(err: unknown): string {
  const e = err as { code?: string; errors?: { code?: string }[] };
  return e.code ?? e.errors?.[0]?.code ?? "";
}

/** Maps a low-level failure onto a public error whose message names the cause (and nothing internal). */
function classify(err: unknown, field: string): EngineError {
  if (err instanceof EngineError) return err;
  if (err instanceof ForbiddenAddressError) {
    return invalid(field, `${field} resolves to a private or reserved address`);
  }
  if (err instanceof FetchTimeoutError) {
    return new EngineError(
      "SOURCE_UNREACHABLE",
      err.phase === "connect"
        ? "connecting to the source timed out"
        : "the source timed out (no data received)",
    );
  }
  const code = errorCode(err);
  const detail = err instanceof Error ? err.message : String(err);
  const unreachable = (message: string) =>
    new EngineError("SOURCE_UNREACHABLE", message, { internal: detail });
  if (["ENOTFOUND", "EAI_AGAIN", "EAI_NODATA", "EAI_FAIL", "EAI_NONAME"].includes(code)) {
    return unreachable("DNS lookup of the source host failed");
  }
  if (code === "ECONNREFUSED") return unreachable("the source host refused the connection");
  if (code === "ETIMEDOUT") return unreachable("connecting to the source timed out");
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return unreachable("the source host is unreachable");
  if (code === "ECONNRESET" || code === "EPIPE" || detail === "socket hang up") {
    return unreachable("the connection to the source was reset");
  }
  if (code.startsWith("ERR_TLS") || code.includes("CERT") || code.startsWith("ERR_SSL")) {
    return unreachable("the TLS handshake with the source failed");
  }
  return unreachable("the source could not be fetched");
}

/**
 * Where a URL would connect, checked as a fetch checks it: the form and an IP literal by checkUrl, a name by
 * resolving it and refusing the whole answer when any address in it is forbidden (400 naming `field`). A
 * name that does not resolve → SOURCE_UNREACHABLE. Also POST /v1/resolve: a task's sources checked at its
 * creation, before the engine fetches them.
 */
export async function resolveUrl(rawUrl: string, field: string, policy: FetchPolicy): Promise<string[]> {
  const check = checkUrl(rawUrl, policy);
  if (!check.ok) throw invalid(field, `${field} ${check.reason}`);
  if (check.address !== undefined) return [check.address];
  const { url } = check;
  let all: ResolvedAddress[];
  try {
    all = await (policy.resolve ?? systemResolve)(url.hostname);
  } catch (err) {
    throw new EngineError("SOURCE_UNREACHABLE", `DNS lookup of the ${field} host failed`, {
      internal: String(err),
    });
  }
  if (all.length === 0) throw new EngineError("SOURCE_UNREACHABLE", `DNS lookup of the ${field} host failed`);
  const exempt = policy.trustedHosts?.includes(url.host) ?? false;
  if (!exempt && all.some((a) => isForbiddenAddress(a.address, policy))) {
    throw invalid(field, `${field} resolves to a private or reserved address`);
  }
  return all.map((a) => a.address);
}

function requestOnce(
  url: URL,
  policy: FetchPolicy,
  signal: AbortSignal,
  extraHeaders: Record<string, string>,
): Promise<http.IncomingMessage> {
  const exempt = policy.trustedHosts?.includes(url.host) ?? false;
  const transport = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, {
      method: "GET",
      agent: false,
      lookup: guardedLookup(policy, exempt),
      headers: { ...extraHeaders, "user-agent": USER_AGENT, accept: "*/*", "accept-encoding": "identity" },
      signal,
    });
    const connectTimer = setTimeout(
      () => req.destroy(new FetchTimeoutError("connect")),
      policy.connectTimeoutMs,
    );
    req.on("socket", (socket) => {
      socket.setTimeout(policy.readTimeoutMs, () => req.destroy(new FetchTimeoutError("read")));
      socket.once("connect", () => clearTimeout(connectTimer));
    });
    req.on("response", (res) => {
      clearTimeout(connectTimer);
      // The socket's idle timeout keeps guarding the body; surface it as a response error.
      res.socket.setTimeout(policy.readTimeoutMs, () => res.destroy(new FetchTimeoutError("read")));
      resolve(res);
    });
    req.on("error", (err) => {
      clearTimeout(connectTimer);
      reject(err);
    });
    req.end();
  });
}

/**
 * Opens a source URL: checks it, follows redirects (each re-checked), refuses non-2xx and bodies whose
 * declared length exceeds `maxBytes`. The caller consumes (or destroys) `response`. `range` asks for part
 * of the source (Range, with If-Range when given); the caller checks that the answer is that part.
 */
export async function openSource(
  rawUrl: string,
  field: string,
  policy: FetchPolicy,
  maxBytes: number,
  signal: AbortSignal,
  range?: { start: number; end: number; ifRange?: string },
): Promise<OpenedSource> {
  const extraHeaders: Record<string, string> =
    range === undefined
      ? {}
      : {
          range: `bytes=${range.start}-${range.end}`,
          ...(range.ifRange === undefined ? {} : { "if-range": range.ifRange }),
        };
  const first = checkUrl(rawUrl, policy);
  if (!first.ok) throw invalid(field, `${field} ${first.reason}`);
  let url = first.url;
  const maxRedirects = policy.maxRedirects ?? LIMITS.maxRedirects;
  for (let redirects = 0; ; redirects++) {
    let res: http.IncomingMessage;
    try {
      res = await requestOnce(url, policy, signal, extraHeaders);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw classify(err, field);
    }
    const status = res.statusCode ?? 0;
    if (REDIRECT_STATUSES.has(status)) {
      res.destroy();
      const location = res.headers.location;
      if (location === undefined) {
        throw new EngineError(
          "SOURCE_UNREACHABLE",
          `the source answered with a redirect (${status}) without a location`,
        );
      }
      if (redirects >= maxRedirects) {
        throw new EngineError("SOURCE_UNREACHABLE", `too many redirects (more than ${maxRedirects})`);
      }
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new EngineError("SOURCE_UNREACHABLE", "the source redirected to an invalid URL");
      }
      const check = checkUrl(next.href, policy);
      if (!check.ok) throw invalid(field, `${field} redirects to a URL that ${check.reason}`);
      url = check.url;
      continue;
    }
    if (status < 200 || status > 299) {
      res.destroy();
      throw new EngineError("SOURCE_UNREACHABLE", `the source answered with HTTP status ${status}`);
    }
    const declared = res.headers["content-length"];
    const contentLength = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : null;
    if (contentLength !== null && contentLength > maxBytes) {
      res.destroy();
      throw new EngineError(
        "REQUEST_BODY_TOO_LARGE",
        `the source is ${describeBytes(contentLength)}, over the limit of ${describeBytes(maxBytes)}`,
      );
    }
    // Until a consumer attaches its own handlers, an early socket error must not crash the process.
    res.on("error", () => {});
    enforceMinimumRate(res, policy, url, field);
    return { response: res, url, contentLength, redirects, readTimeoutMs: policy.readTimeoutMs };
  }
}

/**
 * The rate floor: from the answer on, every `rateWindowMs` the body must have brought at least
 * `minBytesPerSecond` × the window, or the response is destroyed with SOURCE_UNREACHABLE naming the source
 * (its field and host). A window in which the consumer held the body back (paused it, or left its buffer full) is not the
 * source's fault and is not judged. Counted on the socket, so watching changes nothing in how the body flows.
 */
function enforceMinimumRate(res: http.IncomingMessage, policy: FetchPolicy, url: URL, field: string): void {
  const rate = policy.minBytesPerSecond ?? 0;
  const windowMs = policy.rateWindowMs ?? 0;
  if (rate <= 0 || windowMs <= 0) return;
  const socket = res.socket;
  const floor = (rate * windowMs) / 1000;
  let counted = socket.bytesRead;
  let heldBack = false;
  const onPause = () => {
    heldBack = true;
  };
  res.on("pause", onPause);
  const timer = setInterval(() => {
    const received = socket.bytesRead - counted;
    counted = socket.bytesRead;
    const excused = heldBack || res.isPaused() || res.readableLength >= res.readableHighWaterMark;
    heldBack = false;
    if (excused || received >= floor) return;
    res.destroy(
      new EngineError(
        "SOURCE_UNREACHABLE",
        `${field} (${url.host}) is too slow: ${kib(received)} in ${windowMs / 1000} s, under the minimum of ${kib(rate)}/s`,
      ),
    );
  }, windowMs);
  timer.unref();
  res.once("close", () => {
    clearInterval(timer);
    res.off("pause", onPause);
  });
}

const kib = (bytes: number) =>
  bytes < 1024 ? `${bytes} bytes` : `${Math.round((bytes / 1024) * 10) / 10} KiB`;

/** Public message of a failure while the body streams (after openSource succeeded). */
export function classifyBodyError(err: unknown): EngineError {
  if (err instanceof FetchTimeoutError) {
    return new EngineError("SOURCE_UNREACHABLE", "the source stopped sending data (read timeout)");
  }
  return classify(err, "source_url");
}
