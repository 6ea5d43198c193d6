import { z } from "@hono/zod-openapi";
import { ApiError } from "../errors/api-error";
import { decodeCursor, encodeCursor } from "./cursor";

export const DEFAULT_PAGE_SIZE = 25;

const MAX_PAGE_SIZE = 100;

/**
 * `limit`: an integer, default 25, clamped to 1..100 (interface.md: "values outside are clamped"). The
 * document says so in words, not as minimum/maximum: a schema range would declare 0 or 500 refused, and the
 * server serves them (docs/decisions.md "Listing").
 */
export const LimitQuery = z
  .string()
  .regex(/^-?\d+$/, "Must be an integer.")
  .transform((v) => Math.min(MAX_PAGE_SIZE, Math.max(1, Number(v))))
  .optional()
  .openapi({
    type: "integer",
    format: "int64",
    description: `Page size, default 25; values outside 1..${MAX_PAGE_SIZE} are clamped (0 gives 1 result, 500 gives ${MAX_PAGE_SIZE}).`,
    example: 25,
  });

export const CursorQuery = z
  .string()
  .optional()
  .openapi({ description: "Opaque cursor: next_cursor of the previous page." });

export const PageQuerySchema = z.object({ cursor: CursorQuery, limit: LimitQuery });

/** The keyset position a cursor stands for; 400 on a cursor we did not make. */
export function pagePosition(query: { cursor?: string; limit?: number }) {
  const beforeId = query.cursor === undefined || query.cursor === "" ? undefined : decodeCursor(query.cursor);
  if (beforeId === null)
    throw ApiError.invalid("cursor", "The cursor is malformed; pass next_cursor unchanged.");
  return { beforeId, limit: query.limit ?? DEFAULT_PAGE_SIZE };
}

export function pageFields(rows: { id: string }[], hasNext: boolean) {
  return { has_next: hasNext, next_cursor: hasNext ? encodeCursor(rows.at(-1)!.id) : "" };
}
