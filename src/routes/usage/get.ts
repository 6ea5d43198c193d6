import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { errorResponses } from "../../errors/openapi";
import type { AppEnv } from "../../http/context";
import { validationError } from "../../http/validation";
import { usageByDay } from "../../usage/query";

/** The longest range one request may ask for, in days (both ends included). */
export const MAX_USAGE_DAYS = 92;
const DAY_MS = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A calendar date (YYYY-MM-DD, UTC) as the ms of its start; refuses 2026-02-30 and the like. */
const CalendarDate = z
  .string()
  .regex(DATE, "Must be a date: YYYY-MM-DD.")
  .transform((v, ctx) => {
    const ms = Date.parse(`${v}T00:00:00Z`);
    if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== v) {
      ctx.addIssue({ code: "custom", message: "Not a valid calendar date." });
      return z.NEVER;
    }
    return ms;
  });

const UsageQuerySchema = z.object({
  from: CalendarDate.optional().openapi({
    description: `First UTC day (inclusive), YYYY-MM-DD. Default: 29 days before \`to\` (30 days in all).`,
    example: "2026-11-01",
  }),
  to: CalendarDate.optional().openapi({
    description: `Last UTC day (inclusive), YYYY-MM-DD. Default: today. At most ${MAX_USAGE_DAYS} days from \`from\`.`,
    example: "2026-11-27",
  }),
});

const UsageSchema = z
  .object({
    from: z.string().openapi({ example: "2026-11-01" }),
    to: z.string().openapi({ example: "2026-11-27" }),
    results: z
      .array(
        z.object({
          date: z.string().openapi({ description: "UTC day, YYYY-MM-DD.", example: "2026-11-27" }),
          operation: z.string().openapi({ example: "video.trim" }),
          count: z.number().int().openapi({ description: "Operations billed that day.", example: 3 }),
          credits: z.number().int().openapi({ description: "Credits they cost.", example: 6 }),
        }),
      )
      .openapi({
        description: "One row per day and operation with any billed work, by date then operation.",
      }),
    total_count: z.number().int().openapi({ example: 3 }),
    total_credits: z.number().int().openapi({ example: 6 }),
  })
  .openapi("Usage");

const route = createRoute({
  method: "get",
  path: "/v1/usage",
  operationId: "getUsage",
  tags: ["Account"],
  summary: "Billed work per day and operation",
  description: `What the account was billed, per UTC day and operation: synchronous operations on the day they were charged, tasks on the day they were created unless refunded (a failed or canceled task costs nothing and is not counted; a queued or processing task counts, its credits reserved). A range of at most ${MAX_USAGE_DAYS} days; \`from\` after \`to\` or a longer range is a 400. Needs the read scope.`,
  request: { query: UsageQuerySchema },
  responses: {
    200: { description: "The usage.", content: { "application/json": { schema: UsageSchema } } },
    ...errorResponses(400, 401, 403, 405, 429, 500),
  },
});

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function registerGetUsage(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const to = query.to ?? today;
    const from = query.from ?? to - 29 * DAY_MS;
    // A bound the client left out is named with the value it defaulted to, so the refusal explains itself.
    const toSaid = query.to === undefined ? `\`to\` (not given: today, ${day(to)})` : `\`to\` (${day(to)})`;
    const fromSaid =
      query.from === undefined ? `\`from\` (not given: ${day(from)}, 29 days before \`to\`)` : `\`from\``;
    if (from > to) {
      throw validationError([
        { code: "invalid_range", field: "from", message: `Must not be after ${toSaid}.` },
      ]);
    }
    if ((to - from) / DAY_MS + 1 > MAX_USAGE_DAYS) {
      throw validationError([
        {
          code: "too_big",
          field: "to",
          message: `The range from ${fromSaid} to ${toSaid} may span at most ${MAX_USAGE_DAYS} days.`,
        },
      ]);
    }
    const results = await usageByDay(c.get("db"), c.get("principal").accountId, from, to + DAY_MS);
    return c.json(
      {
        from: day(from),
        to: day(to),
        results,
        total_count: results.reduce((sum, r) => sum + r.count, 0),
        total_credits: results.reduce((sum, r) => sum + r.credits, 0),
      },
      200,
    );
  });
}
