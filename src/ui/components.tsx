/**
 * The building blocks of the server-rendered pages (the operator dashboard, the customer console, the dev
 * mailbox): forms, fields, notices, times, tables that become cards on a phone, paging.
 */
import type { Child } from "hono/jsx";
import { createContext, useContext } from "hono/jsx";
import { timeParts } from "./format";
import { CSRF_FIELD, type FieldErrors } from "./forms";

/** What every component of one response may need: the form token and the CSP nonce. */
export const PageContext = createContext({ csrf: "", nonce: "", signedIn: false });

/** A state-changing form: always POST, always with the session's CSRF token. */
export function PostForm(props: { action: string; class?: string; children: Child }) {
  const { csrf } = useContext(PageContext);
  return (
    <form method="post" action={props.action} class={props.class}>
      <input type="hidden" name={CSRF_FIELD} value={csrf} />
      {props.children}
    </form>
  );
}

export function Field(props: {
  label: string;
  name: string;
  value?: string;
  type?: string;
  hint?: string;
  errors?: FieldErrors;
  required?: boolean;
  inputmode?: "numeric" | "text";
  autocomplete?: string;
}) {
  const error = props.errors?.[props.name];
  const id = `field-${props.name}`;
  return (
    <label for={id}>
      {props.label}
      {props.hint ? <span class="hint">{props.hint}</span> : null}
      <input
        id={id}
        name={props.name}
        type={props.type ?? "text"}
        value={props.value ?? ""}
        required={props.required}
        inputmode={props.inputmode}
        autocomplete={props.autocomplete ?? "off"}
        aria-invalid={error ? "true" : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      />
      {error ? (
        <span class="field-error" id={`${id}-error`}>
          {error}
        </span>
      ) : null}
    </label>
  );
}

export function Notice(props: { kind: "ok" | "error" | "warn"; children: Child }) {
  return (
    <div class={`notice ${props.kind}`} role={props.kind === "error" ? "alert" : "status"}>
      {props.children}
    </div>
  );
}

/** A summary of the form's problems above it, for screen readers and long forms. */
export function ErrorSummary(props: { errors?: FieldErrors }) {
  if (!props.errors || Object.keys(props.errors).length === 0) return null;
  return <Notice kind="error">Please correct the highlighted fields.</Notice>;
}

export function Time(props: { ms: number | null | undefined; empty?: string }) {
  if (props.ms === null || props.ms === undefined) return <span class="muted">{props.empty ?? "—"}</span>;
  const { date, time } = timeParts(props.ms);
  // Date and time each stay whole, so a narrow column breaks between them and nowhere else.
  return (
    <time datetime={new Date(props.ms).toISOString()}>
      <span class="nowrap">{date}</span> <span class="nowrap">{time} UTC</span>
    </time>
  );
}

export function Badge(props: { value: string }) {
  return <span class={`badge ${props.value}`}>{props.value}</span>;
}

/** A value to hand over (a new key, a webhook secret): read-only, selectable, with a copy button. */
export function SecretField(props: { id: string; label: string; value: string }) {
  return (
    <div class="secret">
      <input
        id={props.id}
        type="text"
        readonly
        value={props.value}
        aria-label={props.label}
        spellcheck={false}
        autocomplete="off"
      />
      <button type="button" class="secondary" data-copy={props.id}>
        Copy
      </button>
    </div>
  );
}

export type Column = { label: string; num?: boolean };
export type Row = { cells: Child[]; id?: string };

/**
 * A table that stays readable on a phone: each cell carries its column's label, so on a narrow screen every row
 * becomes a small card of "label value" lines (see the stylesheet) instead of a table wider than the screen.
 * `wide`: a table of many columns, cards below a tablet's width (960 px) already.
 */
export function Table(props: { columns: Column[]; rows: Row[]; empty?: string; wide?: boolean }) {
  if (props.rows.length === 0) return <p class="muted">{props.empty ?? "Nothing yet."}</p>;
  return (
    <div class="table-wrap">
      <table class={props.wide ? "cards wide" : "cards"}>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th class={column.num ? "num" : undefined}>{column.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr data-id={row.id}>
              {row.cells.map((cell, i) => (
                <td data-label={props.columns[i]?.label} class={props.columns[i]?.num ? "num" : undefined}>
                  {cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Keyset paging: back to the first page, or on to the next one. */
export function Pager(props: { first?: string; next?: string }) {
  if (!props.first && !props.next) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {props.first ? <a href={props.first}>← First page</a> : <span />}
      {props.next ? <a href={props.next}>Next page →</a> : <span />}
    </nav>
  );
}
