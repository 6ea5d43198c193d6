import { z } from "@hono/zod-openapi";

/** The longest `Prefer: wait` honoured, in seconds; a longer one is clamped to it. */
export const MAX_PREFER_WAIT_SECONDS = 60;

/** One preference of a Prefer header: everything up to a comma that is not inside a quoted string. */
const PREFERENCE = /(?:[^,"]|"(?:[^"\\]|\\.)*")+/g;

/**
 * The seconds to hold an answer for the `wait` preference of a Prefer header (RFC 7240 §4.3), or undefined
 * when there is none to honour. Preferences are comma-separated, each `token [= value] *(; parameter)`, names
 * case-insensitive, values optionally quoted; only the first `wait` is considered (§2). As §2 asks of a
 * server, nothing here is an error: a wait above MAX_PREFER_WAIT_SECONDS is clamped to it, and one that asks
 * for no wait (`wait=0`) or cannot be read (a bare `wait`, `wait=abc`, `wait=1.5`, `wait=-3`) is ignored, as are
 * other preferences (return=minimal, respond-async…). Written here: the one npm package for RFC 7240
 * (parse-prefer-header) is a single CommonJS release that does not read delta-seconds either.
 */
export function preferredWait(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  for (const preference of header.match(PREFERENCE) ?? []) {
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
    // delta-seconds = 1*DIGIT (RFC 9111 §1.2.2); any length, so a huge value is clamped rather than refused.
    if (!/^\d+$/.test(value)) return undefined;
    const seconds = Math.min(Number(value), MAX_PREFER_WAIT_SECONDS);
    return seconds >= 1 ? seconds : undefined;
  }
  return undefined;
}

/** The request header of the routes that honour `Prefer: wait` (never refused: RFC 7240 §2). */
export const PreferWaitHeaders = z.object({
  prefer: z
    .string()
    .optional()
    .openapi({
      description: `RFC 7240 \`wait=<seconds>\`: the answer comes as soon as the task has ended (succeeded, failed or canceled), or after that many seconds with its current state, and carries \`Preference-Applied: wait=<seconds>\` with the seconds honoured. A wait above ${MAX_PREFER_WAIT_SECONDS} is honoured as ${MAX_PREFER_WAIT_SECONDS} (\`Preference-Applied: wait=${MAX_PREFER_WAIT_SECONDS}\`). \`wait=0\`, a \`wait\` without seconds or with a value that is not a whole number of seconds, and other preferences are ignored: the answer is immediate, without Preference-Applied. A Prefer header is never a reason for a 400.`,
      example: "wait=30",
    }),
});
