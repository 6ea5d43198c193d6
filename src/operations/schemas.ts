import { z } from "@hono/zod-openapi";

/** Pieces shared by the operations' results (decisions.md §5); their params are @p6/contract/params. */

const Iso = z.string().openapi({ format: "date-time" });

/** Fields of every file-producing result. */
export const fileResultShape = {
  id: z
    .string()
    .openapi({ description: "ULID of the result (the request id).", example: "01JD5Z8X4QK3M7R2T9V6W1Y0AB" }),
  type: z.string().openapi({ example: "video.trim" }),
  url: z.string().openapi({ format: "uri", description: "Signed, expiring URL of the produced file." }),
  expires_at: Iso.openapi({ description: "When the file and its URL expire." }),
  format: z.string().openapi({ example: "mp4" }),
  size_bytes: z.number().int(),
};

export const dimensionsShape = { width: z.number().int(), height: z.number().int() };
