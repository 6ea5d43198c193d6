import { ERROR_CODES, type ErrorCode } from "../errors/codes";
import { ERROR_HELP } from "../errors/help";
import { WEBHOOK_VERIFICATION } from "./webhook-verification";

/** One line of Markdown. */
const cell = (text: string | number) => String(text).replace(/\s*\n\s*/g, " ");

const FENCE: Record<string, string> = { "TypeScript (Node)": "ts", Python: "python", Go: "go" };

/**
 * The guides of the API reference, as Markdown for the document's `info.description` (the renderer shows
 * each `##` heading as an entry of its navigation): authentication, errors with every code, rate
 * limits, idempotency, webhooks with verification in three languages, and how to run the code samples.
 */
export function guidesMarkdown(rateLimit: number, origin: string): string {
  // A list rather than a table: it stays readable in the reference's narrow text column and on a phone.
  const errorRows = Object.entries(ERROR_CODES).map(
    ([code, row]) =>
      `- **${row.status}** [\`${code}\`](/errors/${row.suffix}): ${cell(row.title)}. ${cell(
        ERROR_HELP[code as ErrorCode].meaning,
      )}`,
  );
  return `## Code samples

Every operation shows a curl command and the same call with the TypeScript client (\`@p6/media-client\`,
\`clients/typescript\` in the repository). Both read the key from \`$P6_API_KEY\` and name this instance (\`${origin}\`):

\`\`\`sh
export P6_API_KEY='p6_<key_id>:<secret>'   # npm run dev prints the dev account's key
\`\`\`

Their \`source_url\` is a small sample this service serves itself (\`${origin}/docs/samples/sample.mp4\`, a
32-second test pattern with a tone, and \`${origin}/docs/samples/sample.png\`), so a sample runs as shown.
Replace it with your media's public URL. Synchronous operations carry an \`Idempotency-Key\`: the curl sample
names one per operation (a repeat replays the stored result), the client sends a fresh one per call.

The TypeScript samples are ES modules with top-level await: save one as \`sample.mts\` in a project where
\`@p6/media-client\` is installed and run it with Node 22.18 or later (\`node sample.mts\`: Node strips the
types itself). The upload samples send the file \`in.mp4\` from the working directory (to try one:
\`curl -sSo in.mp4 ${origin}/docs/samples/sample.mp4\`) and name an upload by \`$UPLOAD_ID\` (the end of the
Location its creation answered) or a direct upload URL by \`$DIRECT_URL\` (the \`url\` that
\`POST /v1/uploads/direct\` answered). Their curl PATCH samples read the answer's headers with \`-w
'%header{…}'\` (curl 7.84 or later).

## Authentication

Every \`/v1\` request carries \`Authorization: Bearer p6_<key_id>:<secret>\`. Bearer is the only scheme. Keys
have scopes: \`read\` for GET and HEAD, \`write\` for every other method; both are granted by default. A
missing, malformed, unknown, revoked or expired key is answered 401 without saying which; a key without the
needed scope gets 403. Output file URLs need no key: their signature is the credential.

## Errors

Every error is an RFC 9457 problem (\`application/problem+json\`) with \`type\`, \`title\`, \`status\`,
\`code\`, \`detail\`, \`instance\` and \`request_id\`; a 400 adds \`errors\`, one item per invalid field
(\`code\`, \`field\`, \`message\`). Branch on \`code\`. Each \`type\` URI is a page explaining the error
([all of them](/errors)). Each code below links its page.

${errorRows.join("\n")}

## Rate limits

Each API key has its own limit: ${rateLimit} requests per minute unless the operator set another for the key,
counted over a sliding 60-second window. Every authenticated response carries the IETF fields
\`RateLimit-Policy: "default";q=${rateLimit};w=60\` (the quota and window) and \`RateLimit: "default";r=41;t=12\`
(requests remaining, and seconds until the window frees one). Over the limit the answer is 429
\`RATE_LIMIT_EXCEEDED\` with \`Retry-After\` in seconds: wait that long before retrying.

## Idempotency

Synchronous operations require an \`Idempotency-Key\` header (1–255 printable ASCII characters; a UUID per
logical request is a good choice). Repeating a request with the same key and body returns the stored result,
with \`Idempotent-Replayed: true\`, without charging again. The same key with a different request → 422
\`IDEMPOTENCY_KEY_REUSE\`; while the first request still runs → 409 \`RESOURCE_CONFLICT\`. Failures that
would not repeat (400, 401, 402, 403, 429, 5xx) are not stored, so the same key may be retried.
\`POST /v1/tasks\` takes an optional \`idempotency_key\` body field (at most 64 characters): a repeat returns
the original task with 200.

## Webhooks

A task created with a \`webhook\` URL gets a POST there when it ends: \`completed\`, \`failed\`, and
\`canceled\` when named in \`webhook_events_filter\`. The event is in the \`X-Webhook-Event\` header; the body
is the Task. Deliveries are at least once (deduplicate by \`webhook-id\`), retried with backoff up to 5
attempts until the receiver answers 2xx. The deliveries are listed under Webhooks in the navigation.

Signatures follow Standard Webhooks. With the account's secret \`whsec_<base64>\`: take the key as the
Base64-decoded part after \`whsec_\`; sign \`webhook-id + "." + webhook-timestamp + "." + raw body\` with
HMAC-SHA256; the delivery is authentic when any space-separated token of \`webhook-signature\` equals
\`v1,<base64 signature>\` (compare in constant time; during a secret rotation there is one token per active
secret). Reject a \`webhook-timestamp\` more than 5 minutes from now.

${WEBHOOK_VERIFICATION.map(
  (sample) =>
    `### Verification in ${sample.language}\n\n\`\`\`${FENCE[sample.language] ?? ""}\n${sample.code}\n\`\`\``,
).join("\n\n")}
`;
}
