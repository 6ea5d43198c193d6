import type { OperationView, Reference, ResponseView } from "../../docs/reference";
import type { FieldView, SchemaView } from "../../docs/schema";
import { WEBHOOK_VERIFICATION } from "../../docs/webhook-verification";
import { ERROR_CODES, type ErrorCode } from "../../errors/codes";
import { ERROR_HELP } from "../../errors/help";
import { Prose } from "./layout";

function Facts({ view }: { view: SchemaView }) {
  return view.facts.length > 0 ? <div class="facts">{view.facts.join(" · ")}</div> : null;
}

function Fields({ fields }: { fields: FieldView[] }) {
  if (fields.length === 0) return null;
  return (
    <ul class="fields">
      {fields.map((field) => (
        <li>
          <code>{field.name}</code> <span class="muted">{field.type}</span>
          {field.required ? <span class="req"> required</span> : null}
          <SchemaBody view={field} />
        </li>
      ))}
    </ul>
  );
}

/** A schema's description, rules, nested fields and union variants, recursively. */
function SchemaBody({ view }: { view: SchemaView }) {
  return (
    <>
      <Prose text={view.description} />
      <Facts view={view} />
      <Fields fields={view.fields} />
      {view.variants.map((variant) => (
        <details>
          <summary>
            {variant.label} <span class="muted">{variant.type}</span>
          </summary>
          <SchemaBody view={variant} />
        </details>
      ))}
    </>
  );
}

function Response({ response }: { response: ResponseView }) {
  return (
    <details open={response.status.startsWith("2")}>
      <summary>
        <span class={`status status-${response.status[0]}`}>{response.status}</span>{" "}
        {response.problem ? (
          <>
            problem+json:{" "}
            {response.errorCodes.map((code, index) => {
              const row = ERROR_CODES[code as ErrorCode];
              return (
                <>
                  {index > 0 ? ", " : ""}
                  {row ? <a href={`/errors/${row.suffix}`}>{code}</a> : <code>{code}</code>}
                </>
              );
            })}
          </>
        ) : (
          response.description
        )}
      </summary>
      {response.headers.length > 0 ? (
        <>
          <h4>Headers</h4>
          <ul class="fields">
            {response.headers.map((header) => (
              <li>
                <code>{header.name}</code> <span class="muted">{header.type}</span>
                <Prose text={header.description} />
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {response.problem ? (
        <p>
          A <a href="#errors">problem details</a> body.
        </p>
      ) : (
        response.content.map((content) => (
          <>
            <h4>{content.contentType}</h4>
            {content.schema ? <SchemaBody view={content.schema} /> : null}
          </>
        ))
      )}
    </details>
  );
}

function Operation({ op }: { op: OperationView }) {
  return (
    <section class="op" id={op.anchor}>
      <div class="op-head">
        <span class={`method method-${op.method.toLowerCase()}`}>{op.method}</span> <code>{op.path}</code>
      </div>
      <h3>{op.summary}</h3>
      <div class="facts">
        {op.operationId ? (
          <>
            operationId <code>{op.operationId}</code> ·{" "}
          </>
        ) : null}
        {op.authenticated ? "API key" : "no API key"}
      </div>
      <Prose text={op.description} />
      {op.parameters.length > 0 ? (
        <>
          <h4>Parameters</h4>
          <Fields
            fields={op.parameters.map((p) => ({
              ...p.schema,
              name: `${p.name} (${p.in})`,
              required: p.required,
              description: p.description ?? p.schema.description,
            }))}
          />
        </>
      ) : null}
      {op.body
        ? op.body.content.map((content) => (
            <>
              <h4>Request body · {content.contentType}</h4>
              <Prose text={op.body?.description} />
              {content.schema ? <SchemaBody view={content.schema} /> : null}
            </>
          ))
        : null}
      <h4>Responses</h4>
      {op.responses.map((response) => (
        <Response response={response} />
      ))}
      {op.curl ? (
        <>
          <h4>Example</h4>
          <pre>
            <code>{op.curl}</code>
          </pre>
        </>
      ) : null}
    </section>
  );
}

function ErrorTable() {
  return (
    <table>
      <thead>
        <tr>
          <th>Status</th>
          <th>code</th>
          <th>title</th>
          <th>type</th>
          <th>Meaning</th>
        </tr>
      </thead>
      <tbody>
        {Object.entries(ERROR_CODES).map(([code, row]) => (
          <tr>
            <td>{row.status}</td>
            <td>
              <code>{code}</code>
            </td>
            <td>{row.title}</td>
            <td>
              <a href={`/errors/${row.suffix}`}>{row.suffix}</a>
            </td>
            <td>{ERROR_HELP[code as ErrorCode].meaning}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const SECTIONS = [
  ["authentication", "Authentication"],
  ["errors", "Errors"],
  ["rate-limits", "Rate limits"],
  ["idempotency", "Idempotency"],
  ["webhooks", "Webhooks"],
] as const;

/** The API reference: guides first, then every operation of the document by tag. */
export function ReferencePage({ reference, rateLimit }: { reference: Reference; rateLimit: number }) {
  return (
    <>
      <h1>{reference.title}</h1>
      <p class="muted">
        Version {reference.version} · OpenAPI 3.1 document: <a href="/v1/openapi.json">/v1/openapi.json</a>
      </p>
      <Prose text={reference.description} />
      <nav aria-label="Contents">
        <ul>
          {SECTIONS.map(([id, title]) => (
            <li>
              <a href={`#${id}`}>{title}</a>
            </li>
          ))}
          {reference.tags.map((tag) => (
            <li>
              <a href={`#tag-${tag.name.toLowerCase()}`}>{tag.name}</a>
            </li>
          ))}
        </ul>
      </nav>

      <h2 id="authentication">Authentication</h2>
      <p>
        Every <code>/v1</code> request carries{" "}
        <code>Authorization: Bearer p6_&lt;key_id&gt;:&lt;secret&gt;</code>. Bearer is the only scheme. Keys
        have scopes: <code>read</code> for GET and HEAD, <code>write</code> for every other method; both are
        granted by default. A missing, malformed, unknown, revoked or expired key is answered 401 without
        saying which; a key without the needed scope gets 403. Output file URLs need no key: their signature
        is the credential.
      </p>
      <ul>
        {reference.securitySchemes.map((scheme) => (
          <li>
            <code>{scheme.name}</code>: {scheme.scheme}
            {scheme.format ? (
              <>
                {" "}
                (<code>{scheme.format}</code>)
              </>
            ) : null}
            {scheme.description ? ` — ${scheme.description}` : ""}
          </li>
        ))}
      </ul>

      <h2 id="errors">Errors</h2>
      <p>
        Every error is an RFC 9457 problem (<code>application/problem+json</code>) with <code>type</code>,{" "}
        <code>title</code>, <code>status</code>, <code>code</code>, <code>detail</code>, <code>instance</code>{" "}
        and <code>request_id</code>; a 400 adds <code>errors</code>, one item per invalid field (
        <code>code</code>, <code>field</code>, <code>message</code>). Branch on <code>code</code>. Each{" "}
        <code>type</code> URI is a page explaining the error (<a href="/errors">all of them</a>).
      </p>
      <ErrorTable />

      <h2 id="rate-limits">Rate limits</h2>
      <p>
        Each API key has its own limit: {rateLimit} requests per minute unless the operator set another for
        the key, counted over a sliding 60-second window. Every authenticated response carries the IETF fields{" "}
        <code>RateLimit-Policy: "default";q={rateLimit};w=60</code> (the quota and window) and{" "}
        <code>RateLimit: "default";r=41;t=12</code> (requests remaining, and seconds until the window frees
        one). Over the limit the answer is 429 <code>RATE_LIMIT_EXCEEDED</code> with <code>Retry-After</code>{" "}
        in seconds: wait that long before retrying.
      </p>

      <h2 id="idempotency">Idempotency</h2>
      <p>
        Synchronous operations require an <code>Idempotency-Key</code> header (1–255 printable ASCII
        characters; a UUID per logical request is a good choice). Repeating a request with the same key and
        body returns the stored result, with <code>Idempotent-Replayed: true</code>, without charging again.
        The same key with a different request → 422 <code>IDEMPOTENCY_KEY_REUSE</code>; while the first
        request still runs → 409 <code>RESOURCE_CONFLICT</code>. Failures that would not repeat (400, 401,
        402, 403, 429, 5xx) are not stored, so the same key may be retried. <code>POST /v1/tasks</code> takes
        an optional <code>idempotency_key</code> body field (at most 64 characters): a repeat returns the
        original task with 200.
      </p>

      <h2 id="webhooks">Webhooks</h2>
      <p>
        A task created with a <code>webhook</code> URL gets a POST there when it ends: <code>completed</code>,{" "}
        <code>failed</code>, and <code>canceled</code> when named in <code>webhook_events_filter</code>. The
        event is in the <code>X-Webhook-Event</code> header; the body is the Task. Deliveries are at least
        once (deduplicate by <code>webhook-id</code>), retried with backoff up to 5 attempts until the
        receiver answers 2xx.
      </p>
      <p>
        Signatures follow Standard Webhooks. With the account's secret <code>whsec_&lt;base64&gt;</code>: take
        the key as the Base64-decoded part after <code>whsec_</code>; sign{" "}
        <code>webhook-id + "." + webhook-timestamp + "." + raw body</code> with HMAC-SHA256; the delivery is
        authentic when any space-separated token of <code>webhook-signature</code> equals{" "}
        <code>v1,&lt;base64 signature&gt;</code> (compare in constant time; during a secret rotation there is
        one token per active secret). Reject a <code>webhook-timestamp</code> more than 5 minutes from now.
      </p>
      {reference.webhooks.map((op) => (
        <Operation op={op} />
      ))}
      {WEBHOOK_VERIFICATION.map((sample) => (
        <>
          <h4>Verification in {sample.language}</h4>
          <pre>
            <code>{sample.code}</code>
          </pre>
        </>
      ))}

      {reference.tags.map((tag) => (
        <>
          <h2 id={`tag-${tag.name.toLowerCase()}`}>{tag.name}</h2>
          <Prose text={tag.description} />
          <nav aria-label={`${tag.name} operations`}>
            <ul>
              {tag.operations.map((op) => (
                <li>
                  <a href={`#${op.anchor}`}>
                    {op.method} {op.path}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          {tag.operations.map((op) => (
            <Operation op={op} />
          ))}
        </>
      ))}
    </>
  );
}
