import type { Hono } from "hono";
import { query } from "../../dashboard/paths";
import { Pager, Table, Time } from "../../dashboard/views/components";
import { formatNumber } from "../../dashboard/views/format";
import { listUploads } from "../../uploads/store";
import type { ConsoleEnv } from "../context";
import { CONSOLE } from "../paths";
import { renderConsole } from "../render";

const PAGE_SIZE = 50;
export const UPLOADS_PATH = `${CONSOLE}/uploads`;

const STATES: Record<string, string> = {
  uploading: "uploading",
  complete: "complete",
  expired: "expired",
  deleted: "deleted",
};

/** The account's tus uploads (src/uploads), newest first: read-only; uploads are made and deleted by the API. */
export function registerUploadPages(app: Hono<ConsoleEnv>) {
  app.get("/uploads", async (c) => {
    const before = Number(c.req.query("before"));
    const page = await listUploads(
      c.get("db"),
      c.get("user").accountId,
      PAGE_SIZE + 1,
      Number.isSafeInteger(before) && before > 0 ? before : undefined,
    );
    const rows = page.slice(0, PAGE_SIZE);
    const next =
      page.length > PAGE_SIZE
        ? `${UPLOADS_PATH}${query({ before: String(rows.at(-1)!.createdAt) })}`
        : undefined;
    return renderConsole(
      c,
      { title: "Uploads", tab: "uploads" },
      <>
        <h1>Uploads</h1>
        <p class="muted">
          Files sent with POST /v1/uploads (tus), usable as <code>source_upload_id</code> or{" "}
          <code>watermark_upload_id</code> once complete. Uploads cost no credits; an incomplete one expires
          24 h after it was created, a complete one is kept 7 days.
        </p>
        <section class="panel">
          <Table
            empty="No uploads yet."
            columns={[
              { label: "Created" },
              { label: "Upload id" },
              { label: "File" },
              { label: "Size", num: true },
              { label: "Type" },
              { label: "State" },
              { label: "Expires" },
            ]}
            rows={rows.map((row) => ({
              id: row.id,
              cells: [
                <Time ms={row.createdAt} />,
                <code>{row.id}</code>,
                row.filename ?? <span class="muted">—</span>,
                `${formatNumber(row.sizeBytes)} B`,
                row.mediaType ? <code>{row.mediaType}</code> : <span class="muted">—</span>,
                STATES[row.state] ?? row.state,
                <Time ms={row.state === "deleted" ? null : row.expiresAt} />,
              ],
            }))}
          />
          <Pager first={c.req.query("before") ? UPLOADS_PATH : undefined} next={next} />
        </section>
      </>,
    );
  });
}
