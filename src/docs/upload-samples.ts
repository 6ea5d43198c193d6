import type { CodeSample } from "./code-samples.ts";

/**
 * The reference's samples of the upload routes, written out rather than generated from the document: a tus
 * request's meaning is in its headers and in the request before it (the Upload-Length of the file about to be
 * sent, the Location a creation answered, the offset the last PATCH reached), which no schema example gives.
 * Each runs as shown (test/browser/upload-samples.test.ts runs every one against `npm run dev`) given
 * `$P6_API_KEY` and, where a sample names them, a file `in.mp4` in the working directory, `$UPLOAD_ID` (an
 * upload's id: the end of its Location) or `$DIRECT_URL` (the `url` POST /v1/uploads/direct answered). The
 * TypeScript samples use the client's upload helpers (clients/typescript: tus-js-client underneath) and are ES
 * modules with top-level await: Node ≥ 22.18 runs them as they are (`node sample.mts`).
 */

/** A shell command over several lines. */
const command = (...lines: string[]) => lines.join(" \\\n  ");

/** base64 of "in.mp4", the name the samples give their file in Upload-Metadata. */
const FILENAME_METADATA = "Upload-Metadata: filename aW4ubXA0";
const FILE_NOTE = `# in.mp4: the file to upload (to try one: curl -sSo in.mp4 '<origin>/docs/samples/sample.mp4')`;
const UPLOAD_ID_NOTE = "# UPLOAD_ID: an upload's id (the end of the Location its creation answered)";
const DIRECT_URL_NOTE =
  "# DIRECT_URL: the url POST /v1/uploads/direct answered (its secret is the credential)";
const KEY = `-H "Authorization: Bearer $P6_API_KEY"`;
const TUS = "-H 'Tus-Resumable: 1.0.0'";
const OCTETS = "-H 'Content-Type: application/offset+octet-stream'";

/** Creation of an upload of in.mp4 with no bytes yet, its URL (Location) into $url. */
const createForPatch = (endpoint: string, withKey: boolean) =>
  `url=$(${command(
    `curl -sSf -X POST ${endpoint}`,
    ...(withKey ? [KEY] : []),
    TUS,
    `-H "Upload-Length: $(wc -c < in.mp4)"`,
    `-H '${FILENAME_METADATA}'`,
    "-o /dev/null -w '%header{location}')",
  )}`;

/**
 * in.mp4's bytes to $url in 50 MiB PATCHes (a Worker request carries at most 100 MB), each from the offset the
 * previous one answered; a failed one stops the loop, and HEAD on $url tells where to go on from.
 */
const patchLoop = (withKey: boolean) =>
  [
    "offset=0",
    "split -b 50M in.mp4 in.mp4.part.",
    "for part in in.mp4.part.*; do",
    `  offset=$(${command(
      `curl -sSf -X PATCH "$url"`,
      ...(withKey ? [KEY] : []),
      TUS,
      `-H "Upload-Offset: $offset"`,
      OCTETS,
      `--data-binary "@$part" -o /dev/null -w '%header{upload-offset}') || break`,
    ).replace(/\n {2}/g, "\n    ")}`,
    "done",
    "rm in.mp4.part.*",
    'echo "$url: $offset bytes stored"',
  ].join("\n");

const clientHeader = (origin: string, imports: string[]) =>
  [
    ...imports,
    `import { createUploads } from "@p6/media-client";`,
    "",
    `const uploads = createUploads({ baseUrl: ${JSON.stringify(origin)}, apiKey: process.env.P6_API_KEY! });`,
    "",
    "",
  ].join("\n");

/** The browser's side of a direct upload, run here by Node with a file from disk. */
const directTypescript = (options: string[]) =>
  [
    `import { openAsBlob } from "node:fs";`,
    `import { uploadDirect } from "@p6/media-client";`,
    "",
    "// DIRECT_URL: the url your server got from POST /v1/uploads/direct, handed to the page on its cors_origin.",
    '// In that page, pass the File of an <input type="file"> instead of a file from disk.',
    'const file = await openAsBlob("in.mp4");',
    "const { id } = await uploadDirect(process.env.DIRECT_URL!, file, {",
    ...options.map((line) => `  ${line}`),
    "});",
    "console.log(id); // the id POST /v1/uploads/direct answered: your server's source_upload_id",
  ].join("\n");

/** A CORS preflight of a direct upload URL, as the browser on `cors_origin` sends it before its request. */
const preflight = (url: string, method: string, headers: string) =>
  [
    DIRECT_URL_NOTE,
    command(
      `curl -i -X OPTIONS ${url}`,
      "-H 'Origin: https://app.example'",
      `-H 'Access-Control-Request-Method: ${method}'`,
      `-H 'Access-Control-Request-Headers: ${headers}'`,
    ),
  ].join("\n");

/** curl, then TypeScript. */
const pair = (curl: string, typescript: string, label = "TypeScript client"): CodeSample[] => [
  { lang: "Shell", label: "curl", source: curl },
  { lang: "TypeScript", label, source: typescript },
];

/** The samples of each upload route, by operationId, for the instance at `origin`. */
export function uploadSamples(origin: string): Record<string, CodeSample[]> {
  const uploadsUrl = `'${origin}/v1/uploads'`;
  const uploadUrl = (suffix = "") => `"${origin}/v1/uploads/$UPLOAD_ID${suffix}"`;
  const fileNote = FILE_NOTE.replace("<origin>", origin);
  const client = (imports: string[], body: string[]) => `${clientHeader(origin, imports)}${body.join("\n")}`;
  return {
    discoverUploads: pair(
      ["# What the tus server supports; no key needed", `curl -i -X OPTIONS ${uploadsUrl}`].join("\n"),
      [
        `const response = await fetch(${JSON.stringify(`${origin}/v1/uploads`)}, { method: "OPTIONS" });`,
        'for (const name of ["Tus-Version", "Tus-Extension", "Tus-Max-Size", "Tus-Checksum-Algorithm"])',
        "  console.log(name, response.headers.get(name));",
      ].join("\n"),
      "fetch",
    ),
    createUpload: pair(
      [
        fileNote,
        "# Creation with upload: the whole file in this request (at most 100 MB; larger: PATCH in chunks)",
        command(
          `curl -i -X POST ${uploadsUrl}`,
          KEY,
          TUS,
          `-H "Upload-Length: $(wc -c < in.mp4)"`,
          `-H '${FILENAME_METADATA}'`,
          OCTETS,
          "--data-binary @in.mp4",
        ),
      ].join("\n"),
      client(
        [`import { openAsBlob } from "node:fs";`],
        [
          "// in.mp4: the file to upload. Resumable: 50 MiB PATCHes, each retried from the service's offset.",
          'const { id } = await uploads.upload(await openAsBlob("in.mp4"), {',
          '  filename: "in.mp4",',
          '  onProgress: (sent, total) => console.log(sent, "of", total, "bytes"),',
          "});",
          "console.log(id); // name it as source_upload_id",
        ],
      ),
    ),
    patchUpload: pair(
      [
        fileNote,
        "# The upload is created with its length and no bytes; its URL (Location) takes the PATCHes (curl ≥ 7.84).",
        createForPatch(uploadsUrl, true),
        patchLoop(true),
      ].join("\n"),
      client(
        [`import { openAsBlob } from "node:fs";`],
        [
          "// The client creates the upload and PATCHes chunkSize bytes at a time from the service's offset.",
          'const { id, url } = await uploads.upload(await openAsBlob("in.mp4"), {',
          "  chunkSize: 50 * 1024 * 1024,",
          '  onUploadUrl: (url) => console.log("to resume after a crash:", url), // then `resume: url`',
          "});",
          "console.log(id, url);",
        ],
      ),
    ),
    listUploads: pair(
      command(`curl '${origin}/v1/uploads?limit=20'`, KEY),
      client(
        [],
        [
          "// Newest first; while has_next, pass next_cursor as `cursor` for the next page.",
          "const page = await uploads.list({ limit: 20 });",
          "for (const upload of page.results) console.log(upload.id, upload.state, upload.size_bytes);",
        ],
      ),
    ),
    createDirectUpload: pair(
      [
        "# A one-time tus URL for a browser on cors_origin: hand it `url`, keep `id`",
        command(
          `curl -X POST '${origin}/v1/uploads/direct'`,
          KEY,
          "-H 'Content-Type: application/json'",
          `-d '{"cors_origin":"https://app.example","max_size":104857600}'`,
        ),
      ].join("\n"),
      client(
        [],
        [
          "const direct = await uploads.createDirect({",
          '  cors_origin: "https://app.example", // the page that will upload',
          "  max_size: 100 * 1024 * 1024,",
          "});",
          "console.log(direct.url, direct.id, direct.expires_at);",
        ],
      ),
    ),
    headUpload: pair(
      [UPLOAD_ID_NOTE, command(`curl -I ${uploadUrl()}`, KEY, TUS)].join("\n"),
      client(
        [],
        [
          "// The same offset as JSON.",
          "const upload = await uploads.get(process.env.UPLOAD_ID!);",
          'console.log(upload.offset, "of", upload.size_bytes, "bytes");',
        ],
      ),
    ),
    getUpload: pair(
      [UPLOAD_ID_NOTE, command(`curl ${uploadUrl()}`, KEY)].join("\n"),
      client([], ["console.log(await uploads.get(process.env.UPLOAD_ID!));"]),
    ),
    deleteUpload: pair(
      [UPLOAD_ID_NOTE, command(`curl -i -X DELETE ${uploadUrl()}`, KEY, TUS)].join("\n"),
      client([], ["await uploads.delete(process.env.UPLOAD_ID!);"]),
    ),
    downloadUpload: pair(
      [
        UPLOAD_ID_NOTE,
        command(`curl -sSf -o out.mp4 ${uploadUrl("/content")}`, KEY),
        "sha256sum out.mp4   # the same as your file's",
      ].join("\n"),
      [
        `import { createHash } from "node:crypto";`,
        `import { createP6Client, P6ApiError } from "@p6/media-client";`,
        "",
        `const p6 = createP6Client({ baseUrl: ${JSON.stringify(origin)}, apiKey: process.env.P6_API_KEY! });`,
        "",
        'const { data, error, response } = await p6.GET("/v1/uploads/{id}/content", {',
        "  params: { path: { id: process.env.UPLOAD_ID! } },",
        '  parseAs: "arrayBuffer",',
        "});",
        "if (error) throw new P6ApiError(response.status, error);",
        'console.log(createHash("sha256").update(new Uint8Array(data)).digest("hex"));',
      ].join("\n"),
    ),
    discoverDirectUpload: pair(
      preflight('"$DIRECT_URL"', "POST", "tus-resumable, upload-length, upload-metadata"),
      directTypescript([
        "chunkSize: 5 * 1024 * 1024,",
        "onProgress: (sent, total) => console.log(sent, total),",
      ]),
    ),
    startDirectUpload: pair(
      [
        fileNote,
        DIRECT_URL_NOTE,
        "# No key; the URL takes one upload (a second creation: 409)",
        command(
          `curl -i -X POST "$DIRECT_URL"`,
          TUS,
          `-H "Upload-Length: $(wc -c < in.mp4)"`,
          `-H '${FILENAME_METADATA}'`,
          OCTETS,
          "--data-binary @in.mp4",
        ),
      ].join("\n"),
      directTypescript(['filename: "in.mp4",']),
    ),
    preflightDirectUpload: pair(
      preflight('"$DIRECT_URL/upload"', "PATCH", "tus-resumable, upload-offset, content-type"),
      directTypescript(["chunkSize: 5 * 1024 * 1024,"]),
    ),
    headDirectUpload: pair(
      [
        DIRECT_URL_NOTE,
        "# Its upload's offset, once the browser created it",
        command(`curl -I "$DIRECT_URL/upload"`, TUS),
      ].join("\n"),
      directTypescript([
        'resume: process.env.DIRECT_URL + "/upload", // HEAD first, then PATCH from its offset',
      ]),
    ),
    patchDirectUpload: pair(
      [
        fileNote,
        DIRECT_URL_NOTE,
        "# The creation through the URL, then PATCHes to the Location it answers (curl ≥ 7.84); no key",
        createForPatch('"$DIRECT_URL"', false),
        patchLoop(false),
      ].join("\n"),
      directTypescript(["chunkSize: 5 * 1024 * 1024,"]),
    ),
  };
}
