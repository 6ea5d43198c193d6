import type { OpenAPIHono } from "@hono/zod-openapi";
import { createElement } from "hono/jsx";
import { ERROR_CODES, type ErrorCode } from "../../errors/codes";
import type { AppEnv } from "../../http/context";
import { renderPage } from "../docs/layout";
import { ErrorIndex, ErrorPage, UnknownError } from "./pages";

const BY_SUFFIX = new Map(
  Object.entries(ERROR_CODES).map(([code, row]) => [row.suffix as string, code as ErrorCode]),
);

/**
 * The pages problem `type` URIs point at (`<origin>/errors/<suffix>` when ERROR_TYPE_BASE is unset): one per
 * error code, and an index. An unknown suffix is a 404 page, not problem+json: these are documents for people.
 */
export function registerErrorPages(app: OpenAPIHono<AppEnv>) {
  app.get("/errors", (c) => renderPage(c, "Errors", createElement(ErrorIndex, {})));
  app.get("/errors/:suffix", (c) => {
    const suffix = c.req.param("suffix");
    const code = BY_SUFFIX.get(suffix);
    if (!code) return renderPage(c, "Unknown error type", createElement(UnknownError, { suffix }), 404);
    const row = ERROR_CODES[code];
    return renderPage(c, `${row.status} ${row.title}`, createElement(ErrorPage, { code }));
  });
}
