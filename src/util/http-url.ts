import { z } from "@hono/zod-openapi";

/**
 * A public http(s) URL as the API accepts it (source_url, webhook, watermark_url): at most 2048 characters,
 * no credentials. The address rules (decisions.md §11) apply when it is fetched.
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
