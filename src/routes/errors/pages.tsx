import { ERROR_CODES, type ErrorCode } from "../../errors/codes";
import { ERROR_HELP } from "../../errors/help";
import { Prose } from "../docs/layout";

/** The page a problem `type` URI names (RFC 9457 §3.1.1): what the error means and what to do about it. */
export function ErrorPage({ code }: { code: ErrorCode }) {
  const row = ERROR_CODES[code];
  const help = ERROR_HELP[code];
  return (
    <>
      <p>
        <a href="/errors">All errors</a> · <a href="/docs#errors">API reference</a>
      </p>
      <h1>
        {row.status} {row.title}
      </h1>
      <p>
        <code>code: "{code}"</code> · <code>status: {row.status}</code>
      </p>
      <Prose text={help.meaning} />
      <h2>Common causes</h2>
      <ul>
        {help.causes.map((cause) => (
          <li>
            <Prose text={cause} />
          </li>
        ))}
      </ul>
      <h2>What to do</h2>
      <ul>
        {help.actions.map((action) => (
          <li>
            <Prose text={action} />
          </li>
        ))}
      </ul>
      <h2>The response</h2>
      <p>
        The body is <code>application/problem+json</code>; quote its <code>request_id</code> (also in the{" "}
        <code>X-Request-Id</code> header) when asking for help.
      </p>
    </>
  );
}

export function ErrorIndex() {
  return (
    <>
      <p>
        <a href="/docs">API reference</a>
      </p>
      <h1>Errors</h1>
      <p>
        Every error response is an RFC 9457 problem whose <code>type</code> is one of these pages.
      </p>
      <ul>
        {Object.entries(ERROR_CODES).map(([code, row]) => (
          <li>
            <a href={`/errors/${row.suffix}`}>
              {row.status} {row.title}
            </a>{" "}
            <code>{code}</code> — {ERROR_HELP[code as ErrorCode].meaning}
          </li>
        ))}
      </ul>
    </>
  );
}

export function UnknownError({ suffix }: { suffix: string }) {
  return (
    <>
      <h1>No such error type</h1>
      <p>
        <code>{suffix}</code> is not an error type of this API. <a href="/errors">The list of errors</a>.
      </p>
    </>
  );
}
