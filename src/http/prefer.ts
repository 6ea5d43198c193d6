import { z } from "@hono/zod-openapi";

/** The longest `Prefer: wait` honoured, in seconds. */
export const MAX_PREFER_WAIT_SECONDS = 60;

/**
 * The `wait` preference of a Prefer header (RFC 7240 §4.3): its seconds, undefined when the header does not
 * state one, or null when it states one that is not an integer from 1 to 60. Preferences are comma-separated,
 * each `token [= value] *(; parameter)`, names case-insensitive, values optionally quoted; the first `wait`
 * counts (§2). Other preferences (return=minimal, respond-async…) are ignored, as the RFC allows.
 */
export function preferredWait(header: string | undefined): number | undefined | null {
  if (header === undefined) return undefined;
  for (const preference of header.split(",")) {
    const [head = ""] = preference.split(";");
    const eq = head.indexOf("=");
    const name = (eq === -1 ? head : head.slice(0, eq)).trim().toLowerCase();
    if (name !== "wait") continue;
    const value =
      eq === -1
        ? ""
        : head
            .slice(eq + 1)
            .trim()
            .replace(/^"(.*)"$/, "$1");
    if (!/^\d{1,3}$/.test(value)) return null;
    const seconds = Number(value);
    return seconds >= 1 && seconds <= MAX_PREFER_WAIT_SECONDS ? seconds : null;
  }
  return undefined;
}

/** The request header of the routes that honour `Prefer: wait` (validated: a bad wait is a 400 naming Prefer). */
export const PreferWaitHeaders = z.object({
  prefer: z
    .string()
    .optional()
    .refine((value) => preferredWait(value) !== null, {
      message: `wait must be an integer number of seconds from 1 to ${MAX_PREFER_WAIT_SECONDS}.`,
    })
    .openapi({
      description: `RFC 7240 \`wait=<seconds>\` (1 to ${MAX_PREFER_WAIT_SECONDS}): the answer comes as soon as the task has ended (succeeded, failed or canceled), or after that many seconds with its current state; the response then carries \`Preference-Applied: wait=<seconds>\`. Without it the answer is immediate. Other preferences are ignored.`,
      example: "wait=30",
    }),
});
