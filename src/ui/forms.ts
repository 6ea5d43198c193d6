/**
 * A posted form of the server-rendered pages (the operator dashboard's and the customer console's): how it is
 * checked before any work (origin, size, CSRF token) and how its fields are read and validated.
 */
import type { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors/api-error";
import type { AppEnv } from "../http/context";

export const CSRF_FIELD = "_csrf";
const MAX_FORM_BYTES = 64 * 1024;

type Form = Record<string, string | string[]>;

/** Field name → readable message, shown next to the field. */
export type FieldErrors = Record<string, string>;

/** The context of any pages whose forms `verifyFormWith` checks (the dashboard's, the console's). */
export type FormEnv = {
  Bindings: Env;
  Variables: AppEnv["Variables"] & { form: Form };
};

/** A browser says where a POST comes from; one from another origin is refused whatever it carries. */
function fromThisOrigin(c: Context) {
  const origin = c.req.header("origin");
  if (origin !== undefined) return origin === new URL(c.req.url).origin;
  const site = c.req.header("sec-fetch-site");
  return site === undefined || site === "same-origin" || site === "none";
}

function formError(message: string) {
  return new ApiError("PERMISSION_FORBIDDEN", message);
}

const limitBody = bodyLimit({
  maxSize: MAX_FORM_BYTES,
  onError: () => {
    throw new ApiError("REQUEST_BODY_TOO_LARGE", "The form is larger than 64 KiB.");
  },
});

/**
 * Every POST is a form post from this origin whose CSRF token `tokenMatches` accepts. Checked before any work;
 * the parsed form is then `c.var.form`.
 */
export function verifyFormWith<E extends FormEnv>(
  tokenMatches: (c: Context<E>, presented: unknown) => Promise<boolean>,
) {
  return createMiddleware<E>(async (c, outerNext) =>
    limitBody(c, async () => {
      if (!fromThisOrigin(c)) throw formError("The form was sent from another site; it was refused.");
      const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
      if (type !== "application/x-www-form-urlencoded" && type !== "multipart/form-data") {
        throw new ApiError("CONTENT_TYPE_UNSUPPORTED", "Only HTML form posts are accepted here.");
      }
      const body = await c.req.parseBody({ all: true });
      const form: Form = {};
      for (const [name, value] of Object.entries(body)) {
        const values = (Array.isArray(value) ? value : [value]).filter((v) => typeof v === "string");
        form[name] = values.length === 1 ? values[0]! : values;
      }
      if (!(await tokenMatches(c, form[CSRF_FIELD]))) {
        throw formError(
          "The form's security token is missing or out of date. Reload the page and try again.",
        );
      }
      (c as unknown as Context<FormEnv>).set("form", form);
      await outerNext();
    }),
  );
}

/** A single text field ("" when absent or sent twice). */
export function text(form: Form, name: string) {
  const value = form[name];
  return typeof value === "string" ? value : "";
}

/** A checkbox group: every checked value. */
export function list(form: Form, name: string) {
  const value = form[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** An optional whole number: empty → undefined; anything else is passed on for the schema to judge. */
export function optionalInt(form: Form, name: string): number | string | undefined {
  const value = text(form, name)
    .trim()
    .replace(/[,_\s]/g, "");
  if (value === "") return undefined;
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

/**
 * Validates a form against the admin API's own schema (one set of rules for both), reporting each invalid field
 * with the page's readable message for it rather than the schema's technical one.
 */
export function validate<S extends z.ZodType>(
  schema: S,
  input: unknown,
  messages: Record<string, string>,
): Validated<z.output<S>> {
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const field = String(issue.path[0] ?? "form");
    errors[field] ??= messages[field] ?? issue.message;
  }
  return { ok: false, errors };
}
