import type { Context, Hono } from "hono";
import { useContext } from "hono/jsx";
import { ApiError } from "../../errors/api-error";
import { problemResponse } from "../../errors/handler";
import type { AppEnv } from "../../http/context";
import { Notice, PageContext, Pager, PostForm, Table, Time } from "../../ui/components";
import { formatBytes, formatNumber } from "../../ui/format";
import { query } from "../../ui/query-string";
import { quotaUsage } from "../../uploads/quota";
import { deleteUpload, grantDirectUpload, keyTarget, listAccountUploads } from "../../uploads/service";
import type { UploadView } from "../../uploads/view";
import { isUlid } from "../../util/ulid";
import type { ConsoleEnv } from "../context";
import { allowInCsp } from "../csp";
import { consolePaths } from "../paths";
import { renderConsole } from "../render";

type Ctx = Context<ConsoleEnv>;

const PAGE_SIZE = 50;
/** Uppy sends a file in PATCHes of this size: well under the 100 MB a Worker request may carry. */
const CHUNK_BYTES = 50 * 1024 * 1024;

function QuotaPanel(props: { usage: { incomplete: number; storedBytes: number }; c: Ctx }) {
  const limits = props.c.get("config").uploadQuota;
  return (
    <section class="panel" id="upload-quota">
      <h2>Quotas</h2>
      <p>
        <strong data-quota="incomplete">
          {formatNumber(props.usage.incomplete)} of {formatNumber(limits.maxIncomplete)}
        </strong>{" "}
        incomplete uploads at once (unused upload URLs included) ·{" "}
        <strong data-quota="bytes">
          {formatBytes(props.usage.storedBytes)} of {formatBytes(limits.maxStoredBytes)}
        </strong>{" "}
        stored
      </p>
      <p class="muted small">
        Complete uploads count with their size, incomplete ones with the size they declared. Expired and
        deleted uploads do not count; the API refuses a new upload past either limit (403
        UPLOAD_QUOTA_EXCEEDED).
      </p>
    </section>
  );
}

/** Uppy's Dashboard (src/console/browser/uploads-page.ts), its files from this Worker, by the page's nonce. */
function Uploader(props: { maxBytes: number }) {
  const { csrf, nonce } = useContext(PageContext);
  return (
    <section class="panel">
      <h2>Upload files</h2>
      <link rel="stylesheet" nonce={nonce} href={consolePaths.uppyStyles} />
      <div
        id="uploader"
        data-grant={consolePaths.grantUpload}
        data-csrf={csrf}
        data-max-size={String(props.maxBytes)}
        data-chunk-size={String(CHUNK_BYTES)}
        data-note={`Up to ${formatBytes(props.maxBytes)} per file. Each file is sent resumably, in 50 MiB pieces.`}
      >
        <noscript>
          <p class="muted">
            Uploading here needs JavaScript. Without it, upload with any tus client: see{" "}
            <a href="/docs#tag/uploads">the reference</a>.
          </p>
        </noscript>
      </div>
      <script nonce={nonce} src={consolePaths.uppyScript} />
      <script nonce={nonce} src={consolePaths.uploadsScript} />
    </section>
  );
}

function stateText(upload: UploadView) {
  if (upload.state !== "uploading" || !upload.size_bytes) return upload.state;
  return `uploading, ${Math.floor((upload.offset / upload.size_bytes) * 100)} %`;
}

function UploadList(props: { rows: UploadView[]; first?: string; next?: string }) {
  return (
    <section class="panel" id="upload-list">
      <h2>Your uploads</h2>
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
          { label: "" },
        ]}
        rows={props.rows.map((row) => ({
          id: row.id,
          cells: [
            <Time ms={Date.parse(row.created_at)} />,
            <code>{row.id}</code>,
            row.filename ? <span class="anywhere">{row.filename}</span> : <span class="muted">—</span>,
            row.size_bytes === null ? <span class="muted">—</span> : `${formatNumber(row.size_bytes)} B`,
            row.media_type ? <code>{row.media_type}</code> : <span class="muted">—</span>,
            stateText(row),
            <Time ms={Date.parse(row.expires_at)} />,
            <PostForm action={consolePaths.deleteUpload(row.id)} class="inline">
              <button type="submit" class="secondary" aria-label={`Delete upload ${row.id}`}>
                Delete
              </button>
            </PostForm>,
          ],
        }))}
      />
      <Pager first={props.first} next={props.next} />
    </section>
  );
}

/**
 * The account's live uploads (what GET /v1/uploads lists: pending direct URLs, uploading, complete), its quotas,
 * and Uppy's Dashboard, which uploads each file through a direct upload URL minted here for this origin by the
 * domain function POST /v1/uploads/direct calls: the browser never holds an API key.
 */
export function registerUploadPages(app: Hono<ConsoleEnv>) {
  app.get("/uploads", async (c) => {
    const accountId = c.get("user").accountId;
    const before = c.req.query("before");
    const now = Date.now();
    const [page, usage] = await Promise.all([
      listAccountUploads(
        c.env,
        accountId,
        { beforeId: before && isUlid(before) ? before : undefined, limit: PAGE_SIZE },
        now,
      ),
      quotaUsage(c.get("db"), accountId, now),
    ]);
    const last = page.rows.at(-1);
    const list = (
      <>
        <QuotaPanel usage={usage} c={c} />
        <UploadList
          rows={page.results}
          first={before ? consolePaths.uploads : undefined}
          next={page.hasNext && last ? `${consolePaths.uploads}${query({ before: last.id })}` : undefined}
        />
      </>
    );
    // The page's script refreshes these two sections when uploads end (browser/uploads-page.ts).
    if (c.req.query("part") === "list") {
      const value = { csrf: c.get("csrf"), nonce: c.get("nonce"), signedIn: true };
      return c.html(<PageContext.Provider value={value}>{list}</PageContext.Provider>);
    }
    // Uppy's tus requests go to this origin's direct upload URLs.
    allowInCsp(c, { "connect-src": ["'self'"] });
    return renderConsole(
      c,
      { title: "Uploads", tab: "uploads" },
      <>
        <h1>Uploads</h1>
        {c.req.query("done") === "deleted" ? <Notice kind="ok">Upload deleted.</Notice> : null}
        <p class="muted">
          Files to name as <code>source_upload_id</code> or <code>watermark_upload_id</code> once complete:
          sent here, with tus from your code (POST /v1/uploads), or from your users' browsers through direct
          upload URLs (POST /v1/uploads/direct). Uploads cost no credits; an incomplete one expires 24 h after
          it was created, a complete one is kept 7 days.
        </p>
        <Uploader maxBytes={c.get("config").uploadMaxBytes} />
        {list}
      </>,
    );
  });

  /**
   * The Dashboard's request for one file's upload URL (a form post with the page's CSRF token, sent by its
   * script): JSON `{id, url, expires_at}` as POST /v1/uploads/direct answers, for this origin, bounded by the
   * file's size; refusals (a quota) as problem+json, which the page shows.
   */
  app.post("/uploads/direct", async (c) => {
    const config = c.get("config");
    const size = Number(c.get("form").size);
    const origin = new URL(c.req.url).origin;
    try {
      const granted = await grantDirectUpload(
        { env: c.env, config },
        {
          accountId: c.get("user").accountId,
          corsOrigin: origin,
          maxSize: Number.isSafeInteger(size) && size >= 1 && size <= config.uploadMaxBytes ? size : null,
          webhook: null,
        },
        origin,
        Date.now(),
      );
      return c.json(granted, 201);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return problemResponse(c as unknown as Context<AppEnv>, error);
    }
  });

  app.post("/uploads/:uploadId/delete", async (c) => {
    const principal = { accountId: c.get("user").accountId, scopes: new Set(["write"]) };
    // Another account's upload, or none, is answered as not found (the same 404 as the API's).
    await deleteUpload(c.env, keyTarget(principal, c.req.param("uploadId")), Date.now());
    return c.redirect(`${consolePaths.uploads}?done=deleted`, 303);
  });
}
