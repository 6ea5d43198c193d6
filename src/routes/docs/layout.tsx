import type { Context } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import { bytesToBase64 } from "../../util/encoding";

/** The stylesheet of the /errors pages: inline, allowed by its hash, no fonts or images from elsewhere. */
const CSS = `
:root { color-scheme: light dark; --fg: #1d1d1f; --muted: #5f6368; --bg: #fff; --line: #d9dce1; --code: #f4f5f7; --accent: #0b57d0; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8eaed; --muted: #a0a4aa; --bg: #161719; --line: #33363b; --code: #202226; --accent: #8ab4f8; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 980px; margin: 0 auto; padding: 1rem; overflow-wrap: anywhere; }
a { color: var(--accent); }
h1 { font-size: 1.7rem; margin: .5rem 0; } h2 { font-size: 1.35rem; margin-top: 2.5rem; border-bottom: 1px solid var(--line); padding-bottom: .3rem; }
h3 { font-size: 1.1rem; margin: 0; } h4 { font-size: .95rem; margin: 1rem 0 .3rem; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
code, pre { font: 13.5px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
code { background: var(--code); padding: .05rem .3rem; border-radius: 4px; }
pre { background: var(--code); padding: .75rem; border-radius: 6px; overflow-x: auto; white-space: pre; }
pre code { background: none; padding: 0; }
nav ul { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .3rem .9rem; }
table { border-collapse: collapse; width: 100%; display: block; overflow-x: auto; }
th, td { text-align: left; vertical-align: top; border-top: 1px solid var(--line); padding: .4rem .5rem; }
.op { border: 1px solid var(--line); border-radius: 8px; padding: .9rem; margin: 1.2rem 0; }
.op-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: .5rem; }
.method { font: 700 12px/1 ui-monospace, monospace; padding: .3rem .45rem; border-radius: 4px; color: #fff; background: #5f6368; }
.method-get { background: #1e7e34; } .method-post { background: #0b57d0; } .method-delete { background: #b3261e; }
.muted { color: var(--muted); } .req { color: #b3261e; font-size: .8rem; font-weight: 600; }
ul.fields { list-style: none; margin: .3rem 0; padding-left: .9rem; border-left: 2px solid var(--line); }
ul.fields > li { margin: .45rem 0; }
ul.fields p, details p { margin: .15rem 0; font-size: .94rem; }
.facts { font-size: .85rem; color: var(--muted); }
details { margin: .4rem 0; } summary { cursor: pointer; }
.status { font-weight: 700; font-family: ui-monospace, monospace; }
.status-2, .status-3 { color: #1e7e34; } .status-4 { color: #b06000; } .status-5 { color: #b3261e; }
@media (max-width: 600px) { main { padding: .6rem; } .op { padding: .6rem; } pre { font-size: 12.5px; } }
`;

let cspPromise: Promise<string> | undefined;

/** The page's policy: nothing but this stylesheet; no script, frame, form, base or other origin. */
export function contentSecurityPolicy(): Promise<string> {
  cspPromise ??= crypto.subtle.digest("SHA-256", new TextEncoder().encode(CSS)).then((digest) => {
    const hash = bytesToBase64(new Uint8Array(digest));
    return [
      "default-src 'none'",
      `style-src 'sha256-${hash}'`,
      "img-src 'self' data:",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ].join("; ");
  });
  return cspPromise;
}

/** Paragraphs of a description, with `code` spans (the documents' only markup). */
export function Prose({ text }: { text?: string }) {
  if (!text) return null;
  return (
    <>
      {text.split(/\n\s*\n/).map((paragraph) => (
        <p>
          {paragraph
            .split("`")
            .map((part, index) => (index % 2 === 1 ? <code>{part}</code> : part.replace(/\s*\n\s*/g, " ")))}
        </p>
      ))}
    </>
  );
}

/** A whole HTML page with the shared stylesheet and its CSP header. */
export async function renderPage(c: Context, title: string, body: Child, status: 200 | 404 = 200) {
  c.header("Content-Security-Policy", await contentSecurityPolicy());
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "no-referrer");
  const page = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title}</title>
        <style dangerouslySetInnerHTML={{ __html: CSS }} />
      </head>
      <body>
        <main>{body}</main>
      </body>
    </html>
  );
  return c.html(html`<!doctype html>${page}`, status);
}
