import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { ADMIN_TOKEN, BASE } from "../helpers/api";

type Fields = Record<string, string | string[]>;

/**
 * A minimal browser for the workerd tests: keeps cookies, sends forms as a browser does (urlencoded, with an
 * Origin header) and never follows redirects, so each response can be inspected.
 */
export class DashboardClient {
  readonly cookies = new Map<string, string>();
  readonly base: string;
  readonly fetcher: (request: Request) => Promise<Response>;
  /** Headers every request carries (e.g. `CF-Connecting-IP`, the address Cloudflare would report). */
  readonly defaults: Record<string, string> = {};

  constructor(
    base = BASE,
    fetcher: (request: Request) => Promise<Response> = (r) => exports.default.fetch(r),
  ) {
    this.base = base;
    this.fetcher = fetcher;
  }

  async get(path: string, headers: Record<string, string> = {}) {
    return this.send(
      new Request(`${this.base}${path}`, { headers: this.headers(headers), redirect: "manual" }),
    );
  }

  /** A form post as a browser sends it (the caller includes `_csrf` when it wants the token sent). */
  async post(path: string, fields: Fields = {}, options: { headers?: Record<string, string> } = {}) {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) {
      for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    }
    const headers = this.headers({
      Origin: this.base,
      "Content-Type": "application/x-www-form-urlencoded",
      ...options.headers,
    });
    return this.send(
      new Request(`${this.base}${path}`, { method: "POST", headers, body, redirect: "manual" }),
    );
  }

  /** Fetches `page` and posts `fields` to `action` with the page's CSRF token, like submitting its form. */
  async submit(page: string, action: string, fields: Fields = {}) {
    const html = await (await this.get(page)).text();
    return this.post(action, { _csrf: csrfOf(html), ...fields });
  }

  private headers(extra: Record<string, string>) {
    // An empty value leaves the header out (a request without Origin, say).
    const headers = new Headers(
      Object.entries({ ...this.defaults, ...extra }).filter(([, value]) => value !== ""),
    );
    if (this.cookies.size > 0) {
      headers.set("Cookie", [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    return headers;
  }

  private async send(request: Request) {
    const response = await this.fetcher(request);
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ""] = cookie.split(";");
      const index = pair.indexOf("=");
      const name = pair.slice(0, index);
      const value = pair.slice(index + 1);
      if (value === "" || /max-age=0/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }
}

export function csrfOf(html: string) {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error("no CSRF field on the page");
  return match[1]!;
}

/** A client signed in through the real sign-in form. */
export async function signedIn(client = new DashboardClient()) {
  const response = await client.submit("/dashboard/login", "/dashboard/login", { token: ADMIN_TOKEN });
  expect(response.status).toBe(303);
  expect(client.cookies.has("p6_dashboard")).toBe(true);
  return client;
}

export function location(response: Response) {
  return response.headers.get("location");
}
