/**
 * The console's Uploads page in the browser (compiled by scripts/build-console-assets.ts, served at
 * /console/assets/uploads-page.js after /console/assets/uppy.js): Uppy's Dashboard in `#uploader`, uploading
 * each file through a direct upload URL (docs/decisions.md "Direct uploads") that the console mints for this
 * origin just before the file starts, with the page's CSRF token; the list below is refreshed when uploads end.
 * No API key ever reaches the page.
 */
import type { Body, Meta } from "@uppy/core";
import type * as Bundle from "./uppy.ts";

declare global {
  /** The global the Uppy bundle defines (uppy.ts). */
  var Uppy: typeof Bundle;
}

type Grant = { id: string; url: string; expires_at: string };

/** The detail of an error answer (problem+json), else its status. */
async function reason(response: Response) {
  if (response.headers.get("Content-Type")?.includes("json")) {
    const problem = (await response.json()) as { detail?: string; title?: string };
    return problem.detail ?? problem.title ?? `HTTP ${response.status}`;
  }
  return `The upload could not start (HTTP ${response.status}). Reload the page and try again.`;
}

/**
 * Replaces the list and the quota figures with the server's current ones (the page's `?part=list`: those two
 * sections alone, so no stylesheet or script of another response is parsed here).
 */
async function refresh() {
  const url = new URL(location.href);
  url.searchParams.set("part", "list");
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) return;
  const fresh = document.createElement("template");
  fresh.innerHTML = await response.text();
  for (const id of ["upload-list", "upload-quota"]) {
    const next = fresh.content.getElementById(id);
    if (next) document.getElementById(id)?.replaceWith(next);
  }
}

function mount(root: HTMLElement) {
  const { grant, csrf, maxSize, chunkSize } = root.dataset;
  if (!grant || !csrf) return;
  const uppy = new Uppy.Uppy<Meta, Body>({ restrictions: { maxFileSize: Number(maxSize) || null } })
    .use(Uppy.Dashboard, {
      inline: true,
      target: root,
      width: "100%",
      height: 320,
      proudlyDisplayPoweredByUppy: false,
      // Thumbnails are blob: images, which the page's Content-Security-Policy does not allow.
      disableThumbnailGenerator: true,
      note: root.dataset.note ?? null,
    })
    .use(Uppy.Tus, {
      // Replaced per file below; a file never starts without its own URL.
      endpoint: "",
      chunkSize: Number(chunkSize) || Number.POSITIVE_INFINITY,
      retryDelays: [0, 1000, 3000, 5000],
      // A direct URL serves one upload: a stored fingerprint would resume a finished one instead of sending
      // the file again. Within the page, a cut connection or Pause/Resume continues from the server's offset.
      storeFingerprintForResuming: false,
    });

  // One direct upload URL per file, minted when the file starts (a URL counts as an incomplete upload until
  // its upload is created): a retried file keeps the URL and the upload it already has.
  uppy.addPreProcessor(async (fileIDs) => {
    for (const id of fileIDs) {
      const file = uppy.getFile(id);
      if (file.tus?.endpoint) continue;
      const response = await fetch(grant, {
        method: "POST",
        credentials: "same-origin",
        headers: { Accept: "application/json" },
        body: new URLSearchParams({ _csrf: csrf, size: String(file.size ?? "") }),
      });
      if (!response.ok) {
        const message = await reason(response);
        uppy.info(message, "error", 10_000);
        throw new Error(message);
      }
      const granted = (await response.json()) as Grant;
      uppy.setFileState(id, { tus: { ...file.tus, endpoint: granted.url } });
    }
  });
  uppy.on("complete", () => {
    void refresh();
  });
}

const root = document.getElementById("uploader");
if (root) mount(root);
