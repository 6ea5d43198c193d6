import { z } from "./zod.ts";

/** Field schemas several operations share (decisions.md §4). */

/** A time in seconds: 0 up to a week. */
export const Seconds = z
  .number()
  .min(0)
  .max(86_400 * 7);

/**
 * A public http(s) URL as the API accepts it (source_url, webhook, watermark_url): at most 2048 characters,
 * no credentials. The address rules (decisions.md §11, address-policy.ts) apply when it is fetched.
 */
export const HttpUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .refine((value) => {
    // Refinements run even when z.url has refused the value: an unparsable one is already reported.
    if (!URL.canParse(value)) return true;
    const url = new URL(value);
    return url.username === "" && url.password === "";
  }, "Must be a public http(s) URL without credentials.");

/** "#RRGGBB" or "#RRGGBBAA" (the alpha multiplies opacity). */
export const HexColor = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/, "Must be #RRGGBB or #RRGGBBAA.");

/** An upload's id (a ULID) as a request names it: source_upload_id, params.watermark_upload_id. */
export const UploadId = z
  .string()
  .regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, "Must be an upload id (a 26-character ULID).");
