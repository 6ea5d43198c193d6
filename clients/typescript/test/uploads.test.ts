import { createHash, randomBytes } from "node:crypto";
import { createReadStream, mkdtempSync, openAsBlob, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { build } from "esbuild";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Service, startService, unlimitedKey } from "../../../bench/lib/service.ts";
import { seededStateTemplate } from "../../../test/support/seeded-state.ts";
import { createUploads, P6ApiError, type Uploads, uploadDirect } from "../src/node.ts";

/**
 * The client's upload helpers (tus-js-client's Node build underneath) against the real service, started like
 * `npm run dev` on its own ports and state (19030-19032; 19034-19036 to seed the state once per machine when
 * the browser tests have not): files of several MiB in small chunks, cut and resumed, from a Blob, bytes and
 * streams, through a direct upload URL; every upload read back with GET …/content and compared by sha256.
 */

const MiB = 1024 * 1024;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let service: Service;
let key = "";
let uploads: Uploads;
let dir = "";

async function stored(id: string) {
  const response = await fetch(`${service.base}/v1/uploads/${id}/content`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "p6-client-uploads-"));
  // Ports from a base picked at random in 38000-39999 (two clones' npm test at once on one machine must not
  // share them): the service base, base + 1 and its inspector base + 2 (moved on by two, twice at most, when
  // taken); the seeding start, when the template must be made, base + 8 and + 9. Wrangler's inspector (PORT +
  // 442 unless told) in this range too, for the seeding start as well: base + 10.
  const base = 38_000 + Math.floor(Math.random() * 125) * 16;
  process.env.INSPECTOR_PORT = String(base + 10);
  service = await startService({
    port: base,
    enginePort: base + 1,
    inspectorPort: base + 2,
    readyTimeoutMs: 600_000,
    stateTemplate: await seededStateTemplate(base + 8),
  });
  // Every PATCH is a request the key's rate limit counts (60 a minute by default): small chunks need more.
  key = await unlimitedKey(service);
  uploads = createUploads({ baseUrl: service.base, apiKey: key });
}, 900_000);

afterAll(async () => {
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("uploads.upload (Node) against npm run dev", { timeout: 240_000 }, () => {
  it("sends a 6 MiB file (fs.openAsBlob) in 256 KiB PATCHes with progress; get, list and content agree", async () => {
    const bytes = randomBytes(6 * MiB + 123);
    const file = path.join(dir, "clip.bin");
    writeFileSync(file, bytes);
    const progress: number[] = [];
    const urls: string[] = [];
    const done = await uploads.upload(await openAsBlob(file), {
      filename: "clip ✂.bin",
      chunkSize: 256 * 1024,
      onProgress: (sent, total) => {
        expect(total).toBe(bytes.byteLength);
        progress.push(sent);
      },
      onUploadUrl: (url) => urls.push(url),
    });
    expect(done.url).toBe(`${service.base}/v1/uploads/${done.id}`);
    expect(urls).toEqual([done.url]);
    expect(progress.at(-1)).toBe(bytes.byteLength);
    expect(sha256(await stored(done.id))).toBe(sha256(bytes));
    expect(await uploads.get(done.id)).toMatchObject({
      id: done.id,
      state: "complete",
      size_bytes: bytes.byteLength,
      filename: "clip ✂.bin",
    });
    const page = await uploads.list({ limit: 100 });
    expect(page.results.map((u) => u.id)).toContain(done.id);
  });

  it("stops on its signal and resumes from the service's offset with `resume`", async () => {
    const bytes = randomBytes(5 * MiB);
    const controller = new AbortController();
    let url = "";
    const cut = uploads.upload(bytes, {
      chunkSize: 512 * 1024,
      signal: controller.signal,
      onUploadUrl: (u) => {
        url = u;
      },
      onProgress: (sent) => {
        if (sent > 2 * MiB) controller.abort(new Error("stopped by the test"));
      },
    });
    await expect(cut).rejects.toThrow("stopped by the test");
    const id = url.split("/").pop()!;
    const partial = await uploads.get(id);
    expect(partial.state).toBe("uploading");
    expect(partial.offset).toBeGreaterThan(0);
    expect(partial.offset).toBeLessThan(bytes.byteLength);

    const sent: number[] = [];
    const done = await uploads.upload(bytes, {
      resume: url,
      chunkSize: 512 * 1024,
      onProgress: (n) => sent.push(n),
    });
    expect(done.id).toBe(id);
    // It went on from where the service was, not from 0.
    expect(sent[0]).toBeGreaterThanOrEqual(partial.offset);
    expect(sha256(await stored(id))).toBe(sha256(bytes));
  });

  it("sends streams: a Node Readable, a web ReadableStream and a file's ReadStream", async () => {
    const bytes = randomBytes(3 * MiB + 7);
    const file = path.join(dir, "stream.bin");
    writeFileSync(file, bytes);
    const chunks = function* () {
      for (let at = 0; at < bytes.byteLength; at += 100_000) yield bytes.subarray(at, at + 100_000);
    };
    const sources = [
      Readable.from(chunks()),
      Readable.toWeb(Readable.from(chunks())) as ReadableStream<Uint8Array>,
      createReadStream(file),
    ];
    for (const source of sources) {
      const done = await uploads.upload(source, { size: bytes.byteLength, chunkSize: 1 * MiB });
      expect(sha256(await stored(done.id))).toBe(sha256(bytes));
    }
    await expect(uploads.upload(Readable.from(chunks()))).rejects.toThrow(/needs options.size/);
  });

  it("createDirect + uploadDirect: no key, once; past max_size and on the spent URL the service's problem", async () => {
    const bytes = randomBytes(MiB + 1);
    const direct = await uploads.createDirect({
      cors_origin: "https://app.example",
      max_size: bytes.byteLength,
    });
    expect(direct.url).toMatch(/\/v1\/direct-uploads\/[0-9A-Z]{26}\.[A-Za-z0-9_-]{43}$/);
    expect((await uploads.get(direct.id)).state).toBe("pending");
    const done = await uploadDirect(direct.url, new Blob([bytes]), {
      chunkSize: 256 * 1024,
      filename: "a.bin",
    });
    expect(done.id).toBe(direct.id);
    expect(sha256(await stored(direct.id))).toBe(sha256(bytes));

    const refused = Date.now();
    const again = await uploadDirect(direct.url, new Blob([bytes])).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(P6ApiError);
    expect((again as P6ApiError).status).toBe(409);
    // At once: a creation's 409 is not retried (tus-js-client's default retries a 409 for 9 s).
    expect(Date.now() - refused).toBeLessThan(3000);

    const small = await uploads.createDirect({ cors_origin: "https://app.example", max_size: 10 });
    const tooBig = await uploadDirect(small.url, new Uint8Array(11)).catch((error: unknown) => error);
    expect(tooBig).toBeInstanceOf(P6ApiError);
    expect((tooBig as P6ApiError).status).toBe(413);
    expect((tooBig as P6ApiError).problem.code).toBe("REQUEST_BODY_TOO_LARGE");

    const invalid = await uploads.createDirect({ cors_origin: "ftp://x" }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(P6ApiError);
    expect((invalid as P6ApiError).status).toBe(400);
  });

  it("lists by cursor, newest first, and deletes", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await uploads.upload(new Uint8Array([i, i, i]))).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await uploads.list({ limit: 2, cursor });
      seen.push(...page.results.map((u) => u.id));
      cursor = page.has_next ? page.next_cursor : undefined;
    } while (cursor);
    const order = seen.filter((id) => ids.includes(id));
    expect(order).toEqual([...ids].reverse());
    expect(new Set(seen).size).toBe(seen.length);

    await uploads.delete(ids[0]!);
    const gone = await uploads.get(ids[0]!).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(P6ApiError);
    expect((gone as P6ApiError).status).toBe(404);
  });
});

/**
 * The browsers' entry (src/index.ts) bundled as wrangler bundles a Worker and run in workerd, which has fetch but
 * no XMLHttpRequest: the Worker forwards the body it receives (a stream) and a Uint8Array to the service.
 */
describe("uploads.upload in a Worker (workerd) against npm run dev", { timeout: 240_000 }, () => {
  it("sends a request's body stream and bytes in 256 KiB PATCHes", async () => {
    const worker = `
      import { createUploads } from ${JSON.stringify(path.resolve(import.meta.dirname, "../src/index.ts"))};
      export default {
        async fetch(request, env) {
          const uploads = createUploads({ baseUrl: env.API_URL, apiKey: env.API_KEY });
          const size = Number(request.headers.get("content-length"));
          const progress = [];
          const fromStream = await uploads.upload(request.body, {
            size,
            chunkSize: 256 * 1024,
            filename: "from-a-worker.bin",
            onProgress: (sent) => progress.push(sent),
          });
          const fromBytes = await uploads.upload(new Uint8Array([1, 2, 3]), { filename: "three.bin" });
          return Response.json({ fromStream, fromBytes, progress });
        },
      };`;
    const bundle = await build({
      stdin: { contents: worker, resolveDir: import.meta.dirname, loader: "js" },
      bundle: true,
      format: "esm",
      platform: "neutral",
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["browser", "module", "main"],
      write: false,
      logLevel: "silent",
    });
    const mf = new Miniflare(
      convertV4MiniflareOptions({
        modules: true,
        script: bundle.outputFiles[0]!.text,
        compatibilityDate: "2025-09-01",
        bindings: { API_URL: service.base, API_KEY: key },
      }),
    );
    try {
      const bytes = randomBytes(2 * MiB + 5);
      const response = await mf.dispatchFetch("http://worker/", { method: "POST", body: bytes });
      const answer = (await response.json()) as {
        fromStream: { id: string; url: string };
        fromBytes: { id: string };
        progress: number[];
      };
      expect(answer.fromStream.url).toBe(`${service.base}/v1/uploads/${answer.fromStream.id}`);
      expect(answer.progress.at(-1)).toBe(bytes.byteLength);
      expect(sha256(await stored(answer.fromStream.id))).toBe(sha256(bytes));
      expect(await uploads.get(answer.fromStream.id)).toMatchObject({ filename: "from-a-worker.bin" });
      expect([...(await stored(answer.fromBytes.id))]).toEqual([1, 2, 3]);
    } finally {
      await mf.dispose();
    }
  });
});
