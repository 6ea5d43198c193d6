import { z } from "@hono/zod-openapi";
import { OPERATIONS, type OperationType } from "@p6/contract/operations";

/** The type as a component name prefix for the OpenAPI document: video.extract-audio → VideoExtractAudio. */
export const schemaNameOf = (type: string) =>
  type.replace(/(^|[.-])(\w)/g, (_m, _sep: string, c: string) => c.toUpperCase());

const Iso = z.string().openapi({ format: "date-time" });
const EXAMPLE_ID = "01JD5Z8X4QK3M7R2T9V6W1Y0AB";

/**
 * An operation's synchronous result (decisions.md §5): `id` and `type`, for a file its signed `url` and
 * `expires_at`, then the registry's result fields, with an example true for this operation.
 */
export function publicResultOf(type: OperationType): z.ZodObject {
  const spec = OPERATIONS[type];
  const head = {
    id: z.string().openapi({ description: "ULID of the result (the request id).", example: EXAMPLE_ID }),
    type: z.literal(type),
  };
  const file =
    spec.gives === "json"
      ? {}
      : {
          url: z
            .string()
            .openapi({ format: "uri", description: "Signed, expiring URL of the produced file." }),
          expires_at: Iso.openapi({ description: "When the file and its URL expire." }),
        };
  const ext = spec.gives === "json" ? "" : (spec.example.result as { format: string }).format;
  const fileExample =
    spec.gives === "json"
      ? {}
      : {
          url: `https://api.example.com/files/01JD5Z8X4QK3M7R2T9V6W1Y0AC/${type.split(".")[1]}.${ext === "jpeg" ? "jpg" : ext}?expires=1767225600&signature=${"3f9a".repeat(16)}`,
          expires_at: "2026-01-01T00:00:00.000Z",
        };
  return z.object({ ...head, ...file, ...spec.result.shape }).openapi(`${schemaNameOf(type)}Result`, {
    example: { id: EXAMPLE_ID, type, ...fileExample, ...spec.example.result },
  });
}
