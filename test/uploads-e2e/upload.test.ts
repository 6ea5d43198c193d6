import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveBinaries } from "../../containers/ffmpeg/src/config.ts";
import {
  type FixtureServer,
  startFixtureServer,
} from "../../containers/ffmpeg/test/support/fixture-server.ts";
import { api, key, sha256, storedBytes, tusUpload, uploadWhole } from "./client.ts";
import { largeVideo } from "./media.ts";

/**
 * Children run asynchronously: a blocked event loop misses the service closing its idle keep-alive sockets, and
 * the next request went out on a closed one ("other side closed"; test/browser/upload-samples.test.ts).
 */
const run = promisify(execFile);

/**
 * The "Must show" for uploads, against `npm run dev` (global-setup.ts): tus-js-client (from npm) sends a
 * generated ≈ 300 MB video, is interrupted at about 40 %, resumes from the offset HEAD reports, the stored
 * bytes read back equal the file, and a video.trim task on source_upload_id then succeeds with an exact output.
 * Also: an operation on source_upload_id answers what the same operation on a URL of the same bytes answers.
 */

const CHUNK = 50 * 1024 * 1024; // under a Worker request's 100 MB body limit
const { ffmpeg, ffprobe } = resolveBinaries(process.env);

let fixtures: FixtureServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "p6-uploads-e2e-"));
  fixtures = await startFixtureServer(dir);
});

afterAll(async () => {
  await fixtures?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function probeFrames(file: string) {
  const { stdout: out } = await run(ffprobe, [
    ...["-v", "error", "-select_streams", "v:0", "-count_frames"],
    ...["-show_entries", "stream=nb_read_frames,width,height:format=duration", "-of", "json", file],
  ]);
  const parsed = JSON.parse(out) as {
    streams: { nb_read_frames: string; width: number; height: number }[];
    format: { duration: string };
  };
  return {
    frames: Number(parsed.streams[0]!.nb_read_frames),
    ...parsed.streams[0]!,
    duration: Number(parsed.format.duration),
  };
}

/** One MD5 per decoded video frame, in order (ffmpeg's framemd5), for frame-exact comparisons. */
async function frameHashes(file: string, args: string[] = []) {
  const { stdout } = await run(
    ffmpeg,
    ["-v", "error", ...args, "-i", file, "-map", "0:v:0", "-f", "framemd5", "-"],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return stdout
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => line.split(",").pop()!.trim());
}

describe("uploads against npm run dev", () => {
  it("tus-js-client: ≈300 MB, cut at ~40 %, resumed from HEAD's offset; video.trim on source_upload_id is exact", async () => {
    const file = largeVideo(18);
    const bytes = readFileSync(file);
    expect(bytes.byteLength).toBeGreaterThan(280 * 1024 * 1024);

    // First attempt: aborted once the client has sent about 40 %.
    let uploadUrl = "";
    await new Promise<void>((resolve, reject) => {
      const upload = tusUpload(bytes, {
        chunkSize: CHUNK,
        metadata: { filename: "large.mp4", filetype: "video/mp4" },
        onError: reject,
        onSuccess: () => reject(new Error("the upload finished before it was interrupted")),
        onProgress: (sent, total) => {
          if (!uploadUrl && sent >= total * 0.4) {
            uploadUrl = upload.url!;
            void upload.abort().then(() => resolve());
          }
        },
      });
      upload.start();
    });
    expect(uploadUrl).toMatch(/\/v1\/uploads\/[0-9A-Z]{26}$/);

    // The server kept what arrived: HEAD says where to resume (settled once the cut PATCH has committed).
    let offset = -1;
    for (let i = 0; i < 50; i++) {
      const head = await fetch(uploadUrl, {
        method: "HEAD",
        headers: { Authorization: `Bearer ${key()}`, "Tus-Resumable": "1.0.0" },
      });
      expect(head.status).toBe(200);
      const now = Number(head.headers.get("upload-offset"));
      if (now === offset) break;
      offset = now;
      await new Promise((r) => setTimeout(r, 200));
    }
    console.log(
      `interrupted at ${offset} of ${bytes.byteLength} bytes (${((offset / bytes.byteLength) * 100).toFixed(1)} %)`,
    );
    expect(offset).toBeGreaterThan(bytes.byteLength * 0.25);
    expect(offset).toBeLessThan(bytes.byteLength * 0.5);

    // Resumed by a new client from the upload's URL: its first PATCH starts at HEAD's offset.
    const patchOffsets: number[] = [];
    await new Promise<void>((resolve, reject) => {
      const upload = tusUpload(bytes, {
        chunkSize: CHUNK,
        metadata: { filename: "large.mp4", filetype: "video/mp4" },
        uploadUrl,
        onError: reject,
        onSuccess: () => resolve(),
        onBeforeRequest: (req) => {
          if (req.getMethod() === "PATCH") patchOffsets.push(Number(req.getHeader("Upload-Offset")));
        },
      });
      upload.start();
    });
    expect(patchOffsets[0]).toBe(offset);

    const id = uploadUrl.split("/").pop()!;
    expect(sha256(await storedBytes(id))).toBe(sha256(bytes));
    const view = (await (await api(`/v1/uploads/${id}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({
      state: "complete",
      size_bytes: bytes.byteLength,
      offset: bytes.byteLength,
      media_type: "video/mp4",
      filename: "large.mp4",
    });

    // video.trim on the upload: [10, 12) of a 25 fps source is exactly its 50 frames.
    const created = await api("/v1/tasks", {
      method: "POST",
      headers: { Prefer: "wait=60" },
      body: JSON.stringify({
        type: "video.trim",
        source_upload_id: id,
        params: { start: 10, duration: 2, mode: "accurate" },
      }),
    });
    expect(created.status).toBe(201);
    let task = (await created.json()) as {
      id: string;
      status: string;
      outputs: { url: string }[];
      error: unknown;
    };
    for (let i = 0; i < 120 && (task.status === "queued" || task.status === "processing"); i++) {
      task = (await (
        await api(`/v1/tasks/${task.id}`, { headers: { Prefer: "wait=30" } })
      ).json()) as typeof task;
    }
    expect(task.error).toBeNull();
    expect(task.status).toBe("succeeded");
    const output = path.join(dir, "trimmed.mp4");
    writeFileSync(output, Buffer.from(await (await fetch(task.outputs[0]!.url)).arrayBuffer()));
    const probed = await probeFrames(output);
    expect(probed).toMatchObject({ frames: 50, width: 1280, height: 720 });
    expect(probed.duration).toBeCloseTo(2, 1);
    // The output's frames are the source's 250..299 (pts 10.00 … 11.96 s), re-encoded, so compared by PSNR
    // (a lossy re-encode is not bit-exact) against the source cut at 10 s, and against the same cut one frame
    // off either way: under per-frame noise, only the right alignment matches closely.
    const psnrAgainst = async (start: number) => {
      const { stderr } = await run(ffmpeg, [
        ...["-hide_banner", "-i", output, "-ss", start.toFixed(2), "-t", "2", "-i", file],
        ...["-lavfi", "[0:v][1:v]psnr", "-f", "null", "-"],
      ]);
      return Number(/average:([0-9.]+|inf)/.exec(stderr)?.[1]);
    };
    const aligned = await psnrAgainst(10);
    const early = await psnrAgainst(9.96);
    const late = await psnrAgainst(10.04);
    console.log(
      `trim output vs source: PSNR ${aligned} dB at 10 s, ${early} dB a frame early, ${late} dB a frame late`,
    );
    expect(aligned).toBeGreaterThan(early + 3);
    expect(aligned).toBeGreaterThan(late + 3);
  }, 900_000);

  it("an operation on source_upload_id answers what the same operation on a URL of the same bytes answers", async () => {
    const small = path.join(dir, "small.mp4");
    await run(ffmpeg, [
      ...["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi"],
      ...["-i", "sine=frequency=220:sample_rate=44100", "-t", "3", "-c:v", "libx264", "-c:a", "aac", small],
    ]);
    const bytes = readFileSync(small);
    const id = await uploadWhole(bytes, { chunkSize: CHUNK });
    const probe = async (body: object, idem: string) => {
      const response = await api("/v1/video/probe", {
        method: "POST",
        headers: { "Idempotency-Key": idem },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      const { id: _requestId, ...rest } = (await response.json()) as Record<string, unknown>;
      return rest;
    };
    const viaUpload = await probe({ source_upload_id: id }, `probe-upload-${id}`);
    const viaUrl = await probe({ source_url: fixtures.url("/media/small.mp4") }, `probe-url-${id}`);
    expect(viaUpload).toEqual(viaUrl);

    const trim = async (body: object, idem: string) => {
      const response = await api("/v1/video/trim", {
        method: "POST",
        headers: { "Idempotency-Key": idem },
        body: JSON.stringify({ ...body, params: { start: 1, duration: 1, mode: "fast" } }),
      });
      expect(response.status).toBe(200);
      const result = (await response.json()) as { url: string; size_bytes: number };
      const out = path.join(dir, `${idem}.mp4`);
      writeFileSync(out, Buffer.from(await (await fetch(result.url)).arrayBuffer()));
      return { size: result.size_bytes, frames: await frameHashes(out) };
    };
    const a = await trim({ source_upload_id: id }, `trim-upload-${id}`);
    const b = await trim({ source_url: fixtures.url("/media/small.mp4") }, `trim-url-${id}`);
    expect(a.frames.length).toBeGreaterThan(0);
    expect(a.frames).toEqual(b.frames);
  }, 300_000);
});
