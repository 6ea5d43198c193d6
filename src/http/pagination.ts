import { z } from "@hono/zod-openapi";
import { ApiError } from "../errors/api-error";
import { decodeCursor, encodeCursor } from "./cursor";

export const DEFAULT_PAGE_SIZE = 25;

const MAX_PAGE_SIZE = 100;
const LIMIT_RANGE = `Must be an integer from 1 to ${MAX_PAGE_SIZE}.`;

/**
 * `limit`: an integer from 1 to 100, default 25; anything else is a 400 naming `limit` (docs/decisions.md
 * "Listing"), so the document's range is the server's and a caller's mistake is not served silently.
 */
export const LimitQuery = z
  .string()
  .regex(/^\d{1,3}$/, LIMIT_RANGE)
  .transform(Number)
  .pipe(z.number().int().min(1, LIMIT_RANGE).max(MAX_PAGE_SIZE, LIMIT_RANGE))
  .optional()
  .openapi({
    type: "integer",
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    description: `Page size: 1 to ${MAX_PAGE_SIZE} (400 naming limit outside that range). Default 25.`,
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
