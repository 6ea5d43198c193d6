import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningService, startService } from "./service.ts";

/**
 * The reference's samples of the upload routes (src/docs/upload-samples.ts), each run exactly as /docs shows it
 * against the service started like `npm run dev`: the curl ones by bash, the TypeScript ones by the Node running
 * this test (22: `node sample.mts`, types stripped) with `@p6/media-client` resolving to the client's sources.
 * Given what a sample names: `$P6_API_KEY`, `in.mp4` in the working directory (fetched by the command the samples'
 * note gives), `$UPLOAD_ID`, `$DIRECT_URL`. What each one did is checked by its own route: the stored bytes read
 * back with GET …/content and compared by sha256 with in.mp4, the upload's state, 404 after a delete.
 * Ports (issue 37's helper range): the service 19040-19041 (its inspector 19042).
 */

type Sample = { lang: string; label: string; source: string };
type Doc = { paths: Record<string, Record<string, { operationId?: string; "x-codeSamples"?: Sample[] }>> };

const root = path.resolve(import.meta.dirname, "../..");
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const ID = /[0-9A-HJKMNP-TV-Z]{26}/;

describe("the upload routes' reference samples, run as shown", () => {
  let service: RunningService;
  let dir = "";
  let key = "";
  let samples: Map<string, { curl: string; typescript: string }>;
  let file: Buffer;

  /** bash runs the sample in the working directory: its output (stdout and stderr), and its exit status. */
  // Run asynchronously: a blocked event loop misses the service closing an idle keep-alive socket, and the
  // next fetch went out on the closed one ("other side closed").
  function curl(source: string, env: Record<string, string> = {}) {
    return run("bash", ["-c", source], source, env);
  }

  async function run(command: string, args: string[], source: string, env: Record<string, string>) {
    const result = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        command,
        args,
        { cwd: dir, env: { ...process.env, P6_API_KEY: key, ...env }, encoding: "utf8", timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({
            status: error ? (typeof error.code === "number" ? error.code : null) : 0,
            stdout,
            stderr,
          }),
      );
    });
    expect(result.status, `${source}\n${result.stdout}${result.stderr}`).toBe(0);
    return result.stdout;
  }

  /** Node runs the sample as sample.mts in the working directory; its stdout. */
  function node(source: string, env: Record<string, string> = {}) {
    writeFileSync(path.join(dir, "sample.mts"), source);
    return run(process.execPath, ["sample.mts"], source, env);
  }

  const api = (pathname: string, init: RequestInit = {}) =>
    fetch(`${service.base}${pathname}`, {
      ...init,
      headers: { Authorization: `Bearer ${key}`, ...init.headers },
    });

  /** The upload's stored bytes equal in.mp4's, and it is complete. */
  async function storedIsTheFile(id: string) {
    const upload = (await (await api(`/v1/uploads/${id}`)).json()) as { state: string; size_bytes: number };
    expect(upload).toMatchObject({ state: "complete", size_bytes: file.byteLength });
    const content = await api(`/v1/uploads/${id}/content`);
    expect(content.status).toBe(200);
    expect(sha256(new Uint8Array(await content.arrayBuffer()))).toBe(sha256(file));
  }

  async function directUrl() {
    const response = await api("/v1/uploads/direct", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ cors_origin: "https://app.example" }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; url: string };
  }

  beforeAll(async () => {
    // `npm run dev` starts wrangler's inspector on PORT + 442 unless told: keep it in this test's range.
    // Ports at random in 36000-37999 (the service base to base + 5, its inspector base + 6): two clones' npm
    // test at once on one machine must not share them.
    const base = 36_000 + Math.floor(Math.random() * 250) * 8;
    process.env.INSPECTOR_PORT = String(base + 6);
    service = await startService(base);
    const created = await fetch(`${service.base}/admin/v1/accounts`, {
      method: "POST",
      headers: { Authorization: `Bearer ${service.adminToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "upload samples", credits: 100 }),
    });
    expect(created.status).toBe(201);
    const account = ((await created.json()) as { id: string }).id;
    // The samples and the checks here make more than the default 60 requests a minute.
    const minted = await fetch(`${service.base}/admin/v1/accounts/${account}/keys`, {
      method: "POST",
      headers: { Authorization: `Bearer ${service.adminToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "samples", rate_limit_per_minute: 10_000 }),
    });
    expect(minted.status).toBe(201);
    key = ((await minted.json()) as { key: string }).key;

    const doc = (await (await fetch(`${service.base}/docs/openapi.json`)).json()) as Doc;
    samples = new Map();
    for (const [route, item] of Object.entries(doc.paths)) {
      if (!/^\/v1\/(uploads|direct-uploads)\b/.test(route)) continue;
      for (const operation of Object.values(item)) {
        const [curlSample, typescriptSample] = operation["x-codeSamples"] ?? [];
        samples.set(operation.operationId!, {
          curl: curlSample!.source,
          typescript: typescriptSample!.source,
        });
      }
    }

    // The working directory: in.mp4 fetched as the samples' note says, and the client for `import`.
    dir = mkdtempSync(path.join(os.tmpdir(), "p6-upload-samples-"));
    const note = samples.get("createUpload")!.curl.split("\n")[0]!;
    const fetchCommand = /to try one: (curl .*)\)$/.exec(note)![1]!;
    await curl(fetchCommand);
    file = readFileSync(path.join(dir, "in.mp4"));
    expect(file.byteLength).toBeGreaterThan(100_000);
    // The package as a consumer imports it (its "node" entry), over the client's sources (Node strips their
    // types: they are not under node_modules once the symlink is resolved).
    const pkg = path.join(dir, "node_modules/@p6/media-client");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      path.join(pkg, "package.json"),
      JSON.stringify({ name: "@p6/media-client", type: "module", exports: { ".": "./src/node.ts" } }),
    );
    symlinkSync(path.join(root, "clients/typescript/src"), path.join(pkg, "src"));
  }, 600_000);

  afterAll(() => {
    service?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("every upload route has a written-out curl and TypeScript sample (none generated from the schema)", () => {
    expect([...samples.keys()].sort()).toEqual([
      "createDirectUpload",
      "createUpload",
      "deleteUpload",
      "discoverDirectUpload",
      "discoverUploads",
      "downloadUpload",
      "getUpload",
      "headDirectUpload",
      "headUpload",
      "listUploads",
      "patchDirectUpload",
      "patchUpload",
      "preflightDirectUpload",
      "startDirectUpload",
    ]);
    for (const { curl: sample } of samples.values()) {
      expect(sample).not.toContain("314572800");
      expect(sample).not.toContain("01JD5Z8X4QK3M7R2T9V6W1Y0AB");
    }
  });

  it("OPTIONS /v1/uploads: tus discovery", async () => {
    const { curl: shell, typescript } = samples.get("discoverUploads")!;
    expect(await curl(shell)).toMatch(/^tus-version: 1\.0\.0\r?$/im);
    expect(await node(typescript)).toMatch(/^Tus-Checksum-Algorithm sha1,sha256$/m);
  });

  it("POST /v1/uploads: the file in the creation (curl) and through the client; the bytes stored are the file", async () => {
    const { curl: shell, typescript } = samples.get("createUpload")!;
    const out = await curl(shell);
    expect(out).toMatch(/^HTTP\/1\.1 201/);
    const location = /^location: (\S+)\r?$/im.exec(out)![1]!;
    expect(location).toMatch(new RegExp(`^${service.base}/v1/uploads/${ID.source}$`));
    await storedIsTheFile(location.split("/").pop()!);
    const filename = (await (await api(`/v1/uploads/${location.split("/").pop()}`)).json()) as {
      filename: string;
    };
    expect(filename.filename).toBe("in.mp4");

    const printed = (await node(typescript)).trim().split("\n");
    expect(printed.at(-2)).toBe(`${file.byteLength} of ${file.byteLength} bytes`);
    await storedIsTheFile(printed.at(-1)!);
  });

  it("PATCH /v1/uploads/{id}: curl's creation then PATCH loop (one part as shown, three in 64 KiB), the client", async () => {
    const { curl: shell, typescript } = samples.get("patchUpload")!;
    for (const source of [shell, shell.replace("split -b 50M", "split -b 64K")]) {
      const out = (await curl(source)).trim();
      const match = new RegExp(`^${service.base}/v1/uploads/(${ID.source}): (\\d+) bytes stored$`).exec(out);
      expect(match, out).not.toBeNull();
      expect(Number(match![2])).toBe(file.byteLength);
      await storedIsTheFile(match![1]!);
    }
    expect(shell.replace("split -b 50M", "split -b 64K")).not.toBe(shell);
    const [id, url] = (await node(typescript)).trim().split("\n").at(-1)!.split(" ");
    expect(url).toBe(`${service.base}/v1/uploads/${id}`);
    await storedIsTheFile(id!);
  });

  it("GET, HEAD, GET …/content, the list and DELETE on $UPLOAD_ID", async () => {
    const created = await curl(samples.get("createUpload")!.curl);
    const id = /^location: \S+\/(\S+?)\r?$/im.exec(created)![1]!;
    const env = { UPLOAD_ID: id };

    const get = samples.get("getUpload")!;
    expect(JSON.parse(await curl(get.curl, env))).toMatchObject({
      id,
      state: "complete",
      size_bytes: file.byteLength,
    });
    expect(await node(get.typescript, env)).toContain(`state: 'complete'`);

    const head = samples.get("headUpload")!;
    expect(await curl(head.curl, env)).toMatch(new RegExp(`^upload-offset: ${file.byteLength}\\r?$`, "im"));
    expect((await node(head.typescript, env)).trim()).toBe(`${file.byteLength} of ${file.byteLength} bytes`);

    const content = samples.get("downloadUpload")!;
    expect((await curl(content.curl, env)).trim()).toBe(`${sha256(file)}  out.mp4`);
    expect((await node(content.typescript, env)).trim()).toBe(sha256(file));

    const list = samples.get("listUploads")!;
    const page = JSON.parse(await curl(list.curl)) as { results: { id: string }[] };
    expect(page.results[0]!.id).toBe(id);
    expect((await node(list.typescript)).split("\n")[0]).toBe(`${id} complete ${file.byteLength}`);

    const remove = samples.get("deleteUpload")!;
    expect(await curl(remove.curl, env)).toMatch(/^HTTP\/1\.1 204/);
    expect((await api(`/v1/uploads/${id}`)).status).toBe(404);
    const another = /^location: \S+\/(\S+?)\r?$/im.exec(await curl(samples.get("createUpload")!.curl))![1]!;
    await node(remove.typescript, { UPLOAD_ID: another });
    expect((await api(`/v1/uploads/${another}`)).status).toBe(404);
  });

  it("POST /v1/uploads/direct mints a URL (curl and client) that takes the file with no key", async () => {
    const { curl: shell, typescript } = samples.get("createDirectUpload")!;
    const minted = JSON.parse(await curl(shell)) as { id: string; url: string };
    expect(minted.url).toContain(`/v1/direct-uploads/${minted.id}.`);
    const [url, id] = (await node(typescript)).trim().split(" ");
    expect(url).toContain(`/v1/direct-uploads/${id}.`);
    for (const direct of [minted, { id: id!, url: url! }]) {
      const start = samples.get("startDirectUpload")!;
      expect(await curl(start.curl, { DIRECT_URL: direct.url, P6_API_KEY: "" })).toMatch(/^HTTP\/1\.1 201/);
      await storedIsTheFile(direct.id);
      // Once: the same command again is refused.
      expect(await curl(start.curl, { DIRECT_URL: direct.url, P6_API_KEY: "" })).toMatch(/^HTTP\/1\.1 409/);
    }
  });

  it("the direct URL's preflights answer its cors_origin", async () => {
    const { url } = await directUrl();
    for (const operation of ["discoverDirectUpload", "preflightDirectUpload"]) {
      const out = await curl(samples.get(operation)!.curl, { DIRECT_URL: url });
      expect(out).toMatch(/^HTTP\/1\.1 204/);
      expect(out).toMatch(/^access-control-allow-origin: https:\/\/app\.example\r?$/im);
    }
  });

  it("the browser's side (uploadDirect, run by Node) of each direct-upload route stores the file", async () => {
    for (const operation of [
      "discoverDirectUpload",
      "startDirectUpload",
      "preflightDirectUpload",
      "patchDirectUpload",
    ]) {
      const direct = await directUrl();
      const printed = await node(samples.get(operation)!.typescript, {
        DIRECT_URL: direct.url,
        P6_API_KEY: "",
      });
      expect(printed.trim().split("\n").at(-1)).toBe(direct.id);
      await storedIsTheFile(direct.id);
    }
  });

  it("PATCH and HEAD on a direct URL's upload: curl's creation and PATCH loop; HEAD mid-way; resume from it", async () => {
    const patch = samples.get("patchDirectUpload")!;
    const direct = await directUrl();
    const out = await curl(patch.curl.replace("split -b 50M", "split -b 64K"), {
      DIRECT_URL: direct.url,
      P6_API_KEY: "",
    });
    expect(out.trim()).toBe(`${direct.url}/upload: ${file.byteLength} bytes stored`);
    await storedIsTheFile(direct.id);

    // Half the file sent through a fresh URL; HEAD tells the offset; the client goes on from there.
    const half = await directUrl();
    const started = await fetch(half.url, {
      method: "POST",
      headers: {
        "Tus-Resumable": "1.0.0",
        "Upload-Length": String(file.byteLength),
        "Content-Type": "application/offset+octet-stream",
      },
      body: file.subarray(0, 100_000),
    });
    expect(started.status).toBe(201);
    const head = samples.get("headDirectUpload")!;
    const env = { DIRECT_URL: half.url, P6_API_KEY: "" };
    expect(await curl(head.curl, env)).toMatch(/^upload-offset: 100000\r?$/im);
    expect((await node(head.typescript, env)).trim()).toBe(half.id);
    await storedIsTheFile(half.id);
  });
});
